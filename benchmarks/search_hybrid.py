"""The hybrid search plugin: its quality beside the bm25 backend, its similarity threshold, and
its speed, on this machine.

Quality: ``shared/data/eval/toolbench`` and ``eval/metatool`` (natural-language requests), and
the dev sets listed in ``benchmarks/data/sets.json`` when they exist (keyword queries, with
negatives whose right answer is no tool). The backends are built as a user gets them, by a real
host with the plugin enabled (``tools.tool_search.backend: hybrid``); the bm25 figures are
those of the same run's lexical side, the bundled ``bm25`` backend. Each query is ranked once
with no threshold; every threshold is then applied to that ranking, as the backend does.

Speed: the 5,468 tools of ``shared/data/saas_openapi_catalog``: the first embedding into an
empty cache (tools per second of wall time, and per CPU second, since the cores are shared), a
second start over the warm cache (tools embedded: 0), and the query latency p50/p99 of keyword
queries, query embedding included, beside bm25's in the same run.

Prints markdown tables and, with ``--write``, puts them under "## Hybrid search" in
``docs/performance.md``. The plugin must be installed (``pip install torch==2.13.0`` first,
then ``pip install -e plugins/hermes-search-hybrid``).

    python benchmarks/search_hybrid.py [--write] [--metatool-step 1] [--cache DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from _report import write_section  # benchmarks/ is on the path of a script run from it

from hermes_core.config import Config
from hermes_core.host import Host
from hermes_core.paths import Environment
from hermes_core.search.backend import Admission, ToolDocument
from hermes_core.search.evaluation import (
    EvalQuery,
    catalog_documents,
    load_catalog,
    load_queries,
    percentile,
    score_rankings,
)

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
EVAL = SHARED / "eval"
SAAS = SHARED / "saas_openapi_catalog" / "catalog.json"
DEV_SETS = Path("benchmarks") / "data" / "sets.json"
THRESHOLDS = (None, 0.15, 0.2, 0.25, 0.3, 0.35)
ADMISSIONS: tuple[Admission, ...] = ("lenient", "off", "strict")
DEPTH = 10
# Keyword queries as a model writes them after reading a request (for the latency only).
KEYWORD_QUERIES = (
    "github create issue",
    "jira create issue",
    "github create pull request",
    "google calendar create event",
    "twilio send sms",
    "send email",
    "list repositories",
    "slack post message",
    "stripe refund charge",
    "delete a webhook",
    "upload file to storage bucket",
    "get user profile",
    "search tweets",
    "create invoice customer",
    "list open pull requests octocat/hello-world",
    "update dns record",
    "schedule a meeting tomorrow 3pm",
    "translate text to french",
    "what time is it in Tokyo",
    "add a comment to the ticket",
)


NOTES = """\
The backends are the plugin's defaults (dense weight 0.65, 50 candidates a side, min_similarity
0.25); "bm25" is the same run's bundled backend, the hybrid's lexical side. The admission mode
is the lexical side's; the dense side admits by the threshold, which is why `strict` (where bm25
alone finds nothing for 96-99% of the natural-language requests) still gets the dense ranking.
Each query is ranked once with no threshold, then every threshold is applied to that ranking as
the backend applies it. Rates are percentages; hit@k counts a positive query whose relevant
tools include one of the top k; negatives_no_match is the share of the queries for services
nobody has that get no tool at all.

The latencies are wall-clock medians over 20 keyword queries x 10 rounds on this machine's two
cores, shared with other work: the load average is printed beside them. Every timed hybrid
query is embedded (its vector is not remembered between calls); bm25 is timed in a loop of its
own. The first embedding is into an empty cache; "per CPU second" divides by the process's CPU
time, both cores counted (torch's threads spin while they wait for a core, so it too falls
when the machine is busy). The keyword dev sets are read from a checkout that has
`benchmarks/data/sets.json` (`--dev-root`).
"""


@dataclasses.dataclass(frozen=True)
class DevQuery:
    """A dev-set query: its relevant tools, or none when it is a negative."""

    query: str
    relevant: tuple[str, ...]
    negative: bool


def hybrid_backend(cache: Path, settings: dict[str, Any] | None = None) -> Any:
    """The backend a host builds for ``backend: hybrid``, its cache under ``cache``."""
    config = Config.model_validate(
        {
            "plugins": {"enabled": ["hybrid"], "entries": {"hybrid": settings or {}}},
            "tools": {"tool_search": {"backend": "hybrid"}},
        }
    )
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    env = Environment(
        home=home,
        cwd=home,
        variables={"HERMES_CACHE_DIR": str(cache), "HERMES_LOG_DIR": str(home / "logs")},
    )

    async def main() -> Any:
        async with Host(config, env) as host:
            return host.tool_search.backend

    return anyio.run(main)


def load_dev_sets(root: Path) -> list[tuple[str, Path, list[DevQuery]]]:
    """The dev sets of ``root/benchmarks/data/sets.json`` (none when it does not exist); its
    paths are relative to ``root``."""
    listing = root / DEV_SETS
    if not listing.is_file():
        return []
    found = []
    for item in json.loads(listing.read_text(encoding="utf-8")):
        catalog = (root / item["catalog"]).resolve()
        queries = []
        for line in (root / item["queries"]).read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                queries.append(
                    DevQuery(
                        entry["query"],
                        tuple(entry.get("relevant") or ()),
                        bool(entry.get("negative")),
                    )
                )
        found.append((item["name"], catalog, queries))
    return found


def documents_of(path: Path) -> list[ToolDocument]:
    """The search documents of a catalog file, less reserved bridge names."""
    reserved = {"tool_search", "tool_describe", "tool_call"}
    return [d for d in catalog_documents(load_catalog(path)) if d.name not in reserved]


Ranker = Callable[[str], list[tuple[str, float, bool]]]
"""A query's ranking: (name, similarity, exact) best first; similarity is NaN for bm25."""


def rankers(backend: Any, admission: Admission) -> dict[str, Ranker]:
    """The bm25 ranking (the hybrid's lexical side) and the hybrid one, for ``admission``."""

    def bm25(query: str) -> list[tuple[str, float, bool]]:
        return [
            (hit.name, float("nan"), False)
            for hit in backend.lexical.search(query, DEPTH, admission)
        ]

    def hybrid(query: str) -> list[tuple[str, float, bool]]:
        return [
            (t.name, t.similarity, t.exact) for t in backend.ranked(query, admission, depth=DEPTH)
        ]

    return {"bm25": bm25, "hybrid": hybrid}


def cut(ranking: list[tuple[str, float, bool]], threshold: float | None) -> list[str]:
    """The names the backend returns from ``ranking`` with ``min_similarity`` = ``threshold``."""
    kept = [
        name
        for name, similarity, exact in ranking
        if threshold is None or exact or not similarity < threshold  # NaN (bm25) is kept
    ]
    return kept[:DEPTH]


def eval_rows(
    name: str, backend: Any, queries: Sequence[EvalQuery]
) -> list[tuple[str, str, dict[str, float | int]]]:
    """recall@5, nDCG@10, no-match share per backend, admission and threshold."""
    rows = []
    for admission in ADMISSIONS:
        for label, rank in rankers(backend, admission).items():
            rankings = [rank(item.query) for item in queries]
            for threshold in (None,) if label == "bm25" else THRESHOLDS:
                scores = score_rankings(
                    queries, [cut(r, threshold) for r in rankings], tools=len(backend)
                )
                rows.append((name, _label(label, admission, threshold), scores))
            print(name, label, admission, file=sys.stderr, flush=True)
    return rows


def dev_rows(
    name: str, backend: Any, queries: Sequence[DevQuery]
) -> list[tuple[str, str, dict[str, float]]]:
    """hit@1, hit@5 over positives and the share of negatives with no match."""
    positives = [item for item in queries if not item.negative]
    negatives = [item for item in queries if item.negative]
    rows = []
    for admission in ADMISSIONS:
        for label, rank in rankers(backend, admission).items():
            ranked = {item.query: rank(item.query) for item in queries}
            for threshold in (None,) if label == "bm25" else THRESHOLDS:
                kept = {query: cut(r, threshold) for query, r in ranked.items()}

                def hit(k: int, kept: dict[str, list[str]] = kept) -> float:
                    found = sum(bool(set(q.relevant) & set(kept[q.query][:k])) for q in positives)
                    return round(100.0 * found / max(1, len(positives)), 2)

                empty = sum(not kept[item.query] for item in negatives)
                rows.append(
                    (
                        name,
                        _label(label, admission, threshold),
                        {
                            "hit@1": hit(1),
                            "hit@5": hit(5),
                            "negatives_no_match": round(100.0 * empty / max(1, len(negatives)), 2),
                        },
                    )
                )
            print(name, label, admission, file=sys.stderr, flush=True)
    return rows


def _label(backend: str, admission: Admission, threshold: float | None) -> str:
    if backend == "bm25":
        return f"bm25, {admission}"
    floor = "no threshold" if threshold is None else f"min_similarity {threshold}"
    return f"hybrid, {admission}, {floor}"


def table(rows: Sequence[tuple[str, str, dict[str, Any]]], columns: Sequence[str]) -> str:
    lines = ["| set | ranking | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 2)]
    lines += [
        f"| {name} | {label} | " + " | ".join(str(scores[c]) for c in columns) + " |"
        for name, label, scores in rows
    ]
    return "\n".join(lines)


def speed() -> str:
    """First embedding, warm start and query latency over the SaaS catalog."""
    documents = documents_of(SAAS)
    fresh = Path(tempfile.mkdtemp(prefix="hermes-hybrid-first-"))  # always an empty cache
    backend = hybrid_backend(fresh)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    backend.build(documents)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    embedded = backend.documents_embedded
    started = time.perf_counter()
    warm = hybrid_backend(fresh)
    warm.build(documents)
    warm_seconds = time.perf_counter() - started

    warm.kept_queries = 0  # every timed query is embedded, none remembered
    hybrid_ms: list[float] = []
    bm25_ms: list[float] = []
    for _ in range(10):
        for query in KEYWORD_QUERIES:
            began = time.perf_counter()
            warm.search(query, 5, "lenient")
            hybrid_ms.append((time.perf_counter() - began) * 1000.0)
    time.sleep(1.0)  # torch's threads spin a while after their last work, slowing numpy
    for _ in range(10):
        for query in KEYWORD_QUERIES:
            began = time.perf_counter()
            warm.lexical.search(query, 5, "lenient")
            bm25_ms.append((time.perf_counter() - began) * 1000.0)
    lines = [
        "| measure | value |",
        "|---|---|",
        f"| tools | {len(documents)} |",
        f"| first embedding: tools embedded | {embedded} |",
        f"| first embedding: under bfloat16 autocast | {backend.encoder.bfloat16} |",
        f"| first embedding: tools/s (wall) | {embedded / wall:.0f} |",
        f"| first embedding: tools per CPU second (both cores) | {embedded / cpu:.0f} |",
        f"| load average when it started (2 cores) | {load:.1f} |",
        f"| second start, warm cache: tools embedded | {warm.documents_embedded} |",
        f"| second start, warm cache: build s | {warm_seconds:.2f} |",
        f"| hybrid query p50 / p99 ms (query embedding included) | "
        f"{statistics.median(hybrid_ms):.2f} / {percentile(hybrid_ms, 99):.2f} |",
        f"| bm25 query p50 / p99 ms (same run) | "
        f"{statistics.median(bm25_ms):.3f} / {percentile(bm25_ms, 99):.3f} |",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print the tables, and optionally record them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument(
        "--metatool-step", type=int, default=1, help="use every Nth metatool query (default all)"
    )
    parser.add_argument(
        "--cache", type=Path, help="embedding cache to reuse between runs (default: a new one)"
    )
    parser.add_argument("--skip-speed", action="store_true", help="quality only")
    parser.add_argument("--speed-only", action="store_true", help="speed only (prints, no --write)")
    parser.add_argument(
        "--dev-root", type=Path, default=ROOT, help="the checkout whose dev sets to use"
    )
    args = parser.parse_args(argv)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="hermes-hybrid-cache-"))
    sections = []
    if not args.skip_speed:
        sections.append("### Speed (5,468 SaaS tools)\n\n" + speed())
        print(sections[-1], flush=True)
    if args.speed_only:
        return
    eval_rows_all: list[tuple[str, str, dict[str, Any]]] = []
    for name, step in (("toolbench", 1), ("metatool", args.metatool_step)):
        queries = load_queries(EVAL / name / "queries.jsonl")[::step]
        backend = hybrid_backend(cache)
        backend.kept_queries = len(queries)  # each query is embedded once for all three modes
        backend.build(documents_of(EVAL / name / "catalog.json"))
        eval_rows_all += eval_rows(f"{name} ({len(queries)} queries)", backend, queries)
    columns = ("recall@1", "recall@5", "recall@10", "ndcg@10", "no_match_rate")
    sections.append("### Natural-language requests\n\n" + table(eval_rows_all, columns))
    print(sections[-1], flush=True)
    dev = []
    for name, catalog, queries in load_dev_sets(args.dev_root):
        backend = hybrid_backend(cache)
        backend.kept_queries = len(queries)
        backend.build(documents_of(catalog))
        positives = sum(not q.negative for q in queries)
        label = f"{name} ({positives} + {len(queries) - positives} negatives)"
        dev += dev_rows(label, backend, queries)
    if dev:
        sections.append(
            "### Keyword dev sets\n\n" + table(dev, ("hit@1", "hit@5", "negatives_no_match"))
        )
        print(sections[-1], flush=True)
    command = "python benchmarks/search_hybrid.py --write"
    if args.metatool_step != 1:
        command += f" --metatool-step {args.metatool_step}"
    if args.dev_root != ROOT:
        command += " --dev-root <a checkout with benchmarks/data>"
    text = f"## Hybrid search\n\n`{command}`\n\n" + "\n\n".join(sections) + f"\n\n{NOTES}"
    if args.write:
        write_section("## Hybrid search", text)


if __name__ == "__main__":
    main()

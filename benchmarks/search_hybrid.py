"""The hybrid search plugin: its quality beside the bm25 backend, its fusion settings, its
no-match threshold, and its speed, on this machine.

Quality: ``shared/data/eval/toolbench`` and ``eval/metatool`` (natural-language requests), and
the dev sets of ``benchmarks/data/sets.json`` (keyword queries, with negatives whose right
answer is no tool). The backends are built as a user gets them, by a real host with the plugin
enabled (``tools.tool_search.backend: hybrid``), at the default admission (``off``); the bm25
figures are those of the same run's lexical side, the bundled ``bm25`` backend. Each query is
ranked once per fusion setting with no threshold; every threshold is then applied to that
ranking, as the backend applies it.

Speed: the 5,468 tools of ``shared/data/saas_openapi_catalog``: the first embedding into an
empty cache (tools per second of wall time, and per CPU second, since the cores are shared), a
second start over the warm cache (tools embedded: 0), and the query latency p50/p99 of keyword
queries, query embedding included, beside bm25's in the same run; and the peak RSS of a new
process with each backend over that catalog.

Prints markdown tables and, with ``--write``, puts them under "## Hybrid search" in
``docs/performance.md``. The plugin must be installed (``pip install -e
plugins/hermes-search-hybrid``).

    python benchmarks/search_hybrid.py [--write] [--metatool-step 1] [--cache DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from _report import write_section  # benchmarks/ is on the path of a script run from it

from hermes_core._config import Config
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core.search._backend import Admission, ToolDocument
from hermes_core.search._evaluation import (
    EvalQuery,
    catalog_documents,
    load_catalog,
    load_queries,
    load_sets,
    percentile,
    score_rankings,
)

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
EVAL = SHARED / "eval"
SAAS = SHARED / "saas_openapi_catalog" / "catalog.json"
DEV_SETS = Path("benchmarks") / "data" / "sets.json"
PROBE = Path("benchmarks") / "data" / "absent-probe.jsonl"
KEYWORD_FILES = (
    Path("benchmarks") / "data" / "keyword-probe.jsonl",
    Path("benchmarks") / "data" / "keyword-holdout.jsonl",
)
ADMISSION: Admission = "off"  # the default of tools.tool_search.admission
WEIGHTS = (0.0, 0.3, 0.4, 0.5, 0.6, 1.0)
CANDIDATES = (20, 50)
THRESHOLDS: tuple[tuple[float, float], ...] = (
    (-1.0, -1.0),  # none
    (0.2, 0.1),
    (0.25, 0.1),  # the defaults: no_match_below, min_similarity
    (0.3, 0.1),
    (0.25, 0.2),
    (-1.0, 0.25),  # a floor on each tool only (the plugin's first default)
)
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
"bm25" is the same run's bundled backend, the hybrid's lexical side, at the default admission
(`off`). The fusion table varies the dense weight (the same for every query) and the candidates
a side with no threshold (weight 0 is bm25's ranking of the candidates, 1 the model's alone),
then shows the defaults (a keyword query, at most `keyword_max_words` words, is ranked by its
similarity to each tool's summary, its name and the first sentence of its description, at
`dense_weight_keyword`; a longer request by its similarity to the whole text, with a higher
dense weight when a word of it is in no tool), the defaults with every query against the whole
texts (`keyword_max_words: 0`, the plugin's ranking before summaries), and the defaults with
each request embedded whole only, not also sentence by sentence (a tool's similarity is
otherwise its greatest to the request or one of its sentences); the threshold table uses the
default fusion and applies each pair (`no_match_below`: no tool at all when none is that
similar to the query; `min_similarity`: no tool less similar than that) to the same rankings,
as the backend applies them; its last row per set is the defaults as shipped, the pair 0.25 /
0.1 with no match for a query that names a service nobody has (`absent_service_no_match`,
`hermes_search_hybrid/absent.py`). Rates are percentages; hit@k counts a positive query whose
relevant tools include one of the top k; negatives_no_match is the share of the queries for
services nobody has that get no tool at all. The fresh queries
(`benchmarks/data/absent-probe.jsonl`) were written after the rule was measured on the dev
sets, to see what it does with queries it was not fitted to. Likewise the keyword files
(`benchmarks/data/keyword-probe.jsonl`, written after the summaries were measured on the SaaS
dev set and then used to choose `dense_weight_keyword`, and `keyword-holdout.jsonl`, written
after that and used for no choice), over the SaaS catalog through the backend's own `search`.

The latencies are wall-clock medians over 20 keyword queries x 10 rounds on this machine's two
cores, shared with other work: the load average is printed beside them. Every timed hybrid
query is embedded (its vector is not remembered between calls); bm25 is timed in a loop of its
own. The first embedding is into an empty cache; "per CPU second" divides by the process's CPU
time, both cores counted. The RSS is that of a new process per backend (hermes' host, the
catalog, the index over a warm cache, 20 queries), read from the kernel at its end (VmRSS) and
at its peak.
"""


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
            return host.tool_search.backend.made  # the HybridBackend, made now

    return anyio.run(main)


def bm25_backend() -> Any:
    """The backend a host builds by default (``bm25``), with no plugin enabled."""
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    env = Environment(home=home, cwd=home, variables={"HERMES_LOG_DIR": str(home / "logs")})

    async def main() -> Any:
        async with Host(Config.model_validate({}), env) as host:
            return host.tool_search.backend

    return anyio.run(main)


def load_dev_sets(root: Path) -> list[tuple[str, Path, list[EvalQuery]]]:
    """The dev sets listed in ``root/benchmarks/data/sets.json`` (none when it does not exist),
    read as ``hermes eval search --sets`` reads them (paths relative to ``sets.json``)."""
    listing = root / DEV_SETS
    if not listing.is_file():
        return []
    return [(item.name, item.catalog, load_queries(item.queries)) for item in load_sets(listing)]


def documents_of(path: Path) -> list[ToolDocument]:
    """The search documents of a catalog file, less reserved bridge names."""
    reserved = {"tool_search", "tool_describe", "tool_call"}
    return [d for d in catalog_documents(load_catalog(path)) if d.name not in reserved]


Ranking = list[tuple[str, float, bool]]
"""A query's candidates best first: (name, similarity, exact)."""


def hybrid_rankings(backend: Any, queries: Sequence[EvalQuery], **fusion: Any) -> list[Ranking]:
    """Each query's ranking by ``backend`` with its settings changed by ``fusion``."""
    backend.settings = dataclasses.replace(backend.settings, **fusion)
    return [
        [
            (t.name, t.similarity, t.exact)
            for t in backend.ranked(item.query, ADMISSION, depth=DEPTH)
        ]
        for item in queries
    ]


def fusion_of(settings: Any) -> dict[str, Any]:
    """The fusion settings of ``settings`` (the dense weights, the candidates and what a
    keyword query is)."""
    return {
        "dense_weight": settings.dense_weight,
        "dense_weight_unmatched": settings.dense_weight_unmatched,
        "dense_weight_keyword": settings.dense_weight_keyword,
        "keyword_max_words": settings.keyword_max_words,
        "candidates": settings.candidates,
    }


@contextlib.contextmanager
def whole_requests_only(backend: Any) -> Iterator[None]:
    """The backend embedding each query whole, not also sentence by sentence (for comparison)."""
    import hermes_search_hybrid.backend as module

    saved = module.query_texts
    module.query_texts = lambda query: [query.strip()]
    backend._queries.clear()
    try:
        yield
    finally:
        module.query_texts = saved
        backend._queries.clear()


def cut(ranking: Ranking, no_match_below: float, min_similarity: float) -> list[str]:
    """The names the backend returns from ``ranking`` with these two thresholds."""
    if not ranking:
        return []
    if not ranking[0][2] and max(similarity for _, similarity, _ in ranking) < no_match_below:
        return []
    return [name for name, similarity, exact in ranking if exact or similarity >= min_similarity][
        :DEPTH
    ]


def scores(
    queries: Sequence[EvalQuery], rankings: Sequence[list[str]], tools: int
) -> dict[str, Any]:
    """The metrics of :func:`score_rankings`, with a negative asked for 5 hits."""
    kept = [
        ranked[:5] if item.negative else ranked
        for item, ranked in zip(queries, rankings, strict=True)
    ]
    return score_rankings(queries, kept, tools=tools)


def measure(
    label: str,
    backend: Any,
    queries: Sequence[EvalQuery],
    fusion_rows: list[Any],
    threshold_rows: list[Any],
) -> None:
    """Add the fusion rows (every weight and candidate count, no threshold) and the threshold
    rows (the default fusion) of one set."""
    default = dataclasses.replace(backend.settings)
    tools = len(backend)
    bm25 = [
        [hit.name for hit in backend.lexical.search(item.query, DEPTH, ADMISSION)]
        for item in queries
    ]
    fusion_rows.append((label, "bm25", scores(queries, bm25, tools)))
    for weight in WEIGHTS:
        for count in CANDIDATES:
            rankings = hybrid_rankings(
                backend,
                queries,
                dense_weight=weight,
                dense_weight_unmatched=weight,
                dense_weight_keyword=weight,
                candidates=count,
            )
            names = [cut(r, -1.0, -1.0) for r in rankings]
            fusion_rows.append(
                (label, f"dense weight {weight}, {count} candidates", scores(queries, names, tools))
            )
        print(label, "weight", weight, file=sys.stderr, flush=True)
    defaults = (
        f"**defaults: a keyword query (<= {default.keyword_max_words} words) against summaries "
        f"at dense weight {default.dense_weight_keyword}; a request at "
        f"{default.dense_weight}, {default.dense_weight_unmatched} with a word in no tool; "
        f"{default.candidates} candidates**"
    )
    rankings = hybrid_rankings(backend, queries, **(fusion_of(default) | {"keyword_max_words": 0}))
    names = [cut(r, -1.0, -1.0) for r in rankings]
    fusion_rows.append(
        (label, "defaults, every query against whole texts", scores(queries, names, tools))
    )
    with whole_requests_only(backend):
        rankings = hybrid_rankings(backend, queries, **fusion_of(default))
    names = [cut(r, -1.0, -1.0) for r in rankings]
    fusion_rows.append((label, "defaults, whole request only", scores(queries, names, tools)))
    rankings = hybrid_rankings(backend, queries, **fusion_of(default))
    names = [cut(r, -1.0, -1.0) for r in rankings]
    fusion_rows.append((label, defaults, scores(queries, names, tools)))
    backend.settings = default
    for no_match_below, min_similarity in THRESHOLDS:
        names = [cut(r, no_match_below, min_similarity) for r in rankings]
        name = (
            "no threshold"
            if no_match_below < 0 and min_similarity < 0
            else f"no_match_below {no_match_below}, min_similarity {min_similarity}"
        )
        threshold_rows.append((label, name, scores(queries, names, tools)))
    absent = [backend.names_absent_service(item.query) for item in queries]
    names = [
        [] if judged else cut(r, default.no_match_below, default.min_similarity)
        for judged, r in zip(absent, rankings, strict=True)
    ]
    name = (
        f"**defaults: no_match_below {default.no_match_below}, min_similarity "
        f"{default.min_similarity}, and no match for a service nobody has**"
    )
    threshold_rows.append((label, name, scores(queries, names, tools)))


def probe(backends: dict[str, Any], path: Path) -> str:
    """The absent-service rule over the queries of ``path`` written after it was measured on
    the dev sets (each with the set whose catalog it is asked of, and whether it names a
    service nobody has): a table of what the rule judged, and the counts."""
    lines = ["| set | query | names a service nobody has | judged so |", "|---|---|---|---|"]
    counts: dict[tuple[str, bool], list[int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        backend = backends.get(item["set"])
        if backend is None:
            continue
        judged = backend.names_absent_service(item["query"])
        expected = bool(item["absent"])
        tally = counts.setdefault((item["set"], expected), [0, 0])
        tally[0] += judged == expected
        tally[1] += 1
        lines.append(
            f"| {item['set']} | {item['query']} | {'yes' if expected else 'no'} | "
            f"{'yes' if judged else 'no'} |"
        )
    summary = [
        f"- {name}: {right} of {total} "
        + ("services nobody has judged so" if absent else "real requests left to the ranking")
        for (name, absent), (right, total) in sorted(counts.items())
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(summary)


def keyword_files(backend: Any, paths: Sequence[Path]) -> str:
    """bm25 and the hybrid, with and without summaries, over the SaaS keyword queries of
    ``paths`` (written after the summaries were measured on the dev set): a table."""
    rows: list[Any] = []
    default = dataclasses.replace(backend.settings)
    tools = len(backend)
    for path in paths:
        queries = load_queries(path)
        label = f"{path.name} ({len(queries)})"
        bm25 = [hit_names(backend.lexical.search(item.query, DEPTH, ADMISSION)) for item in queries]
        rows.append((label, "bm25", scores(queries, bm25, tools)))
        for name, change in (
            ("hybrid, every query against whole texts", {"keyword_max_words": 0}),
            ("**hybrid defaults (keyword queries against summaries)**", {}),
        ):
            backend.settings = dataclasses.replace(default, **change)
            found = [hit_names(backend.search(item.query, DEPTH, ADMISSION)) for item in queries]
            rows.append((label, name, scores(queries, found, tools)))
    backend.settings = default
    return table(rows, ("recall@5", "hit@1", "hit@5", "ndcg@10", "mrr"))


def hit_names(hits: Sequence[Any]) -> list[str]:
    """The tool names of ``hits``, in order."""
    return [hit.name for hit in hits]


def table(rows: Sequence[tuple[str, str, dict[str, Any]]], columns: Sequence[str]) -> str:
    lines = ["| set | ranking | " + " | ".join(columns) + " |", "|" + "---|" * (len(columns) + 2)]
    lines += [
        f"| {name} | {label} | " + " | ".join(str(scores[c]) for c in columns) + " |"
        for name, label, scores in rows
    ]
    return "\n".join(lines)


def speed(tools: int | None = None) -> str:
    """First embedding, warm start, query latency and memory over the SaaS catalog (its first
    ``tools`` tools when given: for a machine too busy to embed all of them)."""
    documents = documents_of(SAAS)[:tools]
    fresh = Path(tempfile.mkdtemp(prefix="hermes-hybrid-first-"))  # always an empty cache
    began = time.perf_counter()
    backend = hybrid_backend(fresh)
    load_seconds = time.perf_counter() - began
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
    from hermes_search_hybrid.text import query_texts

    requests = [item.query for item in load_queries(EVAL / "toolbench" / "queries.jsonl")[:20]]
    request_ms: list[float] = []
    for _ in range(3):
        for query in requests:
            began = time.perf_counter()
            warm.search(query, 5, "lenient")
            request_ms.append((time.perf_counter() - began) * 1000.0)
    sentences = statistics.mean(len(query_texts(query)) for query in requests)
    for _ in range(10):
        for query in KEYWORD_QUERIES:
            began = time.perf_counter()
            warm.lexical.search(query, 5, "lenient")
            bm25_ms.append((time.perf_counter() - began) * 1000.0)
    memory = {name: rss_mb(name, fresh, len(documents)) for name in ("bm25", "hybrid")}
    lines = [
        "| measure | value |",
        "|---|---|",
        f"| tools | {len(documents)} |",
        f"| a host started and the model loaded (onnxruntime, tokenizer): s | {load_seconds:.2f} |",
        f"| first embedding: tools embedded | {embedded} |",
        f"| first embedding: tools/s (wall) | {embedded / wall:.0f} |",
        f"| first embedding: tools per CPU second (both cores) | {embedded / cpu:.0f} |",
        f"| load average when it started (2 cores) | {load:.1f} |",
        f"| second start, warm cache: tools embedded | {warm.documents_embedded} |",
        f"| second start, warm cache: build s | {warm_seconds:.2f} |",
        f"| hybrid query p50 / p99 ms (query embedding included, one thread) | "
        f"{statistics.median(hybrid_ms):.2f} / {percentile(hybrid_ms, 99):.2f} |",
        f"| hybrid request p50 / p99 ms (20 toolbench requests, {sentences:.1f} texts embedded "
        f"each: the request and its sentences) | "
        f"{statistics.median(request_ms):.2f} / {percentile(request_ms, 99):.2f} |",
        f"| bm25 query p50 / p99 ms (same run) | "
        f"{statistics.median(bm25_ms):.3f} / {percentile(bm25_ms, 99):.3f} |",
        f"| RSS MB once a new process has read the catalog, built the index (warm cache) and "
        f"answered 20 queries: hybrid / bm25 | "
        f"{memory['hybrid'][0]:.0f} / {memory['bm25'][0]:.0f} |",
        f"| peak RSS MB of that process (reading the catalog's JSON included): hybrid / bm25 | "
        f"{memory['hybrid'][1]:.0f} / {memory['bm25'][1]:.0f} |",
    ]
    return "\n".join(lines)


# Run in a child process by peak_rss_mb: a host over the SaaS catalog, as `hermes tools
# search` makes one, 20 keyword queries, then the process's peak resident set in MB.
RSS_CHILD = """
import resource, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import search_hybrid as bench
backend = bench.bm25_backend() if sys.argv[2] == "bm25" else bench.hybrid_backend(Path(sys.argv[3]))
backend.build(bench.documents_of(bench.SAAS)[: int(sys.argv[4])])
for query in bench.KEYWORD_QUERIES:
    backend.search(query, 5, "lenient")
import gc; gc.collect()
status = Path("/proc/self/status").read_text()
now = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
print(now / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def rss_mb(backend: str, cache: Path, tools: int) -> tuple[float, float]:
    """The RSS after its work, and the peak RSS, of a new process that builds ``backend``
    (``hybrid`` over the warm ``cache``, or ``bm25`` alone) over the first ``tools`` tools of
    the SaaS catalog and answers queries."""
    folder = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, folder, backend, str(cache), str(tools)],
        capture_output=True,
        text=True,
        check=True,
    )
    steady, peak = done.stdout.split()[-2:]
    return float(steady), float(peak)


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
        "--tools", type=int, help="speed over the first N SaaS tools only (a busy machine)"
    )
    parser.add_argument(
        "--dev-root", type=Path, default=ROOT, help="the checkout whose dev sets to use"
    )
    parser.add_argument("--set", action="append", help="measure only this set (repeatable)")
    args = parser.parse_args(argv)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="hermes-hybrid-cache-"))
    sections = []
    if not args.skip_speed:
        sections.append("### Speed (5,468 SaaS tools)\n\n" + speed(args.tools))
        print(sections[-1], flush=True)
    if args.speed_only:
        return
    fusion_rows: list[Any] = []
    threshold_rows: list[Any] = []
    backends: dict[str, Any] = {}
    sets = [
        (name, EVAL / name / "catalog.json", load_queries(EVAL / name / "queries.jsonl"))
        for name in ("toolbench", "metatool")
    ]
    sets += load_dev_sets(args.dev_root)
    for name, catalog, queries in sets:
        if args.set and name not in args.set:
            continue
        if name == "metatool":
            queries = queries[:: args.metatool_step]
        backend = hybrid_backend(cache)
        backend.kept_queries = len(queries)  # each query is embedded once for every setting
        backend.build(documents_of(catalog))
        negatives = sum(item.negative for item in queries)
        label = f"{name} ({len(queries) - negatives}" + (
            f" + {negatives} negatives)" if negatives else ")"
        )
        measure(label, backend, queries, fusion_rows, threshold_rows)
        backends[name] = backend
    columns = ("recall@5", "hit@1", "hit@5", "ndcg@10", "no_match_rate", "negatives_no_match")
    sections.append("### Fusion (no threshold)\n\n" + table(fusion_rows, columns))
    print(sections[-1], flush=True)
    sections.append("### Threshold (default fusion)\n\n" + table(threshold_rows, columns))
    print(sections[-1], flush=True)
    if (args.dev_root / PROBE).is_file():
        sections.append(
            "### A service nobody has: fresh queries\n\n" + probe(backends, args.dev_root / PROBE)
        )
        print(sections[-1], flush=True)
    files = [args.dev_root / path for path in KEYWORD_FILES if (args.dev_root / path).is_file()]
    if files and "saas-keyword" in backends:
        sections.append(
            "### Keyword queries written after the summaries were measured\n\n"
            + keyword_files(backends["saas-keyword"], files)
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

"""Search speed: the bm25 backend side by side with rank-bm25, in the same run.

Catalogs: the 5,468 real API operations of ``shared/data/saas_openapi_catalog`` and synthetic
catalogs of 33,000 and 330,000 tools generated deterministically (seeded) from that catalog's
vocabulary. Both engines rank the same tokens; rank-bm25 is slow at 330,000 tools, so it runs
few queries there. ``--baseline REV`` also measures the engine of an earlier revision of this
repository (extracted with ``git archive``) in the same run, on the same catalogs and queries.
Prints a markdown table (medians and ratios) and, with ``--write``, puts it under "## Search"
in ``docs/performance.md``.

    python benchmarks/search.py [--write] [--sizes 5468,33000,330000] [--baseline REV]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _baseline import revision_tree, run_json
from _report import write_section  # benchmarks/ is on the path of a script run from it
from rank_bm25 import BM25Okapi

from hermes_core.search.backend import Admission, ToolDocument
from hermes_core.search.evaluation import catalog_documents, load_catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT.parent / "shared" / "data" / "saas_openapi_catalog" / "catalog.json"
SEED = 20240611
SERVER_SIZE = 50
K1, B = 1.5, 0.75


@dataclass(frozen=True)
class Engine:
    """The bm25 engine of the hermes-core on ``sys.path``: how to build an index and tokenize."""

    build: Callable[[Sequence[ToolDocument]], Any]
    document_tokens: Callable[[ToolDocument], list[str]]
    query_tokens: Callable[[str], list[str]]
    split_words: Callable[[str], list[str]]
    stopwords: frozenset[str]


def load_engine() -> Engine:
    """The bundled plugin's engine, or, for a revision from before the engine moved into its
    plugin, ``hermes_core.search.bm25``."""
    try:
        from hermes_core.testing import search_backend_module

        index = search_backend_module("bm25", "index")
        fields = search_backend_module("bm25", "fields")
        words = search_backend_module("bm25", "tokenize")
        build, document_tokens = index.BM25Index, fields.document_tokens
    except ImportError:
        from hermes_core.search import bm25, documents  # type: ignore[attr-defined]
        from hermes_core.search import tokenize as words  # type: ignore[attr-defined]

        build, document_tokens = bm25.BM25Index, documents.document_tokens
    return Engine(
        build, document_tokens, words.query_tokens, words.split_words, words.QUERY_STOPWORDS
    )


ENGINE = load_engine()
_WORD = re.compile(r"[A-Za-z]+|[0-9]+")


def split_words(text: str) -> list[str]:
    """Lowercased words, the same in every revision (the synthetic catalogs and the queries
    must not depend on the tokenizer being measured)."""
    return [word.lower() for word in _WORD.findall(text)]


def cold_build_ms(path: Path) -> float:
    """Milliseconds to build the index of the catalog at ``path`` in a fresh interpreter, so
    no stem or token is cached."""
    output = subprocess.run(
        [sys.executable, __file__, "--cold-build", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(output.strip())


def timed(action: Callable[..., object], *arguments: Any) -> float:
    """Milliseconds one call of ``action(*arguments)`` takes."""
    started = time.perf_counter()
    action(*arguments)
    return (time.perf_counter() - started) * 1000.0


def synthetic_catalog(real: Sequence[ToolDocument], size: int, seed: int) -> list[ToolDocument]:
    """``size`` tools in servers of 50, with names, descriptions and parameter names drawn from
    the real catalog's words at their real frequencies."""
    rng = np.random.default_rng(seed)
    counts = Counter(
        word for document in real for word in split_words(document.description) if len(word) > 1
    )
    words = np.array(sorted(counts))
    weights = np.array([counts[word] for word in words], dtype=np.float64)
    weights /= weights.sum()
    name_counts = Counter(word for d in real for word in split_words(d.name))
    name_words = np.array(sorted(name_counts))
    name_weights = np.array([name_counts[w] for w in name_words], dtype=np.float64)
    name_weights /= name_weights.sum()
    lengths = rng.integers(8, 40, size=size)
    description_words = rng.choice(words, size=int(lengths.sum()), p=weights)
    picked_names = rng.choice(name_words, size=(size, 3), p=name_weights)
    parameter_counts = rng.integers(0, 5, size=size)
    parameters = rng.choice(name_words, size=int(parameter_counts.sum()), p=name_weights)
    catalog: list[ToolDocument] = []
    offset = parameter_offset = 0
    for index in range(size):
        server = f"svc{index // SERVER_SIZE}"
        name = f"{server}__{'_'.join(picked_names[index])}_{index}"
        length = int(lengths[index])
        description = " ".join(description_words[offset : offset + length])
        offset += length
        count = int(parameter_counts[index])
        names = tuple(str(p) for p in parameters[parameter_offset : parameter_offset + count])
        parameter_offset += count
        catalog.append(ToolDocument(name, description, server, names))
    return catalog


def sample_queries(catalog: Sequence[ToolDocument], count: int, seed: int) -> list[str]:
    """Keyword queries like a model sends: two or three words of a tool's name and description."""
    rng = np.random.default_rng(seed)
    queries = []
    for index in rng.choice(len(catalog), size=count, replace=False):
        document = catalog[int(index)]
        name_words = [w for w in split_words(document.name) if w.isalpha()]
        text_words = [
            w
            for w in split_words(document.description)
            if w.isalpha() and w not in ENGINE.stopwords
        ]
        chosen = list(dict.fromkeys(name_words[:2] + text_words[:2]))[:3]
        queries.append(" ".join(chosen) or document.name)
    return queries


def reference_search(
    reference: BM25Okapi, names: Sequence[str], query: str, limit: int
) -> list[str]:
    """Top ``limit`` names by rank-bm25 with the same query tokens."""
    scores = reference.get_scores(ENGINE.query_tokens(query))
    top = np.argpartition(-scores, limit)[:limit]
    return [names[i] for i in top[np.argsort(-scores[top], kind="stable")]]


def measure(
    label: str, catalog: list[ToolDocument], reference_queries: int, path: Path | None = None
) -> dict[str, str]:
    """One table row for ``catalog`` (read from ``path`` for the cold build, when given)."""
    print(f"[{label}] {len(catalog)} tools", file=sys.stderr)
    gc.collect()
    if path is not None:
        builds = [cold_build_ms(path) for _ in range(3)]
    else:
        builds = [timed(ENGINE.build, catalog)]
    index = ENGINE.build(catalog)
    queries = sample_queries(catalog, 200, SEED + 1)
    for query in queries:  # warm the stem cache, as a running host would be
        index.search(query, 5, "strict")
    ours: dict[Admission, list[float]] = {"strict": [], "off": []}
    for _ in range(5):
        for mode, times in ours.items():
            times.extend(timed(index.search, query, 5, mode) for query in queries)

    reference_build = math.nan
    theirs = [math.nan]
    if reference_queries:
        token_lists = [ENGINE.document_tokens(document) for document in catalog]
        started = time.perf_counter()
        reference = BM25Okapi(token_lists, k1=K1, b=B)
        reference_build = (time.perf_counter() - started) * 1000.0
        names = [document.name for document in catalog]
        theirs = [
            timed(reference_search, reference, names, query, 5)
            for query in queries[:reference_queries]
        ]

    row = {
        "catalog": label,
        "tools": f"{len(catalog):,}",
        "build ms": f"{statistics.median(builds):.0f}",
        "rank-bm25 build ms": f"{reference_build:.0f}",
        "p50 strict ms": f"{statistics.median(ours['strict']):.3f}",
        "p50 off ms": f"{statistics.median(ours['off']):.3f}",
        "p99 strict ms": f"{np.percentile(ours['strict'], 99):.3f}",
        "rank-bm25 p50 ms": f"{statistics.median(theirs):.2f}",
        "speed-up strict": f"{statistics.median(theirs) / statistics.median(ours['strict']):.0f}x",
        "speed-up off": f"{statistics.median(theirs) / statistics.median(ours['off']):.0f}x",
        "queries (ours / rank-bm25)": f"{len(ours['off'])} / {len(theirs)}",
    }
    print(row, file=sys.stderr)
    return row


def measure_add(catalog: list[ToolDocument], servers: int = 20) -> dict[str, str]:
    """Adding (then removing) 50-tool servers, one at a time, to an index of ``catalog`` less
    its last ``servers`` servers."""
    base = catalog[: len(catalog) - servers * SERVER_SIZE]
    batches = [
        catalog[len(base) + n * SERVER_SIZE : len(base) + (n + 1) * SERVER_SIZE]
        for n in range(servers)
    ]
    index = ENGINE.build(base)
    adds = [timed(index.add, batch) for batch in batches]
    removes = [timed(index.remove, [document.name for document in batch]) for batch in batches]
    return {
        "index size": f"{len(base):,} + {servers} servers of {SERVER_SIZE}",
        "add p50 ms": f"{statistics.median(adds):.2f}",
        "add max ms": f"{max(adds):.2f}",
        "remove p50 ms": f"{statistics.median(removes):.2f}",
        "remove max ms": f"{max(removes):.2f}",
    }


def targets(rows: Sequence[dict[str, str]], add_row: dict[str, str]) -> str:
    """The speed targets of the Tool Search issue, checked against this run."""

    def number(text: str) -> float:
        return float(text.rstrip("x").replace(",", ""))

    by_tools = {number(row["tools"]): row for row in rows}
    checks: list[tuple[str, str, bool]] = []
    if 5468 in by_tools:
        row = by_tools[5468]
        for mode in ("strict", "off"):
            ratio = number(row[f"speed-up {mode}"])
            checks.append((f"p50 {mode} >= 20x rank-bm25 at 5,468", f"{ratio:.0f}x", ratio >= 20))
        p50 = number(row["p50 strict ms"])
        checks.append(("p50 strict < 0.2 ms at 5,468", f"{p50} ms", p50 < 0.2))
        build = number(row["build ms"])
        checks.append(("build < 300 ms at 5,468", f"{build:.0f} ms", build < 300))
    if 330000 in by_tools:
        row = by_tools[330000]
        for mode in ("strict", "off"):
            ratio = number(row[f"speed-up {mode}"])
            checks.append((f"p50 {mode} >= 100x at 330,000", f"{ratio:.0f}x", ratio >= 100))
    add = number(add_row["add max ms"])
    checks.append(("add a 50-tool server to 33,000 < 20 ms (max)", f"{add} ms", add < 20))
    lines = ["| target | this run | met |", "|---|---|---|"]
    lines.extend(f"| {name} | {value} | {'yes' if ok else 'no'} |" for name, value, ok in checks)
    return "\n".join(lines)


def table(rows: Sequence[dict[str, str]]) -> str:
    """A markdown table of ``rows`` (same keys)."""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines.extend("| " + " | ".join(row[key] for key in keys) + " |" for row in rows)
    return "\n".join(lines)


def baseline_rows(revision: str, sizes: str) -> list[dict[str, str]]:
    """The table rows of the engine at ``revision``, measured by this script in a subprocess
    that imports that revision's ``hermes_core`` and bundled plugins (``git archive``)."""
    with revision_tree(revision) as tree:
        arguments = ["--json", "--no-reference", "--sizes", sizes]
        rows: list[dict[str, str]] = run_json(Path(__file__), arguments, tree)
    for row in rows:
        row["catalog"] = f"{row['catalog']} ({revision})"
    return rows


def compared(rows: Sequence[dict[str, str]], baseline: Sequence[dict[str, str]]) -> str:
    """Query p50 of this revision against the baseline's, catalog by catalog."""
    lines = [
        "| catalog | tools | p50 strict ms | baseline | ratio | p50 off ms | baseline | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ours, theirs in zip(rows, baseline, strict=True):
        cells = [ours["catalog"], ours["tools"]]
        for mode in ("strict", "off"):
            now, then = float(ours[f"p50 {mode} ms"]), float(theirs[f"p50 {mode} ms"])
            cells += [f"{now:.3f}", f"{then:.3f}", f"{now / then:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print (and optionally record) the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument("--sizes", default="33000,330000", help="synthetic catalog sizes")
    parser.add_argument("--baseline", metavar="REV", help="also measure the engine of REV")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-reference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cold-build", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold_build is not None:
        documents = catalog_documents(load_catalog(args.cold_build))
        print(timed(ENGINE.build, documents))
        return
    reference = 0 if args.no_reference else 200
    real = catalog_documents(load_catalog(CATALOG))
    rows = [measure("saas_openapi_catalog", real, reference, CATALOG)]
    for size in (int(s) for s in args.sizes.split(",") if s):
        synthetic = synthetic_catalog(real, size, SEED + size)
        rows.append(measure("synthetic", synthetic, reference if size < 100_000 else 8))
        del synthetic  # so the garbage collector does not walk it during the next timings
    if args.json:
        print(json.dumps(rows))
        return
    gc.collect()
    add_rows = [measure_add(synthetic_catalog(real, 34000, SEED + 34000))]
    command = "python benchmarks/search.py --write" + (
        f" --sizes {args.sizes}" if args.sizes != "33000,330000" else ""
    )
    comparison = ""
    if args.baseline:
        command += f" --baseline {args.baseline}"
        baseline = baseline_rows(args.baseline, args.sizes)
        comparison = (
            f"This revision against `{args.baseline}` (the engine before it), same catalogs and "
            f"queries, same run:\n\n{compared(rows, baseline)}\n\n"
        )
    text = (
        "## Search\n\n"
        f"`{command}` (2 cores; medians over 200 keyword queries x 5 rounds for the bm25 index,\n"
        "limit 5; rank-bm25 `BM25Okapi` with the same tokens, 200 queries, 8 at 330,000 tools;\n"
        "our build includes tokenization, in a fresh interpreter for the real catalog;\n"
        "rank-bm25's build starts from the same token lists).\n\n"
        f"{table(rows)}\n\n"
        f"{comparison}"
        "Incremental updates: 20 synthetic servers of 50 tools added one at a time to a\n"
        "33,000-tool index, then removed one at a time:\n\n"
        f"{table(add_rows)}\n\n"
        f"{targets(rows, add_rows[0])}\n"
    )
    print(text)
    if args.write:
        write_section("## Search", text)


if __name__ == "__main__":
    main()

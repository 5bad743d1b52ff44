"""Search speed: the bm25 backend side by side with rank-bm25, in the same run.

Catalogs: the 5,468 real API operations of ``shared/data/saas_openapi_catalog`` and synthetic
catalogs of 33,000 and 330,000 tools generated deterministically (seeded) from that catalog's
vocabulary. Both engines rank the same tokens; rank-bm25 is slow at 330,000 tools, so it runs
few queries there. Prints a markdown table (medians and ratios) and, with ``--write``, puts it
under "## Search" in ``docs/performance.md``.

    python benchmarks/search.py [--write] [--sizes 5468,33000,330000]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _report import write_section  # benchmarks/ is on the path of a script run from it
from rank_bm25 import BM25Okapi

from hermes_core.search.backend import Admission, ToolDocument
from hermes_core.search.bm25 import K1, B, BM25Index
from hermes_core.search.documents import bare_tool_name, document_tokens
from hermes_core.search.evaluation import catalog_documents, load_catalog
from hermes_core.search.tokenize import QUERY_STOPWORDS, query_tokens, split_words

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT.parent / "shared" / "data" / "saas_openapi_catalog" / "catalog.json"
SEED = 20240611
SERVER_SIZE = 50


COLD_BUILD = """
import sys, time
from pathlib import Path
from hermes_core.search.bm25 import BM25Index
from hermes_core.search.evaluation import catalog_documents, load_catalog

documents = catalog_documents(load_catalog(Path(sys.argv[1])))
started = time.perf_counter()
BM25Index(documents)
print((time.perf_counter() - started) * 1000.0)
"""


def cold_build_ms(path: Path) -> float:
    """Milliseconds to build the index of the catalog at ``path`` in a fresh interpreter, so
    no stem or token is cached."""
    output = subprocess.run(
        [sys.executable, "-c", COLD_BUILD, str(path)], check=True, capture_output=True, text=True
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
    name_counts = Counter(word for d in real for word in split_words(bare_tool_name(d.name)))
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
        name_words = [w for w in split_words(bare_tool_name(document.name)) if w.isalpha()]
        text_words = [
            w for w in split_words(document.description) if w.isalpha() and w not in QUERY_STOPWORDS
        ]
        chosen = list(dict.fromkeys(name_words[:2] + text_words[:2]))[:3]
        queries.append(" ".join(chosen) or document.name)
    return queries


def reference_search(
    reference: BM25Okapi, names: Sequence[str], query: str, limit: int
) -> list[str]:
    """Top ``limit`` names by rank-bm25 with the same query tokens."""
    scores = reference.get_scores(query_tokens(query))
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
        builds = [timed(BM25Index, catalog)]
    index = BM25Index(catalog)
    queries = sample_queries(catalog, 200, SEED + 1)
    for query in queries:  # warm the stem cache, as a running host would be
        index.search(query, 5, "strict")
    ours: dict[Admission, list[float]] = {"strict": [], "off": []}
    for _ in range(5):
        for mode, times in ours.items():
            times.extend(timed(index.search, query, 5, mode) for query in queries)

    token_lists = [document_tokens(document) for document in catalog]
    started = time.perf_counter()
    reference = BM25Okapi(token_lists, k1=K1, b=B)
    reference_build = (time.perf_counter() - started) * 1000.0
    names = [document.name for document in catalog]
    theirs = [
        timed(reference_search, reference, names, query, 5) for query in queries[:reference_queries]
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
    index = BM25Index(base)
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


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print (and optionally record) the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument("--sizes", default="33000,330000", help="synthetic catalog sizes")
    args = parser.parse_args(argv)
    real = catalog_documents(load_catalog(CATALOG))
    rows = [measure("saas_openapi_catalog", real, 200, CATALOG)]
    for size in (int(s) for s in args.sizes.split(",") if s):
        synthetic = synthetic_catalog(real, size, SEED + size)
        rows.append(measure("synthetic", synthetic, 200 if size < 100_000 else 8))
        del synthetic  # so the garbage collector does not walk it during the next timings
    gc.collect()
    add_rows = [measure_add(synthetic_catalog(real, 34000, SEED + 34000))]
    command = "python benchmarks/search.py --write" + (
        f" --sizes {args.sizes}" if args.sizes != "33000,330000" else ""
    )
    text = (
        "## Search\n\n"
        f"`{command}` (2 cores; medians over 200 keyword queries x 5 rounds for the bm25 index,\n"
        "limit 5; rank-bm25 `BM25Okapi` with the same tokens, 200 queries, 8 at 330,000 tools;\n"
        "our build includes tokenization, in a fresh interpreter for the real catalog;\n"
        "rank-bm25's build starts from the same token lists).\n\n"
        f"{table(rows)}\n\n"
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

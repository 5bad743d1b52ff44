"""Strict and lenient with their very common tokens set aside, against scoring every candidate,
in one process: each query is ranked both ways in turn (``_paired.paired_times``), so both
see the same machine, the same index and the same caches.

The bm25 kernel sets aside, under ``strict`` (below four query tokens: no coverage floor) and
``lenient``, the tokens held by half the tools or more, among the required tokens' holders
(``rank_aside`` in ``plugins_builtin/bm25/_kernel.c``); ``index.PRUNE_REQUIRED =
False`` makes it score every candidate with every token, as it did before. The hits are the
same (``plugins_builtin/bm25/tests/test_bm25_kernel.py``); this measures the time. Catalogs and
queries are ``benchmarks/search.py``'s: the 5,468 SaaS tools and the synthetic 330,000 by default.

    python benchmarks/search_prune.py [--sizes 330000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from _paired import cells, paired_times
from search import ENGINE, LIMIT, QUERIES, SEED, catalog_of, sample_queries

from hermes_core.search._backend import Admission
from hermes_core.search._evaluation import percentile

MODES: tuple[Admission, ...] = ("strict", "lenient")


def measure(spec: str, rounds: int) -> list[str]:
    """Table rows for one catalog: p50, p90 and p99 of each mode, both ways."""
    documents = catalog_of(spec)
    index = ENGINE.build(documents)
    module = sys.modules[type(index).__module__]
    queries = sample_queries(documents, QUERIES, SEED + 1)
    for query in queries:  # warm the stem cache and the saturations, as a running host would
        index.search(query, LIMIT, "strict")
    rows = []
    for mode in MODES:

        def ranked(query: str, pruned: bool, mode: Admission = mode) -> object:
            module.PRUNE_REQUIRED = pruned
            return index.search(query, LIMIT, mode)

        ways = {
            "every": lambda query: ranked(query, False),
            "aside": lambda query: ranked(query, True),
        }
        times = paired_times(queries, rounds, ways)
        module.PRUNE_REQUIRED = True
        row = cells(times["every"]) + cells(times["aside"])
        ratio = percentile(times["aside"], 99) / percentile(times["every"], 99)
        rows.append(f"| {len(documents):,} | {mode} | " + " | ".join(row) + f" | {ratio:.2f}x |")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="330000", help="synthetic catalog sizes")
    parser.add_argument("--rounds", type=int, default=6, help="rounds over the queries")
    args = parser.parse_args(argv)
    specs = ["real", *(f"synthetic:{size}" for size in args.sizes.split(",") if size)]
    print(
        "| tools | admission | every candidate p50 / p90 / p99 ms | | | set aside p50 / p90 / "
        "p99 ms | | | p99 ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        for row in measure(spec, args.rounds):
            print(row, flush=True)


if __name__ == "__main__":
    main()

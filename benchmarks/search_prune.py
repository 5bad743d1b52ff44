"""Strict and lenient with their very common tokens set aside, against scoring every candidate,
in one process: each query is ranked both ways in turn (the order alternating by round), so
both see the same machine, the same index and the same caches.

The bm25 kernel sets aside, under ``strict`` (below four query tokens: no coverage floor) and
``lenient``, the tokens held by half the tools or more, among the required tokens' holders
(``rank_aside`` in ``plugins_builtin/bm25/_kernel.c``); ``index.PRUNE_REQUIRED =
False`` makes it score every candidate with every token, as it did before. The hits are the
same (``tests/search/test_kernel.py``); this measures the time. Catalogs and queries are
``benchmarks/search.py``'s: the 5,468 SaaS tools and the synthetic 330,000 by default.

    python benchmarks/search_prune.py [--sizes 330000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from search import ENGINE, LIMIT, QUERIES, SEED, catalog_of, sample_queries

from hermes_core.search.backend import Admission
from hermes_core.search.evaluation import percentile

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
        times: dict[bool, list[float]] = {True: [], False: []}
        for round_number in range(rounds):
            order = (True, False) if round_number % 2 else (False, True)
            for query in queries:
                for pruned in order:
                    module.PRUNE_REQUIRED = pruned
                    started = time.perf_counter()
                    index.search(query, LIMIT, mode)
                    times[pruned].append((time.perf_counter() - started) * 1000.0)
        module.PRUNE_REQUIRED = True
        cells = []
        for pruned in (False, True):
            cells += [f"{percentile(times[pruned], percent):.3f}" for percent in (50, 90, 99)]
        ratio = percentile(times[True], 99) / percentile(times[False], 99)
        rows.append(f"| {len(documents):,} | {mode} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="330000", help="synthetic catalog sizes")
    parser.add_argument("--rounds", type=int, default=5, help="rounds over the queries")
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

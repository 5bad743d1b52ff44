"""Two builds of the bm25 query kernel side by side, in one process: this checkout's
``_kernel.c`` and another revision's, each compiled with the install's own flags
(``hatch_build.compile_kernel``) into a temporary tree and loaded from there, each ranking the
same catalog through its own index. Every query is ranked by both in turn
(``_paired.paired_times``), and their hits must be equal. Catalogs and queries are
``benchmarks/search.py``'s.

``--baseline HEAD`` with an unchanged ``_kernel.c`` measures the comparison itself: the two
columns should then agree within the machine's noise.

    python benchmarks/kernel_ab.py --baseline REV [--sizes 33000,330000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _baseline import ROOT, revision_tree
from _kernel_loading import load_kernel
from _paired import cells, paired_times
from search import ENGINE, LIMIT, QUERIES, SEED, catalog_of, sample_queries

from hermes_core.search._backend import Admission
from hermes_core.search._evaluation import percentile

sys.path.insert(0, str(ROOT))
from hatch_build import SOURCE  # the checkout's build hook

MODES: tuple[Admission, ...] = ("strict", "lenient", "off")


def measure(spec: str, kernels: dict[str, Any], rounds: int) -> list[str]:
    """Table rows for one catalog: p50, p90 and p99 of each kernel in each mode."""
    documents = catalog_of(spec)
    indexes = {name: ENGINE.build(documents, kernel=kernel) for name, kernel in kernels.items()}
    queries = sample_queries(documents, QUERIES, SEED + 1)
    for index in indexes.values():  # warm the stem cache and the saturations, as a host would
        for query in queries:
            index.search(query, LIMIT, "strict")
    names = list(kernels)
    rows = []
    for mode in MODES:
        ways = {
            name: (lambda query, index=index, mode=mode: index.search(query, LIMIT, mode))
            for name, index in indexes.items()
        }
        times = paired_times(queries, rounds, ways, same=True)
        row = cells(times[names[0]]) + cells(times[names[1]])
        ratios = [
            percentile(times[names[1]], percent) / percentile(times[names[0]], percent)
            for percent in (50, 99)
        ]
        rows.append(
            f"| {len(documents):,} | {mode} | "
            + " | ".join(row)
            + f" | {ratios[0]:.2f}x | {ratios[1]:.2f}x |"
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, metavar="REV", help="the other kernel's")
    parser.add_argument("--sizes", default="33000,330000", help="synthetic catalog sizes")
    parser.add_argument("--rounds", type=int, default=6, help="rounds over the queries")
    args = parser.parse_args(argv)
    with revision_tree(args.baseline) as then, tempfile.TemporaryDirectory() as now:
        (Path(now) / SOURCE).parent.mkdir(parents=True)
        shutil.copyfile(ROOT / SOURCE, Path(now) / SOURCE)
        kernels = {
            args.baseline: load_kernel(then, "baseline"),
            "this": load_kernel(Path(now), "this"),
        }
        print(
            f"{QUERIES} queries x {args.rounds} rounds, each ranked by both kernels in turn\n\n"
            f"| tools | admission | {args.baseline} p50 / p90 / p99 ms | | "
            "| this checkout p50 / p90 / p99 ms | | | p50 ratio | p99 ratio |\n"
            "|---|---|---|---|---|---|---|---|---|---|"
        )
        for size in args.sizes.split(","):
            for row in measure(f"synthetic:{int(size)}", kernels, args.rounds):
                print(row, flush=True)


if __name__ == "__main__":
    main()

"""Timing two ways of ranking the same queries in one process, side by side.

Each query is ranked both ways in turn, the order alternating query by query and round by
round: the second of a pair finds the first's postings in the cache, and alternating by round
alone, over an odd number of rounds, put one way first more often (5 to 10% against it at the
same code, see docs/performance.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from hermes_core.search._evaluation import percentile

Rank = Callable[[str], object]


def paired_times(
    queries: Sequence[str], rounds: int, ways: dict[str, Rank], *, same: bool = False
) -> dict[str, list[float]]:
    """Milliseconds of each query ranked each of the two ``ways`` (name -> rank a query), every
    round; with ``same``, the two must return equal results."""
    names = list(ways)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(rounds):
        for number, query in enumerate(queries):
            order = names if (round_number + number) % 2 else names[::-1]
            found = []
            for name in order:
                started = time.perf_counter()
                found.append(ways[name](query))
                times[name].append((time.perf_counter() - started) * 1000.0)
            if same and found[0] != found[1]:
                raise SystemExit(f"the two ways disagree on {query!r}")
    return times


def cells(times: Sequence[float]) -> list[str]:
    """p50, p90 and p99 as table cells."""
    return [f"{percentile(times, percent):.3f}" for percent in (50, 90, 99)]

"""What finding the ``id`` of a stdio answer hermes cannot read costs, beside the SDK's own
attempt to read the same line (which comes first, on every line).

Each line is ``--mib`` MiB (64, the longest hermes reads) and ends, inside its ``result``, with
an object 300 deep, so the SDK's reader fails on it after reading all the rest; its ``id`` is
last (the worst place for the scan). The shapes: one long text; strings with an escaped quote
each; empty strings; nothing but quotes; strings that hold a bracket, each in an array nested in
the one before (beyond ``MAX_QUOTES_SCANNED``: the scan gives up); brackets nested a million
deep. Per shape, ``--rounds`` rounds, the two alternating which goes first;
medians in milliseconds, and the scan's as a ratio of the SDK's.

Run:

    python benchmarks/unreadable_answer.py [--mib 64] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/ holds a script named mcp.py: keep this folder off the import path so ``import mcp``
# (inside hermes_core._mcp) finds the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import mcp_types  # noqa: E402

from hermes_core._mcp.stdio import _answered_id  # noqa: E402

DEEP = b'{"a":' * 300 + b"1" + b"}" * 300


def _lines(mib: int) -> dict[str, Callable[[], bytes]]:
    size = mib * 1024 * 1024
    head = b'{"jsonrpc":"2.0","result":{"content":['
    tail = b'],"deep":' + DEEP + b'},"id":7}'

    def of(item: bytes, end: bytes = b"") -> Callable[[], bytes]:
        return lambda: head + item * (size // len(item)) + end + tail

    return {
        "one long text": lambda: head + b'{"type":"text","text":"' + b"x" * size + b'"}' + tail,
        "strings with an escaped quote": of(b'"ab\\"c",', b"1"),
        "empty strings": of(b'"",', b"1"),
        "nothing but quotes": of(b'"'),
        "strings holding a bracket, nested": of(b'["{",', b"1"),
        "brackets a million deep": lambda: head + b"[" * 2**20 + b"]" * 2**20 + tail,
    }


def _sdk_read(line: bytes) -> object:
    try:
        return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ways: dict[str, Callable[[bytes], object]] = {"sdk": _sdk_read, "scan": _answered_id}
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    print("| line | SDK's read, ms | scan, ms | scan / SDK | id found |")
    print("|---|---|---|---|---|")
    for name, make in _lines(args.mib).items():
        line = make()
        times: dict[str, list[float]] = {way: [] for way in ways}
        found: object = None
        for number in range(args.rounds):
            for way in list(ways) if number % 2 else list(ways)[::-1]:
                gc.collect()
                started = time.perf_counter()
                result = ways[way](line)
                times[way].append((time.perf_counter() - started) * 1000.0)
                if way == "scan":
                    found = result
                del result
        sdk, scan = (statistics.median(times[way]) for way in ("sdk", "scan"))
        print(f"| {name} | {sdk:,.0f} | {scan:,.0f} | {scan / sdk:.2f}x | {found} |")
        del line
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Dispatch overhead: a no-op tool through ``Dispatcher.dispatch`` against its bare handler.

One pre hook and one post hook are registered, the ``annotations`` policy (the bundled plugin)
decides, and the activity log is written, exactly as in a real host. Both sides run in the same
process and event loop, so the comparison holds on any machine. Run:

    /work/venv/bin/python benchmarks/dispatch.py [--calls 20] [--rounds 2000]

It prints the median time per call of each side, the overhead (the difference) and whether it is
within the 50 µs budget (exit status 1 when it is not). Informational lines show the same call
with synchronous hooks and handler, which pay for worker-thread hand-offs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from hermes_core.config import Config
from hermes_core.dispatch import Dispatcher
from hermes_core.hookspecs import hookimpl
from hermes_core.host import Host
from hermes_core.paths import Environment
from hermes_core.session import Session
from hermes_core.specs import ToolCall
from hermes_core.tools import Tool, ToolAnnotations, ToolResult

BUDGET_US = 50.0
NOOP_RESULT = ToolResult.text("ok")


async def noop_async() -> ToolResult:
    return NOOP_RESULT


def noop_sync() -> ToolResult:
    return NOOP_RESULT


class AsyncHooks:
    """One pre hook and one post hook, written as coroutines."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    async def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.calls += 1

    @hookimpl
    async def hermes_post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        self.calls += 1


class SyncHooks:
    """The same hooks as plain functions (each runs in a worker thread)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.calls += 1

    @hookimpl
    def hermes_post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        self.calls += 1


class NoopTool:
    """The plugin providing the no-op tool."""

    def __init__(self, handler: Callable[..., Any]) -> None:
        self.handler = handler

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        annotations = ToolAnnotations(read_only=True, destructive=False)
        return [Tool("noop", "Does nothing.", handler=self.handler, annotations=annotations)]


def build(root: Path, hooks: object, handler: Callable[..., Any]) -> tuple[Host, Dispatcher]:
    """A started host holding the no-op tool, ``hooks`` and the bundled plugins (the
    ``annotations`` policy decides), and its dispatcher."""
    env = Environment(
        home=root / "home", cwd=root, variables={"HERMES_LOG_DIR": str(root / "logs")}
    )
    host = Host(Config(), env)
    host.register(NoopTool(handler), name="bench-tools")
    host.register(hooks, name="bench-hooks")
    host.start()
    return host, host.dispatcher


async def per_call_us(
    call: Callable[[], Awaitable[Any]], calls: int, rounds: int
) -> tuple[float, float]:
    """The median over ``rounds`` of the mean time per call of ``calls`` calls, and the mean
    over everything (periodic costs such as garbage collection included), in µs.

    Short rounds keep the median robust on a shared machine: a round the scheduler preempts is
    an outlier instead of the norm."""
    for _ in range(calls):  # warm caches (prepared tool, hook list, log thread)
        await call()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        samples.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(samples), statistics.fmean(samples)


async def main(calls: int, rounds: int) -> int:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        session = Session(cwd=root)
        fast_host, fast = build(root / "async", AsyncHooks(), noop_async)
        slow_host, slow = build(root / "sync", SyncHooks(), noop_sync)
        try:
            check = await fast.dispatch("noop", {}, session)
            assert not check.is_error, check.text_content

            direct, direct_mean = await per_call_us(noop_async, calls, rounds)
            dispatched, dispatched_mean = await per_call_us(
                lambda: fast.dispatch("noop", {}, session), calls, rounds
            )
            sync_direct, _ = await per_call_us(_as_async(noop_sync), calls, rounds)
            sync_dispatched, _ = await per_call_us(
                lambda: slow.dispatch("noop", {}, session), calls, max(rounds // 10, 1)
            )
        finally:
            fast_host.close()
            slow_host.close()
    overhead = dispatched - direct
    print(f"handler called directly          median {direct:8.2f} µs/call  mean {direct_mean:8.2f}")
    print(
        f"through dispatch (async hooks)   median {dispatched:8.2f} µs/call  "
        f"mean {dispatched_mean:8.2f}"
    )
    print(
        f"dispatch overhead                median {overhead:8.2f} µs/call  (budget {BUDGET_US:g})"
    )
    print(f"info: sync handler directly      median {sync_direct:8.2f} µs/call")
    print(
        f"info: sync hooks and handler     median {sync_dispatched:8.2f} µs/call "
        "(three worker-thread hand-offs)"
    )
    within = overhead < BUDGET_US
    print("within budget" if within else "OVER BUDGET")
    return 0 if within else 1


def _as_async(function: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return function()

    return call


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls per timed round")
    parser.add_argument("--rounds", type=int, default=2000, help="timed rounds")
    options = parser.parse_args()
    sys.exit(anyio.run(main, options.calls, options.rounds))

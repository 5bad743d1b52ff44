"""Dispatch overhead: a no-op tool through a real host's dispatcher against its bare handler.

The host runs in a temporary home, as a real one: a directory plugin provides the no-op tool
(deferred, so ``tool_call`` reaches it through the bridge) with one pre and one post hook, the
bundled ``approvals`` plugin's ``annotations`` policy decides, and the activity log is written.
Only the public API is used, so the same script measures an earlier revision too. Run:

    python benchmarks/dispatch.py [--calls 20] [--rounds 2000] [--baseline REV [--runs 5]]

It prints the median time per call of the handler awaited directly and through the dispatcher
(``host.dispatcher.dispatch``), the overhead (the difference) and whether it is within the
50 µs budget (exit status 1 when it is not); then ``host.dispatch`` of the same call and of a
``tool_call`` naming it, also in a host whose plugin defers 5,000 more tools (what a call costs
may grow with the catalog). Informational lines show the same call with synchronous hooks and
handler, which pay for worker-thread hand-offs. With ``--baseline REV`` this checkout and REV
are each measured in ``--runs`` subprocesses, one after the other, and a markdown table gives
the medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from _baseline import Figures, compare

from hermes_core import Config, Environment, Host, Session, ToolResult
from hermes_core.testing import write_dir_plugin

Call = Callable[[], Awaitable[ToolResult]]
BUDGET_US = 50.0
MANY = 5000
"""Deferred filler tools beside the no-op one in the host of the large-registry cases."""
PLUGIN = '''"""The benchmark's no-op tool and hooks."""

from hermes_core import Tool, ToolAnnotations, ToolResult, hookimpl

RESULT = ToolResult.text("ok")
FILLERS = {fillers}


{kind}def noop():
    return RESULT


def tool(name, description):
    return Tool(
        name,
        description,
        handler=noop,
        toolset="benchmark",
        annotations=ToolAnnotations(read_only=True, destructive=False),
    )


@hookimpl
def hermes_tools(config, env):
    fillers = [tool(f"filler_{{n}}", f"Filler tool number {{n}}.") for n in range(FILLERS)]
    return [tool("noop", "Does nothing."), *fillers]


@hookimpl
{kind}def hermes_pre_tool_call(call, session):
    return None


@hookimpl
{kind}def hermes_post_tool_call(call, result, session):
    return None
'''
CASES = {
    "handler": "handler awaited directly",
    "dispatcher": "`host.dispatcher.dispatch` (async hooks)",
    "overhead": "dispatch overhead (budget 50 µs)",
    "host": "`host.dispatch`, direct call",
    "tool_call": "`host.dispatch`, `tool_call` through the bridge",
    "many_host": f"`host.dispatch`, direct call, {MANY:,} more deferred tools",
    "many_tool_call": f"`host.dispatch`, `tool_call`, {MANY:,} more deferred tools",
    "sync_handler": "info: sync handler called directly",
    "sync_dispatcher": "info: sync hooks and handler, `host.dispatcher.dispatch`",
}


def make_host(root: Path, plugin: str, kind: str, fillers: int = 0) -> Host:
    """A host in ``root`` with the directory plugin ``plugin`` (its functions ``kind``:
    ``"async "`` or ``""``; ``fillers`` more tools beside the no-op one) enabled beside the
    bundled ones."""
    home = root / "home"
    variables = {
        "HERMES_LOG_DIR": str(root / "logs"),
        "HERMES_CACHE_DIR": str(root / "cache"),
        "HERMES_STRICT_PLUGINS": "1",
    }
    if "HERMES_BUNDLED_PLUGINS" in os.environ:  # set by _baseline: the measured tree's plugins
        variables["HERMES_BUNDLED_PLUGINS"] = os.environ["HERMES_BUNDLED_PLUGINS"]
    # The working directory holds no home: a home inside it would be the project's, gated.
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = Environment(home=home, cwd=work, variables=variables)
    write_dir_plugin(env.user_plugins_dir, plugin, PLUGIN.format(kind=kind, fillers=fillers))
    return Host(Config.model_validate({"plugins": {"enabled": [plugin]}}), env)


async def per_call(
    call: Callable[[], Awaitable[Any]], calls: int, rounds: int
) -> tuple[float, float]:
    """The median over ``rounds`` of the mean time per call of ``calls`` calls, and the mean
    over everything (periodic costs such as garbage collection included), in seconds.

    Short rounds keep the median robust on a shared machine: a round the scheduler preempts is
    an outlier instead of the norm."""
    for _ in range(calls):  # warm caches (prepared tool, hook list, log thread)
        await call()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples), statistics.fmean(samples)


def handler_of(host: Host) -> Callable[..., Any]:
    """The no-op tool's handler, as the plugin registered it."""
    tool = host.registry.get("noop")
    if tool is None or tool.handler is None:
        raise SystemExit("the benchmark plugin registered no 'noop' tool")
    return tool.handler


async def checked(call: Call) -> None:
    """Fail loudly when ``call`` does not succeed: a refused call would be timed as fast."""
    result = await call()
    if result.is_error:
        raise SystemExit(f"the benchmark call failed: {result.text_content}")


def deferred_behind_bridge(host: Host, session: Session) -> None:
    """Fail loudly unless the no-op tool is deferred, so ``tool_call`` is how a model calls
    it."""
    names = [tool.name for tool in host.assemble(200_000, session).tools]
    if "noop" in names or "tool_call" not in names:
        raise SystemExit(f"the no-op tool should be deferred behind the bridge: {names}")


def through_host(host: Host, session: Session, name: str, arguments: Any) -> Call:
    """``host.dispatch(name, arguments, session)``, as a call to time."""
    return lambda: host.dispatch(name, arguments, session)


def through_dispatcher(host: Host, session: Session) -> Call:
    """``host.dispatcher.dispatch`` of the no-op tool, as a call to time."""
    return lambda: host.dispatcher.dispatch("noop", {}, session)


async def measure(calls: int, rounds: int) -> tuple[Figures, Figures]:
    """The medians per call of every case, and the means of the two main ones."""
    few = max(rounds // 10, 1)  # for the slow cases
    bridged = {"name": "noop", "arguments": {}}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        async with (
            make_host(root / "async", "bench_async", "async ") as fast,
            make_host(root / "many", "bench_many", "async ", MANY) as many,
            make_host(root / "sync", "bench_sync", "") as slow,
        ):
            session, many_session = fast.new_session(), many.new_session()
            deferred_behind_bridge(fast, session)
            deferred_behind_bridge(many, many_session)
            handler, sync_handler = handler_of(fast), handler_of(slow)

            async def call_sync_handler() -> Any:
                return sync_handler()

            timed: dict[str, tuple[Call, int]] = {
                "dispatcher": (through_dispatcher(fast, session), rounds),
                "host": (through_host(fast, session, "noop", {}), rounds),
                "tool_call": (through_host(fast, session, "tool_call", bridged), rounds),
                "many_host": (through_host(many, many_session, "noop", {}), few),
                "many_tool_call": (through_host(many, many_session, "tool_call", bridged), few),
                "sync_dispatcher": (through_dispatcher(slow, session), few),
            }
            for call, _ in timed.values():
                await checked(call)
            figures: Figures = {}
            means: Figures = {}
            figures["handler"], means["handler"] = await per_call(handler, calls, rounds)
            for case, (call, case_rounds) in timed.items():
                figures[case], means[case] = await per_call(call, calls, case_rounds)
            figures["sync_handler"], _ = await per_call(call_sync_handler, calls, rounds)
            figures["overhead"] = figures["dispatcher"] - figures["handler"]
    return figures, means


def report(figures: Figures, means: Figures) -> None:
    """The figures of one run, one line per case."""
    us = {case: value * 1e6 for case, value in figures.items()}
    mean = {case: value * 1e6 for case, value in means.items()}
    print(f"handler called directly          median {us['handler']:8.2f} µs/call  ", end="")
    print(f"mean {mean['handler']:8.2f}")
    print(f"through dispatch (async hooks)   median {us['dispatcher']:8.2f} µs/call  ", end="")
    print(f"mean {mean['dispatcher']:8.2f}")
    print(f"dispatch overhead                median {us['overhead']:8.2f} µs/call  ", end="")
    print(f"(budget {BUDGET_US:g})")
    print(f"host.dispatch, direct call       median {us['host']:8.2f} µs/call")
    print(f"host.dispatch, tool_call         median {us['tool_call']:8.2f} µs/call")
    print(f"the same, {MANY:,} more deferred tools:")
    print(f"host.dispatch, direct call       median {us['many_host']:8.2f} µs/call")
    print(f"host.dispatch, tool_call         median {us['many_tool_call']:8.2f} µs/call")
    print(f"info: sync handler directly      median {us['sync_handler']:8.2f} µs/call")
    print(
        f"info: sync hooks and handler     median {us['sync_dispatcher']:8.2f} µs/call "
        "(three worker-thread hand-offs)"
    )


def verdict(overhead: float) -> int:
    """Print whether ``overhead`` (seconds) is within the budget; the exit status."""
    within = overhead * 1e6 < BUDGET_US
    print("within budget" if within else "OVER BUDGET")
    return 0 if within else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="calls per timed round")
    parser.add_argument("--rounds", type=int, default=2000, help="timed rounds")
    parser.add_argument("--baseline", metavar="REV", help="also measure revision REV")
    parser.add_argument("--runs", type=int, default=5, help="subprocess runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    measured = ["--calls", str(options.calls), "--rounds", str(options.rounds)]
    if options.baseline is None:
        figures, means = anyio.run(measure, options.calls, options.rounds)
        if options.json:
            print(json.dumps(figures))
            return 0
        report(figures, means)
        return verdict(figures["overhead"])
    now = compare(
        Path(__file__),
        [*measured, "--json"],
        options.baseline,
        runs=options.runs,
        cases=CASES,
        per_run=f"the figure of a run is the median over {options.rounds} rounds of "
        f"{options.calls} calls, {max(options.rounds // 10, 1)} rounds for the "
        f"{MANY:,}-tool and sync cases",
    )
    return verdict(now["overhead"])


if __name__ == "__main__":
    sys.exit(main())

"""MCP client costs: concurrent connect of three stdio servers, and the per-call overhead of a
``tool_call`` through the host's bridge over a direct SDK ``call_tool`` on the same open session.

Both comparisons run in one process against real child processes, so they hold on any machine:

- connect: the median time for ``McpSupervisor.start()`` with each server alone, then with all
  three (``mcp-server-time``, ``mcp-server-git`` and npm's ``server-everything``, the servers of
  issue 5's acceptance tests). The budget:
  all three under 1.5x the slowest single server. Starting a Python server is CPU-bound
  (imports), so on a two-core machine three of them cannot overlap fully: the floor there is
  about 1.3x, and a loaded machine can miss the budget without any fault in hermes.
- call: the median of ``echo`` through :func:`through_hermes` (``tool_call`` on a real ``Host``:
  the bridge, coercion, validation, the hooks of the bundled plugins, the ``annotations`` policy
  with ``approvals.allow``, the activity log) against ``client.call_tool`` on the same SDK
  session, interleaved. The budget: under 2 ms more per call.

Run:

    python benchmarks/mcp.py [--rounds 5] [--calls 300]

Exit status 1 when a budget is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# This script is named mcp.py: keep its folder off the import path so ``import mcp`` (inside
# hermes_core._mcp) finds the SDK and not this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402

from hermes_core._config import Config, McpServerConfig  # noqa: E402
from hermes_core._host import Host  # noqa: E402
from hermes_core._mcp import McpSupervisor  # noqa: E402
from hermes_core._paths import Environment  # noqa: E402
from hermes_core._session import Session  # noqa: E402
from hermes_core._tools import ToolResult  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOOLBOX = REPO / "tests" / "mcp" / "servers" / "toolbox.py"
CONNECT_RATIO_BUDGET = 1.5
CALL_OVERHEAD_BUDGET_MS = 2.0


async def through_hermes(
    host: Host, session: Session, name: str, arguments: Mapping[str, Any]
) -> ToolResult:
    """The "through hermes" side of the call benchmark: the model's ``tool_call``."""
    return await host.dispatch("tool_call", {"name": name, "arguments": arguments}, session)


EVERYTHING_JS = (
    REPO
    / ".cache"
    / "npm"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def servers(scratch: Path) -> dict[str, McpServerConfig]:
    """The three stdio servers of issue 5's acceptance: PyPI's time and git servers and npm's
    server-everything (installed by ``nox -s tests`` into ``.cache/npm``)."""
    node = shutil.which("node")
    if node is None or not EVERYTHING_JS.is_file():
        raise SystemExit(
            "server-everything is needed: npm install --prefix .cache/npm "
            "@modelcontextprotocol/server-everything (and Node.js on PATH)"
        )
    repo = scratch / "repo"
    repo.mkdir(exist_ok=True)
    git = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=Bench"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    python = sys.executable
    return {
        "time": McpServerConfig(
            command=python, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
        ),
        "git": McpServerConfig(
            command=python, args=["-m", "mcp_server_git", "--repository", str(repo)]
        ),
        "everything": McpServerConfig(command=node, args=[str(EVERYTHING_JS), "stdio"]),
    }


async def time_start(configs: Mapping[str, McpServerConfig], env: Environment) -> float:
    """Seconds for ``start()`` to connect and list every server in ``configs``."""
    return await _time_start(McpSupervisor(configs, env))


async def _time_start(manager: McpSupervisor) -> float:
    began = time.perf_counter()
    await manager.start()
    elapsed = time.perf_counter() - began
    try:
        states = {name: s.state for name, s in manager.status().items()}
        if set(states.values()) != {"connected"}:
            raise SystemExit(f"a server did not connect: {states}")
    finally:
        await manager.aclose()
    return elapsed


async def bench_connect(
    configs: Mapping[str, McpServerConfig], env: Environment, rounds: int
) -> tuple[dict[str, float], float]:
    singles: dict[str, list[float]] = {name: [] for name in configs}
    together: list[float] = []
    for _ in range(rounds):
        for name, config in configs.items():
            singles[name].append(await time_start({name: config}, env))
        together.append(await time_start(configs, env))
    return {n: statistics.median(v) for n, v in singles.items()}, statistics.median(together)


async def bench_call(config: McpServerConfig, env: Environment, calls: int) -> tuple[float, float]:
    settings = Config.model_validate(
        {
            "mcp_servers": {"toolbox": config.model_dump()},
            "approvals": {"allow": ["mcp__toolbox__echo"]},
        }
    )
    arguments = {"text": "benchmark"}
    direct: list[float] = []
    hermes: list[float] = []
    async with Host(settings, env) as host:
        assert host.mcp is not None
        connection = host.mcp.connection("toolbox")
        assert connection is not None
        client = connection.client
        session = host.new_session()
        name = "mcp__toolbox__echo"
        for _ in range(20):  # warm up both paths
            await client.call_tool("echo", arguments)
            await through_hermes(host, session, name, arguments)
        for _ in range(calls):
            began = time.perf_counter()
            await client.call_tool("echo", arguments)
            direct.append(time.perf_counter() - began)
            began = time.perf_counter()
            result = await through_hermes(host, session, name, arguments)
            hermes.append(time.perf_counter() - began)
            if result.is_error:
                raise SystemExit(f"the call failed: {result.error_message}")
    return statistics.median(direct), statistics.median(hermes)


async def main(rounds: int, calls: int) -> int:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-mcp-") as scratch_dir:
        scratch = Path(scratch_dir)
        (scratch / "home").mkdir()
        env = Environment(
            home=scratch / "home",
            cwd=scratch,
            variables={"HERMES_LOG_DIR": str(scratch / "logs"), "HERMES_CACHE_DIR": str(scratch)},
        )
        configs = servers(scratch)
        singles, together = await bench_connect(configs, env, rounds)
        toolbox = McpServerConfig(command=sys.executable, args=[str(TOOLBOX), "--sdk"])
        direct, hermes = await bench_call(toolbox, env, calls)

    slowest = max(singles.values())
    ratio = together / slowest
    overhead_ms = (hermes - direct) * 1000
    print(f"MCP connect (median of {rounds} rounds)")
    print(f"  {'servers':<28}{'median':>12}")
    for name, seconds in singles.items():
        print(f"  {name + ' alone':<28}{seconds * 1000:>10.1f} ms")
    print(f"  {'all three, concurrently':<28}{together * 1000:>10.1f} ms")
    print(f"  {'(one after another: sum)':<28}{sum(singles.values()) * 1000:>10.1f} ms")
    connect_ok = ratio < CONNECT_RATIO_BUDGET
    print(
        f"  ratio all/slowest: {ratio:.2f} (budget < {CONNECT_RATIO_BUDGET}) "
        f"{'ok' if connect_ok else 'MISSED'}"
    )
    print(f"MCP call of toolbox echo (median of {calls} calls)")
    print(f"  {'direct client.call_tool':<28}{direct * 1000:>10.3f} ms")
    print(f"  {'tool_call through the host':<28}{hermes * 1000:>10.3f} ms")
    call_ok = overhead_ms < CALL_OVERHEAD_BUDGET_MS
    print(
        f"  overhead: {overhead_ms:.3f} ms, ratio {hermes / direct:.2f} "
        f"(budget < {CALL_OVERHEAD_BUDGET_MS} ms) {'ok' if call_ok else 'MISSED'}"
    )
    return 0 if connect_ok and call_ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="connect rounds (default 5)")
    parser.add_argument("--calls", type=int, default=300, help="calls per side (default 300)")
    options = parser.parse_args()
    sys.exit(anyio.run(main, options.rounds, options.calls))

"""Where ``hermes serve`` spends its start, phase by phase, in CPU seconds (issue 32).

Writes the synthetic catalog of ``benchmarks/host_scale.py`` (``--tools``, 330,000 by default;
0 for a home with no catalog), fills the cache directory with one ``hermes tools search`` run,
then in a fresh interpreter goes through what ``hermes serve`` does before it answers
``tools/list``, timing each phase by the process's CPU time (the machine is shared: CPU time
moves less with the neighbours' load than wall time, and both are printed): importing
hermes_core, the MCP SDK (what the SDK's own echo server also pays), the rest of
``hermes_core._serve``, the host's start (plugins, catalogs), the tool split, the first
``assemble`` (the listing built) and the ``tools/list`` answer, with the cyclic collector
paused until the listing is built, as ``hermes serve`` runs its start.

Paired with the MCP SDK's echo server (``tests/mcp/servers/toolbox.py --sdk``), in ``--rounds``
alternated rounds: the echo server's own import of the SDK timed the same way (what it spends
before it can answer), and both servers spawned over stdio and asked ``initialize`` and
``tools/list`` (wall seconds to the answer and the process's CPU seconds), medians printed with
the load average.

    python benchmarks/serve_start.py [--tools 330000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from host_scale import (  # benchmarks/ is on the path
    ECHO_SERVER,
    probe_json,
    serve_once,
    spawn_medians,
    write_catalog,
)

PHASES = """
import time
marks = [("", time.process_time(), time.perf_counter())]
def mark(name):
    marks.append((name, time.process_time(), time.perf_counter()))
import json, sys
from pathlib import Path
import hermes_core
try:  # as `hermes serve` runs its start (issue 32); an older tree has no pause
    from hermes_core._gc_pause import pause_for_start, end_start_pause
except ImportError:
    pause_for_start = end_start_pause = lambda: None
pause_for_start()
mark("import hermes_core")
import mcp
mark("import the MCP SDK")
from hermes_core._serve.server import HostServer
from hermes_core._serve.transports import serving_host
mark("import the rest of hermes_core._serve")
import anyio
from hermes_core import Config, Environment, Host
config = Config.model_validate(json.loads(Path(sys.argv[1]).read_text()))
async def main():
    async with Host(config, Environment.from_process(), mcp_reconnect=True) as host:
        mark("host start (plugins, catalogs)")
        served = HostServer(host, context_length=None, session_scope="connection")
        host.prepare_tools()
        mark("tool split (prepare_tools)")
        served.tools()
        end_start_pause()
        mark("first assemble, as MCP tools")
        served.tools(served.session_for_request())
        mark("the tools/list answer")
anyio.run(main)
print(json.dumps([(b, c1 - c0, w1 - w0) for (_, c0, w0), (b, c1, w1) in zip(marks, marks[1:])]))
"""


# What the echo server imports before it serves (tests/mcp/servers/toolbox.py --sdk's imports).
ECHO_IMPORTS = """
import time
c, w = time.process_time(), time.perf_counter()
import argparse, os
import anyio
import mcp_types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
print(time.process_time() - c, time.perf_counter() - w)
"""


def _phases(env: dict[str, str], root: Path, config: Path) -> list[tuple[str, float, float]]:
    return [
        (name, cpu, wall)
        for name, cpu, wall in probe_json("phases", PHASES, [str(config)], env, root)
    ]


def _echo_import(env: dict[str, str], root: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", ECHO_IMPORTS],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=330_000, help="catalog size (0: none)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (default 3)")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-serve-start-"))
    try:
        home = root / "home"
        home.mkdir()
        config: dict[str, object] = {}
        if options.tools:
            write_catalog(root / "catalog.json", options.tools)
            config = {"tools": {"catalogs": [{"path": str(root / "catalog.json")}]}}
        (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(root),
            "HERMES_HOME": str(home),
            "HERMES_CACHE_DIR": str(root / "cache"),
            "HERMES_LOG_DIR": str(root / "logs"),
        }
        warm = [sys.executable, "-m", "hermes_core", "tools", "search", "create issue"]
        subprocess.run(warm, env=env, cwd=root, check=True, stdout=subprocess.DEVNULL)
        rounds: list[list[tuple[str, float, float]]] = []
        echo_imports: list[float] = []
        served: list[tuple[float, float, int, float]] = []
        echoed: list[tuple[float, float, int, float]] = []
        hermes = [sys.executable, "-m", "hermes_core", "serve"]
        load = os.getloadavg()[0]
        echo_server = [sys.executable, str(ECHO_SERVER), "--sdk"]
        for number in range(options.rounds):
            steps = ["phases", "echo imports", "serve", "echo"]
            for step in steps if number % 2 == 0 else steps[::-1]:
                if step == "phases":
                    rounds.append(_phases(env, root, home / "config.yaml"))
                elif step == "echo imports":
                    echo_imports.append(_echo_import(env, root))
                elif step == "serve":
                    served.append(serve_once(hermes, env, root))
                else:
                    echoed.append(serve_once(echo_server, env, root))
        load = max(load, os.getloadavg()[0])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    phases = [
        (
            name,
            statistics.median(r[i][1] for r in rounds),
            statistics.median(r[i][2] for r in rounds),
        )
        for i, (name, _, _) in enumerate(rounds[0])
    ]
    total_cpu = sum(cpu for _, cpu, _ in phases)
    print(
        f"hermes serve's start, {options.tools:,} catalog tools (warm cache); medians of "
        f"{options.rounds} alternated rounds, load average up to {load:.2f}\n"
    )
    print("| phase | CPU s | share of CPU | wall s |\n|---|---|---|---|")
    for name, cpu, wall in phases:
        print(f"| {name} | {cpu:.3f} | {cpu / total_cpu:.0%} | {wall:.3f} |")
    print(f"| all | {total_cpu:.3f} | 100% | {sum(wall for _, _, wall in phases):.3f} |")
    sdk = next(cpu for name, cpu, _ in phases if name == "import the MCP SDK")
    echo_sdk = statistics.median(echo_imports)
    print(
        f"\nthe echo server's imports: {echo_sdk:.3f} s CPU; hermes serve's start beyond its "
        f"SDK import: {total_cpu - sdk:.3f} s CPU ({(total_cpu - sdk) / echo_sdk:.2f}x the echo "
        "server's imports)"
    )
    whole, cpu_serve = spawn_medians(served)
    echo, cpu_echo = spawn_medians(echoed)
    print(
        f"spawn to the tools/list answer (stdio): hermes serve {whole:.2f} s ({cpu_serve:.2f} s "
        f"CPU in all), the echo server {echo:.2f} s ({cpu_echo:.2f} s CPU): {whole / echo:.2f}x "
        f"its wall time (+{whole - echo:.2f} s), {cpu_serve / cpu_echo:.2f}x its CPU"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

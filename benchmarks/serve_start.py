"""Where ``hermes serve`` spends its start, phase by phase, in CPU seconds (issue 32).

Writes the synthetic catalog of ``benchmarks/host_scale.py`` (``--tools``, 330,000 by default;
0 for a home with no catalog), fills the cache directory with one ``hermes tools search`` run,
then in a fresh interpreter goes through what ``hermes serve`` does before it answers
``tools/list``, timing each phase by the process's CPU time (the machine is shared: CPU time
moves less with the neighbours' load than wall time, and both are printed): importing
hermes_core, the MCP SDK (what the SDK's own echo server also pays), the rest of
``hermes_core._serve``, the host's start (plugins, catalogs), the tool split, the first
``assemble`` (the listing built) and the ``tools/list`` answer.

    python benchmarks/serve_start.py [--tools 330000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from host_scale import write_catalog  # benchmarks/ is on the script's path

PHASES = """
import time
marks = [("", time.process_time(), time.perf_counter())]
def mark(name):
    marks.append((name, time.process_time(), time.perf_counter()))
import json, sys
from pathlib import Path
import hermes_core
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
        mark("first assemble, as MCP tools")
        served.tools(served.session_for_request())
        mark("the tools/list answer")
anyio.run(main)
print(json.dumps([(b, c1 - c0, w1 - w0) for (_, c0, w0), (b, c1, w1) in zip(marks, marks[1:])]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=330_000, help="catalog size (0: none)")
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
        done = subprocess.run(
            [sys.executable, "-c", PHASES, str(home / "config.yaml")],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the phases probe failed:\n{done.stderr}")
        phases = json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    total_cpu = sum(cpu for _, cpu, _ in phases)
    print(f"hermes serve's start, {options.tools:,} catalog tools (warm cache)\n")
    print("| phase | CPU s | share of CPU | wall s |\n|---|---|---|---|")
    for name, cpu, wall in phases:
        print(f"| {name} | {cpu:.3f} | {cpu / total_cpu:.0%} | {wall:.3f} |")
    print(f"| all | {total_cpu:.3f} | 100% | {sum(wall for _, _, wall in phases):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

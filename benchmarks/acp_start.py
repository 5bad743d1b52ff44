"""How fast ``hermes acp`` answers an editor: spawn, ``initialize`` answered.

Times as subprocesses (wall clock, N repetitions, interleaved so drift hits both alike), in a
temporary home with the bundled plugins:

- ``hermes --version`` (the baseline: the interpreter and the command line);
- ``hermes acp``: spawned with pipes, one ``initialize`` request written, until its answer is
  read (budget: 1000 ms median, the acceptance of issue 31 on an idle 2-core machine). The
  process is then ended by closing its stdin (not timed).

Prints the median of each, the ratio, and whether the budget holds; exit status 1 when it does
not.

    python benchmarks/acp_start.py [--repeat 20] [--budget-ms 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    + "\n"
).encode()


def _variables(root: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(root / "user-home"),
        "HERMES_HOME": str(root / "home"),
        "HERMES_LOG_DIR": str(root / "logs"),
        "HERMES_CACHE_DIR": str(root / "cache"),
    }


def time_version(env: dict[str, str], cwd: Path) -> float:
    """Milliseconds of ``hermes --version``."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "hermes_core", "--version"],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    return (time.perf_counter() - start) * 1000


def time_initialize(env: dict[str, str], cwd: Path) -> float:
    """Milliseconds from spawning ``hermes acp`` to reading its ``initialize`` answer."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_core", "acp"],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        took = (time.perf_counter() - start) * 1000
        if answer.get("id") != 0 or "result" not in answer:
            raise SystemExit(f"hermes acp did not answer initialize: {answer}")
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return took


def main() -> int:
    """Run the measurement and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--budget-ms", type=float, default=1000.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for name in ("home", "project", "logs", "cache"):
            (root / name).mkdir()
        env = _variables(root)
        cwd = root / "project"
        time_initialize(env, cwd)  # warm the file system cache and the bytecode
        version: list[float] = []
        initialize: list[float] = []
        for _ in range(options.repeat):
            version.append(time_version(env, cwd))
            initialize.append(time_initialize(env, cwd))
    base = statistics.median(version)
    acp = statistics.median(initialize)
    holds = acp <= options.budget_ms
    print(f"hermes --version            median {base:7.1f} ms")
    print(
        f"hermes acp: initialize      median {acp:7.1f} ms  ({acp / base:.2f}x --version; "
        f"budget {options.budget_ms:g} ms: {'holds' if holds else 'EXCEEDED'})"
    )
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())

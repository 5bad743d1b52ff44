"""Per-request cost of ``hermes serve`` over stdio, this checkout against another revision.

Both servers run at once, each a ``python -m hermes_core serve`` child in its own temporary
home (the revision's ``hermes_core`` and bundled plugins extracted by ``git archive``,
``benchmarks/_baseline.py``), initialized, then asked the same requests in ``--rounds``
rounds, the order of the two alternating round by round so the machine's noise falls on both
alike. Each request is sent once the previous answer was read (a client waiting on a model's
call); the wall time from the write to the answer's line is timed:

- ``ping``: the transport and the SDK's session alone;
- ``tools/call`` of ``read_file`` on a small file: a call through the host's call path;
- ``ping`` carrying 5 MB of padding: reading a large line (a ``write_file`` of a big file).

Medians and p90 in microseconds are printed per case with the ratio this checkout / revision,
and the server process's CPU time per request (all its threads, from ``/proc``: it moves less
with the neighbours' load than wall time on a shared machine).

    python benchmarks/serve_stdio.py [--against main] [--rounds 20] [--requests 50]
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
from collections.abc import Mapping
from pathlib import Path

from _baseline import ROOT, load_average, revision_tree, tree_variables

CASES = ("ping", "read_file", "ping 5 MB")


class Served:
    """One ``hermes serve`` child over stdio, asked one request at a time."""

    def __init__(self, env: Mapping[str, str], work: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_core", "serve"],
            env=dict(env),
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        client = {"name": "serve-stdio-benchmark", "version": "1"}
        self.ask("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo=client)
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, message: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def ask(self, method: str, **params: object) -> float:
        """Seconds from sending the request to reading its answer."""
        assert self.process.stdout is not None
        self.next_id += 1
        started = time.perf_counter()
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while line := self.process.stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(f"{method} failed: {answer['error']}")
                return time.perf_counter() - started
        raise SystemExit(f"hermes serve ended before answering {method}")

    def cpu(self) -> float:
        """CPU seconds the process has used so far (user and system, every thread)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def one(served: Served, case: str, small: Path, padding: str) -> float:
    if case == "ping":
        return served.ask("ping")
    if case == "read_file":
        return served.ask("tools/call", name="read_file", arguments={"path": str(small)})
    return served.ask("ping", padding=padding)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="of each case per round")
    options = parser.parse_args()
    padding = "x" * 5_000_000
    times: dict[str, dict[str, list[float]]] = {"this": {}, "base": {}}
    cpu: dict[str, dict[str, float]] = {"this": {}, "base": {}}
    with (
        tempfile.TemporaryDirectory(prefix="serve-stdio-") as scratch,
        revision_tree(options.against) as tree,
    ):
        root = Path(scratch)
        small = root / "small.txt"
        small.write_text("a small file\n" * 20)
        servers: dict[str, Served] = {}
        for name, code in (("this", ROOT), ("base", tree)):
            home = root / name
            (home / "work").mkdir(parents=True)
            variables = {
                "PATH": os.environ.get("PATH", os.defpath),
                "HOME": str(home),
                "HERMES_HOME": str(home / "hermes"),
                "HERMES_CACHE_DIR": str(home / "cache"),
                "HERMES_LOG_DIR": str(home / "logs"),
            }
            servers[name] = Served(tree_variables(code, variables), home / "work")
        for name in servers:
            for case in CASES:
                one(servers[name], case, small, padding)  # warm up
                times[name][case] = []
                cpu[name][case] = 0.0
        for number in range(options.rounds):
            order = ["this", "base"] if number % 2 == 0 else ["base", "this"]
            for case in CASES:
                for name in order:
                    count = options.requests if case != "ping 5 MB" else 5
                    before = servers[name].cpu()
                    times[name][case] += [
                        one(servers[name], case, small, padding) for _ in range(count)
                    ]
                    cpu[name][case] += servers[name].cpu() - before
        for served in servers.values():
            served.close()
    print(f"load average {load_average()}; medians (p90) in µs, {options.rounds} rounds")
    against = options.against
    print(f"| case | this checkout | {against} | ratio | CPU/request: this | {against} |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        cells = []
        for name in ("this", "base"):
            values = sorted(times[name][case])
            p90 = values[int(len(values) * 0.9)]
            cells.append((statistics.median(values) * 1e6, p90 * 1e6))
        ratio = cells[0][0] / cells[1][0]
        shown = [f"{median:.0f} ({p90:.0f})" for median, p90 in cells]
        used = [cpu[name][case] / len(times[name][case]) * 1e6 for name in ("this", "base")]
        print(
            f"| {case} | {shown[0]} | {shown[1]} | {ratio:.2f}x | {used[0]:.0f} | {used[1]:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

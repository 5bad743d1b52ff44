"""``hermes serve --transport http`` against the MCP SDK's echo server over streamable HTTP
(issue 32): ``tools/list`` requests a second from one client, one after the other, and the
server's CPU time a request (from ``/proc``), alternating the servers in the same run.

The echo server (``sdk_server`` of ``tests/mcp/servers/toolbox.py``) is run stateless like
``hermes serve`` and, with ``--stateful``, also with its sessions (the SDK's default), to tell
the cost of the stateless mode from hermes's own. ``hermes serve`` runs on an empty home with
``--no-auth``. Linux only (``/proc``).

    python benchmarks/serve_http.py [--rounds 3] [--requests 300] [--stateful]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TOOLBOX = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "servers"
ECHO = f"""
import sys, uvicorn
sys.path.insert(0, {str(TOOLBOX)!r})
from toolbox import sdk_server
app = sdk_server().streamable_http_app(stateless_http=sys.argv[2] == "stateless")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _switches(pid: int) -> tuple[int, int]:
    """Context switches of all the process's threads (voluntary: it waited), and its threads."""
    total, threads = 0, 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        threads += 1
        for line in (task / "status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total, threads


def _request(method: str, request_id: int | None, **params: object) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
        message["params"] = params
    return json.dumps(message)


def measure(mode: str, requests: int, home: Path) -> tuple[float, float, float, int, float, int]:
    """Requests a second, the server's and the client's CPU milliseconds a request, the bytes
    of one answer, the server's voluntary context switches a request and its threads."""
    port = _free_port()
    if mode == "hermes":
        env = dict(
            os.environ,
            HOME=str(home),
            HERMES_HOME=str(home / "home"),
            HERMES_CACHE_DIR=str(home / "cache"),
            HERMES_LOG_DIR=str(home / "logs"),
        )
        command = [sys.executable, "-m", "hermes_core", "serve", "--transport", "http"]
        command += ["--port", str(port), "--no-auth"]
        server = subprocess.Popen(command, env=env, cwd=home, stderr=subprocess.DEVNULL)
    else:
        server = subprocess.Popen([sys.executable, "-c", ECHO, str(port), mode])
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with httpx.Client(timeout=60) as client:
            initialize = _request(
                "initialize",
                1,
                protocolVersion="2025-11-25",
                capabilities={},
                clientInfo={"name": "serve-http-benchmark", "version": "1"},
            )
            for _ in range(600):
                try:
                    answer = client.post(url, headers=HEADERS, content=initialize)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            else:
                raise SystemExit(f"{mode} did not start")
            headers = dict(HEADERS)
            if "mcp-session-id" in answer.headers:
                headers["mcp-session-id"] = answer.headers["mcp-session-id"]
            client.post(url, headers=headers, content=_request("notifications/initialized", None))
            cpu, start = _cpu_seconds(server.pid), time.perf_counter()
            mine = time.process_time()
            switched = _switches(server.pid)[0]
            for index in range(requests):
                answer = client.post(
                    url, headers=headers, content=_request("tools/list", index + 2)
                )
                if answer.status_code != 200:
                    raise SystemExit(f"{mode}: tools/list answered {answer.status_code}")
            took = time.perf_counter() - start
            mine = time.process_time() - mine
            switched_now, threads = _switches(server.pid)
            cpu = _cpu_seconds(server.pid) - cpu
    finally:
        server.terminate()
        server.wait()
    per = 1000 / requests
    waits = (switched_now - switched) / requests
    return requests / took, cpu * per, mine * per, len(answer.content), waits, threads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--stateful", action="store_true", help="the echo server stateful too")
    options = parser.parse_args()
    modes = ["stateless", "hermes"] + (["stateful"] if options.stateful else [])
    results: dict[str, list[tuple[float, float, float, int, float, int]]] = {
        mode: [] for mode in modes
    }
    home = Path(tempfile.mkdtemp(prefix="hermes-serve-http-"))
    try:
        (home / "home").mkdir()
        (home / "home" / "config.yaml").write_text("{}\n", encoding="utf-8")
        for _ in range(options.rounds):
            for mode in modes:
                results[mode].append(measure(mode, options.requests, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    rate = {mode: statistics.median(row[0] for row in rows) for mode, rows in results.items()}
    cpu = {mode: statistics.median(row[1] for row in rows) for mode, rows in results.items()}
    client = {mode: statistics.median(row[2] for row in rows) for mode, rows in results.items()}
    print(
        "| server | tools/list req/s (median) | server CPU ms a request "
        "| client CPU ms a request | answer bytes | server waits a request | threads |"
        "\n|---|---|---|---|---|---|---|"
    )
    for mode in modes:
        name = "hermes serve" if mode == "hermes" else f"SDK echo server, {mode}"
        size, threads = results[mode][0][3], results[mode][0][5]
        waits = statistics.median(row[4] for row in results[mode])
        print(
            f"| {name} | {rate[mode]:.0f} | {cpu[mode]:.2f} | {client[mode]:.2f} | {size:,} "
            f"| {waits:.1f} | {threads} |"
        )
    print(
        f"\nhermes serve: {rate['hermes'] / rate['stateless']:.2f}x the stateless echo server's "
        f"requests a second at {cpu['hermes'] / cpu['stateless']:.2f}x its CPU a request"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``hermes acp`` as a child process answers a line it cannot take as JSON-RPC the way
JSON-RPC 2.0 says (a parse error ``-32700``, an invalid request ``-32600``, both with
``"id": null``; a line longer than 64 MiB an invalid request, never held whole) and keeps
serving the same connection afterwards."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from typing import Any

import pytest

from hermes_core.testing import HermesCli
from tests.peak_rss import child_peak_rss_growth

pytestmark = pytest.mark.subprocess

# A guard against a hang, not a performance check.
WAIT_LIMIT = 30
MIB = 1024 * 1024


class Wire:
    """The client's end of a ``hermes acp`` child: write lines, read its answers."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pending = b""

    def close(self) -> int:
        """End the input, as an editor closing: the exit status (killed if it outlives
        WAIT_LIMIT)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=WAIT_LIMIT)
        finally:
            self.process.kill()
            self.process.wait()
            self.process.stdout.close()

    def send(self, line: bytes) -> None:
        self.write(line + b"\n")

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send_long(self, mib: int) -> None:
        """A request line of more than ``mib`` MiB, written a MiB at a time."""
        self.write(b'{"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {"pad": "')
        for _ in range(mib):
            self.write(b"x" * MIB)
        self.send(b'"}}')

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}
        self.send(json.dumps(message).encode())

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        give_up = time.monotonic() + WAIT_LIMIT
        while b"\n" not in self.pending:
            left = give_up - time.monotonic()
            assert left > 0, "hermes acp answered nothing"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, "hermes acp closed its stdout"
                self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer


def _start(hermes_cli: HermesCli) -> Wire:
    with (hermes_cli.root / "stderr.log").open("wb") as stderr:
        process = subprocess.Popen(
            hermes_cli.command("acp"),
            cwd=hermes_cli.work,
            env=hermes_cli.variables(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    return Wire(process)


def _error(answer: dict[str, Any]) -> tuple[Any, int]:
    assert answer["jsonrpc"] == "2.0", answer
    return answer["id"], answer["error"]["code"]


def test_lines_that_are_not_json_rpc_get_their_errors_and_the_connection_goes_on(
    hermes_cli: HermesCli,
) -> None:
    wire = _start(hermes_cli)
    try:
        wire.send(b"hello, is this thing on?")  # the first line: before the SDK is loaded
        assert _error(wire.receive()) == (None, -32700)
        wire.request(1, "initialize", {"protocolVersion": 1})
        initialized = wire.receive()
        assert initialized["id"] == 1
        assert initialized["result"]["agentInfo"]["name"] == "hermes"
        wire.send(b'{"jsonrpc": "2.0", "id": 2, "method": ')  # cut short
        assert _error(wire.receive()) == (None, -32700)
        wire.send(b"[1, 2]")  # valid JSON, not a request (ACP has no batches)
        assert _error(wire.receive()) == (None, -32600)
        wire.send(b"42")
        assert _error(wire.receive()) == (None, -32600)
        wire.send(b'{"jsonrpc": "2.0"}')  # an object, but neither request nor response
        assert _error(wire.receive()) == (None, -32600)
        wire.request(3, "no/such_method")
        assert _error(wire.receive()) == (3, -32601)
        wire.request(4, "initialize", {"protocolVersion": 1})
        assert wire.receive()["result"]["protocolVersion"] == 1
    finally:
        status = wire.close()
    logged = (hermes_cli.root / "stderr.log").read_text()
    assert status == 0, logged
    # Each noted on stderr once, under the command's own prefix (it read "hermes acp: warning:
    # hermes_core._acp.framing: hermes acp: a line ...").
    noted = [line for line in logged.splitlines() if "answered with -32" in line]
    assert len(noted) == 5, logged
    assert all(line.count("hermes acp:") == 1 for line in noted), logged


def test_a_first_line_nested_too_deep_to_read_gets_a_parse_error_and_the_connection_goes_on(
    hermes_cli: HermesCli,
) -> None:
    # The first line is read before the SDK loads. Past Python's recursion json.loads raises
    # RecursionError, not ValueError: it ended hermes acp with a traceback, no answer sent.
    wire = _start(hermes_cli)
    try:
        wire.send(b"[" * 100_000 + b"]" * 100_000)
        assert _error(wire.receive()) == (None, -32700)
        wire.request(1, "initialize", {"protocolVersion": 1})
        assert wire.receive()["result"]["agentInfo"]["name"] == "hermes"
    finally:
        status = wire.close()
    assert status == 0, (hermes_cli.root / "stderr.log").read_text()


def test_a_line_past_64_mib_is_refused_without_being_held_and_the_connection_goes_on(
    hermes_cli: HermesCli,
) -> None:
    # Past the reader's 50 MiB limit, a line was read whole all the same.
    wire = _start(hermes_cli)
    try:
        wire.request(1, "initialize", {"protocolVersion": 1})
        assert wire.receive()["id"] == 1
        wire.request(2, "no/such_method")  # the SDK is loaded: its connection reads the lines
        assert _error(wire.receive()) == (2, -32601)
        with child_peak_rss_growth(wire.process.pid) as peak:
            wire.send_long(160)
            assert _error(wire.receive()) == (None, -32600)
            wire.request(3, "initialize", {"protocolVersion": 1})
            assert wire.receive()["result"]["protocolVersion"] == 1
    finally:
        status = wire.close()
    logged = (hermes_cli.root / "stderr.log").read_text()
    assert status == 0, logged
    assert peak.grown < 100, f"hermes acp grew by {peak.grown:.0f} MiB reading a 160 MiB line"
    assert "longer than 64 MiB" in logged, logged


def test_a_first_line_past_64_mib_is_refused_and_the_connection_goes_on(
    hermes_cli: HermesCli,
) -> None:
    # The first line, read before the SDK loads, was gathered by copying all of it at every
    # read: 65 MiB took minutes, and nothing was answered meanwhile.
    wire = _start(hermes_cli)
    try:
        wire.send_long(65)
        assert _error(wire.receive()) == (None, -32600)
        wire.request(1, "initialize", {"protocolVersion": 1})
        assert wire.receive()["result"]["agentInfo"]["name"] == "hermes"
    finally:
        status = wire.close()
    assert status == 0, (hermes_cli.root / "stderr.log").read_text()

"""``hermes serve`` as a process: a bad configuration stops it before it serves, with the reason;
over stdio it ends when the client closes stdin, or on SIGTERM while the client still holds
stdin open, and either way the host's MCP server children end with it, and so do the processes
those servers started themselves. Every request read before stdin closed is answered (its
result, or ``-32000`` "Connection closed" for one cut short), none left without an answer."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from serving import (
    ServeHome,
    late_server,
    processes_mentioning,
    raw_stdio,
    spawner_server,
    wait_for_processes,
)

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    }
)


def start(served: ServeHome, *serve_args: str) -> subprocess.Popen[str]:
    return served.cli.start("serve", *serve_args, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)


def initialize(process: subprocess.Popen[str]) -> dict[str, object]:
    """Send ``initialize`` and read its answer: the host has started once it comes."""
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(INITIALIZE + "\n")
    process.stdin.flush()
    answer: dict[str, object] = json.loads(process.stdout.readline())
    return answer


@pytest.mark.subprocess
def test_closing_stdin_ends_serve_its_mcp_server_children_and_their_children(
    served: ServeHome,
) -> None:
    ready = served.root / "late-server-may-answer"
    ready.touch()
    grandchild = str(served.root / "grandchild")
    served.write_config(
        mcp_servers={
            "late": late_server(ready, connect_timeout=30),
            "spawn": spawner_server(grandchild),
        }
    )
    with start(served) as process:
        assert "result" in initialize(process)
        wait_for_processes(str(ready), 1)  # the late MCP server
        wait_for_processes(grandchild, 2)  # the spawner and its child
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    assert processes_mentioning(str(ready)) == []
    assert processes_mentioning(grandchild) == []


@pytest.mark.subprocess
def test_every_request_sent_before_stdin_closes_is_answered(served: ServeHome) -> None:
    # A client that sends its calls and closes stdin at once (a script piping its requests):
    # calls cut short by the end are answered "Connection closed", never left unanswered.
    (served.work / "notes.txt").write_text("hello\n")
    served.write_config()
    calls = range(1, 6)
    with raw_stdio(served) as wire:
        wire.initialize()
        params = {"name": "read_file", "arguments": {"path": "notes.txt"}}
        wire.write(
            b"".join(
                json.dumps(
                    {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
                ).encode()
                + b"\n"
                for n in calls
            )
        )
        assert wire.close() == 0
        assert wire.process.stdout is not None
        rest = wire.pending + wire.process.stdout.read()
    answers = [json.loads(line) for line in rest.splitlines() if line.strip()]
    answered = {answer["id"]: answer for answer in answers if "id" in answer}
    assert sorted(answered) == list(calls), answers
    for answer in answered.values():
        if "error" in answer:
            assert answer["error"] == {"code": -32000, "message": "Connection closed"}, answer
        else:
            assert answer["result"]["content"][0]["text"] == "hello\n", answer


@pytest.mark.slow  # about 8 s: serve, its servers and their children as processes
@pytest.mark.subprocess
def test_sigterm_ends_serve_its_mcp_server_children_and_their_children_while_stdin_is_open(
    served: ServeHome,
) -> None:
    ready = served.root / "late-server-may-answer"
    ready.touch()
    grandchild = str(served.root / "grandchild")
    served.write_config(
        mcp_servers={
            "late": late_server(ready, connect_timeout=30),
            "spawn": spawner_server(grandchild),
        }
    )
    with start(served) as process:
        assert "result" in initialize(process)
        wait_for_processes(str(ready), 1)  # the late MCP server
        wait_for_processes(grandchild, 2)  # the spawner and its child
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert status == -signal.SIGTERM
    assert processes_mentioning(str(ready)) == []
    assert processes_mentioning(grandchild) == []


@pytest.mark.subprocess
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unknown_search_backend_stops_serve_before_it_serves(
    served: ServeHome, transport: str
) -> None:
    served.write_config(tools={"tool_search": {"backend": "no-such-backend"}})
    done = subprocess.run(
        served.command("--transport", transport, "--port", "0"),
        env=served.variables(),
        cwd=served.work,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown search backend 'no-such-backend'" in done.stderr
    assert "valid names: bm25" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow  # about 7 s a transport: serve and servers still connecting
@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("transport", "status_on_sigterm"), [("stdio", -signal.SIGTERM), ("http", 0)]
)
def test_sigterm_while_mcp_servers_are_still_connecting_ends_serve_and_its_children(
    served: ServeHome, transport: str, status_on_sigterm: int
) -> None:
    # The late server never answers (its file does not exist), so the start waits for its
    # 30 s connect_timeout; a signal then must not leave it running.
    never = served.root / "late-server-never-answers"
    served.write_config(mcp_servers={"late": late_server(never, connect_timeout=30)})
    with start(served, "--transport", transport, "--port", "0") as process:
        deadline = time.monotonic() + 20
        while not processes_mentioning(str(never)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_mentioning(str(never)), "the late MCP server child did not start"
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=15)
        finally:
            if process.poll() is None:
                process.kill()
    assert status == status_on_sigterm
    assert processes_mentioning(str(never)) == []

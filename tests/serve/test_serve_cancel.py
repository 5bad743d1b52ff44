"""A call of ``hermes serve`` that its client gives up on stops, as a real process driven by the
``mcp`` SDK client: over stdio the client's ``notifications/cancelled`` ends a ``terminal``
command's process and is passed on to the upstream MCP server of a deferred tool; over HTTP a
2026-07-28 client closing its call's stream, or a client dropping the connection, ends the
command. Serving goes on after each."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx
import mcp_types
import pytest
from mcp import Client
from serving import (
    TOOLBOX_SERVER,
    ServeHome,
    http_serve,
    processes_mentioning,
    raw_stdio,
    served_tools_once_listed,
    spawner_server,
)

pytestmark = pytest.mark.subprocess

ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]
# Guards against a hang, not performance checks.
APPEAR_LIMIT = 60
END_LIMIT = 30


def slow_command(marker: str) -> str:
    """A shell command whose long-running process has ``marker`` on its command line."""
    return f'{sys.executable} -c "import time; time.sleep(300)" {marker}; echo finished'


async def until(check: Any, limit: float, what: str) -> None:
    """Wait until ``check()`` is true; fail naming ``what`` after ``limit`` seconds."""
    give_up = time.monotonic() + limit
    while not check():
        if time.monotonic() > give_up:
            pytest.fail(f"{what} within {limit:g} s")
        await anyio.sleep(0.1)


async def call_then_cancel(
    client: Client, name: str, arguments: dict[str, Any], marker: str
) -> None:
    """Call ``name`` and cancel the call once a process mentioning ``marker`` runs."""
    async with anyio.create_task_group() as group:
        group.start_soon(client.call_tool, name, arguments)
        await until(
            lambda: processes_mentioning(marker), APPEAR_LIMIT, f"no process mentioning {marker}"
        )
        group.cancel_scope.cancel()


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


@pytest.mark.parametrize("mode", ERAS)
def test_a_terminal_call_the_client_cancels_over_stdio_ends_its_process(
    served: ServeHome, mode: Any
) -> None:
    served.write_config(approvals={"non_interactive": "allow"})
    marker = f"cancelled-over-stdio-{served.root.name}"

    async def main() -> mcp_types.CallToolResult:
        async with Client(served.stdio_parameters(), mode=mode) as client:
            await call_then_cancel(client, "terminal", {"command": slow_command(marker)}, marker)
            await until(
                lambda: not processes_mentioning(marker),
                END_LIMIT,
                "the cancelled command's process did not end",
            )
            return await client.call_tool("terminal", {"command": "echo still serving"})

    after = anyio.run(main)
    assert after.is_error is False
    assert "still serving" in text_of(after)


def test_a_cancelled_deferred_mcp_call_is_cancelled_at_its_server(served: ServeHome) -> None:
    # The server's input is copied to a file on its way (tee), so what hermes sent it is read.
    received = served.root / "toolbox-input.jsonl"
    command = f"tee -a '{received}' | '{sys.executable}' '{TOOLBOX_SERVER}'"
    served.write_config(
        mcp_servers={"box": {"command": "sh", "args": ["-c", command]}},
        approvals={"allow": ["mcp__box__sleep"]},
    )
    name = "mcp__box__sleep"

    def sent_to_the_server() -> list[dict[str, Any]]:
        if not received.exists():
            return []
        return [json.loads(line) for line in received.read_text().splitlines() if line.strip()]

    def calls() -> list[dict[str, Any]]:
        return [m for m in sent_to_the_server() if m.get("method") == "tools/call"]

    def cancels() -> list[dict[str, Any]]:
        return [m for m in sent_to_the_server() if m.get("method") == "notifications/cancelled"]

    async def main() -> mcp_types.CallToolResult:
        async with Client(served.stdio_parameters(), mode="legacy") as client:
            await served_tools_once_listed(client, name)
            async with anyio.create_task_group() as group:
                group.start_soon(
                    client.call_tool, "tool_call", {"name": name, "arguments": {"seconds": 300}}
                )
                await until(calls, APPEAR_LIMIT, "the server got no tools/call")
                group.cancel_scope.cancel()
            await until(cancels, END_LIMIT, "the server was not told of the cancel")
            return await client.call_tool(
                "tool_call", {"name": "mcp__box__echo", "arguments": {"text": "again"}}
            )

    after = anyio.run(main)
    assert [cancel["params"]["requestId"] for cancel in cancels()] == [calls()[0]["id"]]
    assert text_of(after) == "echo: again"


def test_over_http_a_closed_call_stream_or_a_dropped_connection_ends_the_command(
    served: ServeHome,
) -> None:
    served.write_config(approvals={"non_interactive": "allow"})
    by_client = f"cancelled-by-a-2026-client-{served.root.name}"
    by_dropping = f"dropped-connection-{served.root.name}"
    with http_serve(served) as server:

        async def cancel_as_a_2026_client() -> None:
            async with server.client(mode="auto") as client:
                command = slow_command(by_client)
                await call_then_cancel(client, "terminal", {"command": command}, by_client)

        anyio.run(cancel_as_a_2026_client)
        headers = {
            **server.headers,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "terminal", "arguments": {"command": slow_command(by_dropping)}},
        }
        with (
            httpx.Client(timeout=None) as http,
            http.stream("POST", server.url, headers=headers, json=call) as answer,
        ):
            assert answer.status_code == 200
            give_up = time.monotonic() + APPEAR_LIMIT
            while not processes_mentioning(by_dropping):
                assert time.monotonic() < give_up, "the call's command did not start"
                time.sleep(0.1)
        give_up = time.monotonic() + END_LIMIT
        while processes_mentioning(by_client) or processes_mentioning(by_dropping):
            assert time.monotonic() < give_up, (
                f"still running: {processes_mentioning(by_client)} (closed stream), "
                f"{processes_mentioning(by_dropping)} (dropped connection)"
            )
            time.sleep(0.1)
        assert server.stop() == 0


def _sse_messages(answer: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a streamed answer, read until the server ends it (or drops the
    connection)."""
    found: list[dict[str, Any]] = []
    with contextlib.suppress(httpx.RemoteProtocolError):
        for line in answer.iter_lines():
            if line.startswith("data:") and line[5:].strip():
                found.append(json.loads(line[5:]))
    return found


def test_sigterm_over_http_stops_a_call_in_flight_answers_its_client_and_ends_the_children(
    served: ServeHome,
) -> None:
    # Over stdio SIGTERM stops a call at once; over HTTP uvicorn's graceful shutdown let the
    # call run on (about 5 s), then dropped its connection without an answer.
    marker = str(served.root / "in-flight-at-sigterm")
    grandchild = str(served.root / "spawned-by-a-server")
    served.write_config(
        approvals={"non_interactive": "allow"},
        mcp_servers={"spawn": spawner_server(grandchild)},
    )
    with http_serve(served) as server:
        headers = {
            **server.headers,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "terminal", "arguments": {"command": slow_command(marker)}},
        }
        with (
            httpx.Client(timeout=httpx.Timeout(END_LIMIT)) as http,
            http.stream("POST", server.url, headers=headers, json=call) as answer,
        ):
            assert answer.status_code == 200
            give_up = time.monotonic() + APPEAR_LIMIT
            while not processes_mentioning(marker) or len(processes_mentioning(grandchild)) < 2:
                assert time.monotonic() < give_up, "the call's command or the server did not start"
                time.sleep(0.1)
            server.process.send_signal(signal.SIGTERM)
            messages = _sse_messages(answer)
        try:  # one SIGTERM only: a guard against a hang, not a performance check
            status = server.process.wait(timeout=END_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hermes serve did not exit within {END_LIMIT} s of SIGTERM")
    assert status == 0
    answered = [message for message in messages if message.get("id") == 1]
    assert len(answered) == 1, f"the call got no answer: {messages}"
    assert answered[0]["result"]["isError"] is True, answered
    assert "hermes serve is shutting down" in json.dumps(answered[0]), answered
    assert processes_mentioning(marker) == []
    assert processes_mentioning(grandchild) == []


def test_sigterm_over_http_answers_a_2026_clients_call_in_flight(served: ServeHome) -> None:
    # A 2026-07-28 client's call runs where calls wait for an approval (parked), stopped too.
    marker = str(served.root / "in-flight-at-sigterm")
    served.write_config(approvals={"non_interactive": "allow"})
    with http_serve(served) as server:

        async def call_then_sigterm() -> mcp_types.CallToolResult:
            async with server.client(mode="auto") as client, anyio.create_task_group() as group:
                results: list[mcp_types.CallToolResult] = []

                async def call() -> None:
                    command = slow_command(marker)
                    results.append(await client.call_tool("terminal", {"command": command}))

                group.start_soon(call)
                await until(lambda: processes_mentioning(marker), APPEAR_LIMIT, "no command")
                server.process.send_signal(signal.SIGTERM)
            return results[0]

        result = anyio.run(call_then_sigterm)
        try:  # one SIGTERM only: a guard against a hang, not a performance check
            status = server.process.wait(timeout=END_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hermes serve did not exit within {END_LIMIT} s of SIGTERM")
    assert status == 0
    assert result.is_error is True
    assert "hermes serve is shutting down" in text_of(result)
    assert processes_mentioning(marker) == []


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_second_signal_over_http_during_the_shutdown_leaves_it_to_finish(
    served: ServeHome, number: signal.Signals
) -> None:
    # A second SIGTERM killed the process mid-shutdown (its call unanswered, the processes its
    # MCP server had started left running); a second SIGINT ended it with a traceback.
    marker = str(served.root / "in-flight-at-sigterm")
    grandchild = str(served.root / "spawned-by-a-server")
    served.write_config(
        approvals={"non_interactive": "allow"},
        mcp_servers={"spawn": spawner_server(grandchild)},
    )
    with http_serve(served) as server:
        headers = {
            **server.headers,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "terminal", "arguments": {"command": slow_command(marker)}},
        }
        with (
            httpx.Client(timeout=httpx.Timeout(END_LIMIT)) as http,
            http.stream("POST", server.url, headers=headers, json=call) as answer,
        ):
            give_up = time.monotonic() + APPEAR_LIMIT
            while not processes_mentioning(marker) or len(processes_mentioning(grandchild)) < 2:
                assert time.monotonic() < give_up, "the call's command or the server did not start"
                time.sleep(0.1)
            server.process.send_signal(number)
            give_up = time.monotonic() + END_LIMIT
            while processes_mentioning(marker):  # the shutdown began: the call is stopped
                assert time.monotonic() < give_up, "the call's command was not ended"
                time.sleep(0.01)
            server.process.send_signal(number)
            messages = _sse_messages(answer)
        try:  # a guard against a hang, not a performance check
            status = server.process.wait(timeout=END_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hermes serve did not exit within {END_LIMIT} s of two signals")
        stderr = server.process.stderr.read().decode() if server.process.stderr else ""
    left = processes_mentioning(grandchild)
    for pid in left:  # the test's own leftovers, ended so they do not outlive it
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert status == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert [message["id"] for message in messages if "id" in message] == [1], messages
    assert processes_mentioning(marker) == []
    assert left == []


def test_a_second_sigterm_over_stdio_during_the_shutdown_leaves_it_to_finish(
    served: ServeHome,
) -> None:
    # Over stdio serve ends by the signal once the host is closed; a second SIGTERM killed it
    # before, leaving what its MCP server had started running.
    marker = str(served.root / "in-flight-at-sigterm")
    grandchild = str(served.root / "spawned-by-a-server")
    served.write_config(
        approvals={"non_interactive": "allow"},
        mcp_servers={"spawn": spawner_server(grandchild)},
    )
    with raw_stdio(served) as wire:
        wire.initialize("2025-03-26")
        arguments = {"command": slow_command(marker)}
        wire.request(1, "tools/call", {"name": "terminal", "arguments": arguments})
        give_up = time.monotonic() + APPEAR_LIMIT
        while not processes_mentioning(marker) or len(processes_mentioning(grandchild)) < 2:
            assert time.monotonic() < give_up, "the call's command or the server did not start"
            time.sleep(0.1)
        wire.process.send_signal(signal.SIGTERM)
        give_up = time.monotonic() + END_LIMIT
        while processes_mentioning(marker):  # the shutdown began: the call is stopped
            assert time.monotonic() < give_up, "the call's command was not ended"
            time.sleep(0.01)
        wire.process.send_signal(signal.SIGTERM)
        try:  # a guard against a hang, not a performance check
            status = wire.process.wait(timeout=END_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hermes serve did not exit within {END_LIMIT} s of two SIGTERMs")
    left = processes_mentioning(grandchild)
    for pid in left:  # the test's own leftovers, ended so they do not outlive it
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert status == -signal.SIGTERM
    assert left == []

"""``hermes serve --transport http``: stateless streamable HTTP on 127.0.0.1, driven by the
``mcp`` SDK client, in both eras served in this process (``in_process.py``), and as a real
process: its lifetime (URL on stderr, a client lists and calls, SIGTERM ends it and every MCP
server child it started, a taken port is a clear error)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from in_process import http_in_process
from mcp import Client
from serving import (
    BRIDGE_TOOLS,
    CORE_TOOLS,
    HttpServe,
    ServeHome,
    http_serve,
    late_server,
    processes_mentioning,
    served_tools_once_listed,
    toolbox_server,
    wait_for_processes,
)

from hermes_core._errors import HermesError
from hermes_core.testing import HermesCli

ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]
ECHO = "mcp__box__echo"


async def list_search_and_call(
    client: Client,
) -> tuple[list[str], mcp_types.CallToolResult, mcp_types.CallToolResult]:
    """The tool names, a search for the toolbox's ``echo`` and a call of it through the bridge."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    found = await client.call_tool("tool_search", {"queries": ["echo the text back"]})
    called = await client.call_tool("tool_call", {"name": ECHO, "arguments": {"text": "hi"}})
    return names, found, called


@pytest.mark.subprocess
def test_http_binds_loopback_and_prints_its_url_on_stderr(served: ServeHome) -> None:
    served.write_config()
    with http_serve(served) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.url.endswith("/mcp")
        port = int(server.url.rsplit(":", 1)[1].split("/", 1)[0])
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass


@pytest.mark.parametrize("mode", ERAS)
def test_sdk_client_lists_searches_and_calls_over_http(served: ServeHome, mode: Any) -> None:
    served.write_config(mcp_servers={"box": toolbox_server()})

    async def main() -> tuple[list[str], mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with http_in_process(served) as server, server.client(mode=mode) as client:
            return await list_search_and_call(client)

    names, found, called = anyio.run(main)
    assert names == CORE_TOOLS + BRIDGE_TOOLS
    assert found.structured_content is not None
    assert ECHO in found.structured_content["results"][0]["matches"]
    assert called.is_error is False
    assert [getattr(block, "text", None) for block in called.content] == ["echo: hi"]


@pytest.mark.subprocess
def test_a_client_lists_searches_and_calls_and_sigterm_ends_the_http_process_cleanly(
    served: ServeHome,
) -> None:
    # The whole process over HTTP; the rules are checked in process above.
    served.write_config(mcp_servers={"box": toolbox_server()})

    async def main(
        server: HttpServe,
    ) -> tuple[list[str], mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with server.client() as client:
            # The toolbox server joins the list once connected (clients are told).
            await served_tools_once_listed(client, ECHO)
            return await list_search_and_call(client)

    with http_serve(served) as server:
        names, found, called = anyio.run(main, server)
        status = server.stop()
    assert status == 0
    assert names == CORE_TOOLS + BRIDGE_TOOLS
    assert found.structured_content is not None
    assert ECHO in found.structured_content["results"][0]["matches"]
    assert called.is_error is False
    assert [getattr(block, "text", None) for block in called.content] == ["echo: hi"]


def test_a_request_as_long_as_stdio_takes_is_served_and_one_past_64_mib_is_refused_unread(
    served: ServeHome,
) -> None:
    # A 5 MB write_file runs over stdio; over HTTP it was refused by the SDK's 4 MiB default
    # with a 413 the SDK client reports only as "Server returned an error response".
    served.write_config(approvals={"allow": ["write_file"]})
    content = "x" * 5_000_000

    async def main() -> tuple[mcp_types.CallToolResult, bytes]:
        async with http_in_process(served) as server, server.client() as client:
            written = await client.call_tool("write_file", {"path": "big.txt", "content": content})
            port = int(server.url.rsplit(":", 1)[1].split("/", 1)[0])
            stream = await anyio.connect_tcp("127.0.0.1", port)
            async with stream:
                # Only the headers are sent: the length alone is refused, nothing is read.
                await stream.send(
                    (
                        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                        f"Authorization: Bearer {server.token}\r\n"
                        "Content-Type: application/json\r\n"
                        "Accept: application/json, text/event-stream\r\n"
                        f"Content-Length: {64 * 1024 * 1024 + 1}\r\n\r\n"
                    ).encode()
                )
                with anyio.fail_after(30):  # a guard against a hang, not a performance check
                    answer = await stream.receive()
            return written, answer

    written, answer = anyio.run(main)
    assert written.is_error is False
    assert (served.work / "big.txt").stat().st_size == 5_000_000
    assert answer.startswith(b"HTTP/1.1 413 ")


@pytest.mark.subprocess
def test_sigterm_stops_serve_and_ends_its_mcp_server_children(served: ServeHome) -> None:
    ready = served.root / "late-server-may-answer"
    ready.touch()
    served.write_config(mcp_servers={"late": late_server(ready, connect_timeout=30)})

    async def names(server: HttpServe) -> list[str]:
        async with server.client() as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    with http_serve(served) as server:
        assert "tool_search" in anyio.run(names, server)
        wait_for_processes(str(ready), 1)  # the late MCP server starts behind the answer
        status = server.stop()
    assert status == 0
    assert processes_mentioning(str(ready)) == []


@pytest.mark.subprocess
def test_a_port_in_use_is_a_clear_error(served: ServeHome) -> None:
    served.write_config()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            served.command("--transport", "http", "--port", str(port)),
            env=served.variables(),
            cwd=served.work,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_connections_to_the_http_socket_send_without_nagle_delay(host: str) -> None:
    """The socket ``serve_http`` listens on is a TCP socket to asyncio, so every connection it
    accepts gets ``TCP_NODELAY``, as one uvicorn opens itself does. Without it an answer's last
    small write waited for the client's delayed ACK: about 40 ms a request (issue 32)."""
    from hermes_core._serve.transports import _listen

    try:
        sock = _listen(host, 0)
    except HermesError:
        pytest.skip(f"no {host} on this machine")
    accepted: list[int] = []

    class Recorder(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            connection = transport.get_extra_info("socket")
            accepted.append(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            made.set()

    async def accept_one() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(Recorder, sock=sock)  # as uvicorn serves sockets=[sock]
        try:
            with socket.create_connection((host, sock.getsockname()[1])):
                await asyncio.wait_for(made.wait(), 10)
        finally:
            server.close()
            await server.wait_closed()

    made = asyncio.Event()
    asyncio.run(accept_one())
    assert accepted
    assert accepted[0] != 0


@pytest.mark.subprocess
def test_hermes_adds_another_hermes_serve_with_the_header_as_curl_and_claude_write_it(
    served: ServeHome, tmp_path: Path
) -> None:
    # journey5's walk: docs/mcp.md's Claude Code line passes --header "Authorization: Bearer
    # ...", the form of curl and of every client; `hermes mcp add --header` refused it.
    served.write_config()
    caller = HermesCli(tmp_path / "caller")
    with http_serve(served) as server:
        added = caller.run(
            "mcp", "add", "other", "--url", server.url,
            "--header", f"Authorization: Bearer {server.token}",
            "--header", "X-Trace: a=b",
            ok=False,
        )  # fmt: skip
        tested = caller.run("mcp", "test", "other", ok=False)
    assert added.returncode == 0, added.stderr
    written = json.loads(caller.run("config", "show", "--json").stdout)
    assert written["mcp_servers"]["other"]["headers"] == {
        "Authorization": "Bearer ${OTHER_AUTHORIZATION}",
        "X-Trace": "a=b",
    }
    dotenv = (caller.home / ".env").read_text(encoding="utf-8")
    assert dotenv == f"OTHER_AUTHORIZATION={server.token}\n"
    assert tested.returncode == 0, tested.stderr
    assert "other: connected and listed" in tested.stdout

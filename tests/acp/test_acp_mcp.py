"""The client's MCP servers of ``session/new``: connected as real MCP servers (the test's
toolbox server over stdio), their tools deferred behind the bridge, found by ``tool_search``
and run by ``tool_call``, and scoped to the session that passed them."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.testing import FakeModelProvider, fake_turn
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    from acp import schema
else:  # imported at first use: every pytest worker collects this file
    schema = Imported("acp.schema")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"
DEFERRED = {"tools": {"tool_search": {"enabled": "on"}}}


def toolbox(name: str = "Editor Tools") -> schema.McpServerStdio:
    return schema.McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(TOOLBOX)],
        env=[schema.EnvVariable(name="TOOLBOX_GREETING", value="from the editor")],
    )


async def test_a_client_server_is_found_by_tool_search_and_called(acp_env: Environment) -> None:
    tool = "mcp__editor-tools__echo"
    model = FakeModelProvider.scripted(
        fake_turn("", ("tool_search", {"queries": ["echo the text back"]})),
        fake_turn("", ("tool_call", {"calls": [{"name": tool, "arguments": {"text": "ping"}}]})),
        "It echoed ping.",
    )
    async with serving(acp_env, model, config=DEFERRED) as served:
        session_id = await served.start(acp_env.cwd, mcp_servers=[toolbox()])
        answer = await served.say(session_id, "echo ping with the editor's tools")
    assert answer.stop_reason == "end_turn"
    first_tools = {schema.name for schema in model.requests[0].tools}
    assert tool not in first_tools  # deferred: reached through the bridge
    assert "tool_search" in first_tools
    found = model.requests[1].messages[-1].content
    assert tool in found
    called = model.requests[2].messages[-1]
    assert not called.is_error
    assert "ping" in called.content
    starts = [u for u in served.client.updates if u.session_update == "tool_call"]
    assert [start.title for start in starts] == ["tool_search: echo the text back", tool]
    assert starts[1].kind == "other"


async def test_a_client_server_is_invisible_to_another_session(acp_env: Environment) -> None:
    tool = "mcp__editor-tools__echo"
    model = FakeModelProvider.scripted(
        fake_turn("", ("tool_call", {"calls": [{"name": tool, "arguments": {"text": "x"}}]})),
        "Not here.",
    )
    async with serving(acp_env, model, config=DEFERRED) as served:
        await served.start(acp_env.cwd, mcp_servers=[toolbox()])
        other = (await served.conn.new_session(cwd=str(acp_env.cwd))).session_id
        await served.say(other, "use the other window's tool")
    refused = model.requests[1].messages[-1]
    assert refused.is_error
    assert "ping" not in refused.content
    assert json.dumps(tool) not in json.dumps([s.name for s in model.requests[0].tools])


async def test_the_same_server_in_two_sessions_is_one_connection(acp_env: Environment) -> None:
    async with serving(acp_env, FakeModelProvider.scripted(), config=DEFERRED) as served:
        await served.start(acp_env.cwd, mcp_servers=[toolbox()])
        await served.conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[toolbox()])
        different = toolbox()
        different.args = [str(TOOLBOX), "--unused-flag"]
        await served.conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[different])
        assert served.runtime is not None
        names = sorted(served.runtime.host.mcp_status())
    assert names == ["editor-tools", "editor-tools-2"]


def test_an_http_server_keeps_its_url_and_headers_and_sse_is_left_out(tmp_path: Path) -> None:
    from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer

    from hermes_core._acp.client_servers import server_config

    header = HttpHeader(name="Authorization", value="Bearer from-the-editor")
    remote = HttpMcpServer(
        type="http", name="remote", url="http://127.0.0.1:9/mcp", headers=[header]
    )
    config = server_config(remote, tmp_path)
    assert config is not None
    assert (config.url, config.headers, config.command) == (
        "http://127.0.0.1:9/mcp",
        {"Authorization": "Bearer from-the-editor"},
        None,
    )
    legacy = SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
    assert server_config(legacy, tmp_path) is None


async def test_tool_call_in_its_other_accepted_shapes_is_shown_as_the_real_tool(
    acp_env: Environment,
) -> None:
    """``tool_call`` also takes ``{name, arguments}`` and ``calls`` as JSON text (as models
    send them): the editor is shown the tool that runs, as for ``{"calls": [...]}``, not
    ``tool_call``."""
    tool = "mcp__editor-tools__echo"
    entry = {"name": tool, "arguments": {"text": "ping"}}
    model = FakeModelProvider.scripted(
        fake_turn("", ("tool_call", entry)),
        fake_turn("", ("tool_call", {"calls": json.dumps([entry])})),
        "It echoed ping twice.",
    )
    async with serving(acp_env, model, config=DEFERRED) as served:
        session_id = await served.start(acp_env.cwd, mcp_servers=[toolbox()])
        answer = await served.say(session_id, "echo ping with the editor's tools")
    assert answer.stop_reason == "end_turn"
    assert "ping" in model.requests[1].messages[-1].content
    assert "ping" in model.requests[2].messages[-1].content
    starts = [u for u in served.client.updates if u.session_update == "tool_call"]
    assert [start.title for start in starts] == [tool, tool]


def _nothing_listens() -> str:
    """An http URL on a port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


def _said(records: list[logging.LogRecord], text: str) -> list[str]:
    return [
        r.getMessage() for r in records if r.levelno >= logging.WARNING and text in r.getMessage()
    ]


async def test_a_client_server_that_fails_is_told_in_the_editor_and_once_an_attempt_on_stderr(
    acp_env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    command = str(acp_env.cwd / "no-such-server")
    missing = schema.McpServerStdio(name="Broken Tools", command=command, args=[], env=[])
    url = _nothing_listens()
    dead = schema.HttpMcpServer(type="http", name="Remote", url=url, headers=[])
    async with serving(acp_env, FakeModelProvider.scripted(), config=DEFERRED) as served:
        await served.start(acp_env.cwd, mcp_servers=[toolbox(), missing, dead])
        await served.client.advertised.wait()
        told = served.client.text()
        kinds = served.client.kinds()
        served.client.updates.clear()
        served.client.advertised.clear()
        await served.conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[dead])
        await served.client.advertised.wait()
        told_again = served.client.text()
    assert kinds == ["agent_message_chunk"]
    assert "`Remote`" in told_again  # the failed server it shares
    assert "Broken Tools" not in told_again
    broken, remote = told.strip().split("\n\n")
    assert "`Broken Tools`" in broken
    assert "No such file or directory" in broken
    assert f"check its command, `{command}`" in broken
    assert "`Remote`" in remote
    assert "ConnectError" in remote
    assert f"check that an MCP server answers at `{url}`" in remote
    assert "Editor Tools" not in told  # it connected
    assert len(_said(caplog.records, "No such file or directory")) == 1
    # The second session tried it once more: each attempt's failure is one line.
    assert len(_said(caplog.records, "ConnectError")) == 2


async def test_a_loaded_session_tells_of_its_client_server_that_fails(
    acp_env: Environment,
) -> None:
    async with serving(acp_env, FakeModelProvider.scripted("Hello.")) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "Hi.")
    command = str(acp_env.cwd / "no-such-server")
    missing = schema.McpServerStdio(name="Broken Tools", command=command, args=[], env=[])
    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        await served.start(acp_env.cwd)
        served.client.updates.clear()
        await served.conn.load_session(
            cwd=str(acp_env.cwd), session_id=session_id, mcp_servers=[missing]
        )
        shown = [(u.session_update, u.content.text) for u in served.client.updates]
    assert shown[:2] == [("user_message_chunk", "Hi."), ("agent_message_chunk", "Hello.")]
    assert shown[2][0] == "agent_message_chunk"
    assert shown[2][1].startswith("\n\n")  # a paragraph of its own, not glued to "Hello."
    assert "`Broken Tools`" in shown[2][1]


async def test_a_failed_client_servers_secrets_stay_out_of_the_editor_and_stderr(
    acp_env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)  # what stderr shows; a library's debug lines are filtered
    url = _nothing_listens() + "?api_key=q1w2e3r4t5y6u7i8"
    header = schema.HttpHeader(name="Authorization", value="Bearer a9s8d7f6g5h4j3k2l1")
    dead = schema.HttpMcpServer(type="http", name="Remote", url=url, headers=[header])
    async with serving(acp_env, FakeModelProvider.scripted(), config=DEFERRED) as served:
        await served.start(acp_env.cwd, mcp_servers=[dead])
        await served.client.advertised.wait()
        told = served.client.text()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "`Remote`" in told
    assert "api_key=[redacted]" in told
    for secret in ("q1w2e3r4t5y6u7i8", "a9s8d7f6g5h4j3k2l1"):
        assert secret not in told
        assert secret not in logged


def _serve_toolbox_at(url: str) -> subprocess.Popen[bytes]:
    """The toolbox server over streamable HTTP at ``url`` (its port), once it accepts
    connections; fails the test if it exits first (another process took the port) or does not
    listen within a minute (a guard against hanging, not a performance check)."""
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    process = subprocess.Popen([sys.executable, str(TOOLBOX), "--http", str(port)])
    give_up = time.monotonic() + 60
    while process.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        if time.monotonic() > give_up:
            process.kill()
            process.wait()
            pytest.fail(f"the HTTP toolbox server did not listen on {url} within 60 s")
        time.sleep(0.05)
    pytest.fail(f"the HTTP toolbox server at {url} exited with {process.returncode}")


async def test_a_failed_client_server_is_tried_again_by_a_later_session(
    acp_env: Environment,
) -> None:
    """An http server nobody answered and a stdio command that did not exist are each tried
    once more by a later session passing the same entry: once the user started the server
    (wrote the command), that session has its tools and is told of no failure."""
    url = _nothing_listens()
    remote = schema.HttpMcpServer(type="http", name="Remote", url=url, headers=[])
    command = acp_env.cwd / "later-server"
    local = schema.McpServerStdio(name="Local", command=str(command), args=[], env=[])
    call = {"calls": [{"name": "mcp__remote__echo", "arguments": {"text": "ping"}}]}
    model = FakeModelProvider.scripted(fake_turn("", ("tool_call", call)), "It echoed.")
    async with serving(acp_env, model, config=DEFERRED) as served:
        first = await served.start(acp_env.cwd, mcp_servers=[remote, local])
        await served.client.advertised.wait()
        told = served.client.text()
        assert served.runtime is not None
        host = served.runtime.host
        statuses = host.mcp_status()
        assert (statuses["remote"].state, statuses["local"].state) == (
            "unavailable",
            "unavailable",
        )
        process = _serve_toolbox_at(url)
        try:
            command.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TOOLBOX}" "$@"\n')
            command.chmod(0o755)
            served.client.updates.clear()
            served.client.advertised.clear()
            await served.conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[remote, local])
            await served.client.advertised.wait()
            told_again = served.client.text()
            statuses = host.mcp_status()
            tools = [n for n in ("mcp__remote__echo", "mcp__local__echo") if host.registry.get(n)]
            await served.say(first, "echo ping with the remote tools")
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert "`Remote`" in told
    assert "`Local`" in told
    assert told_again == ""
    assert sorted(statuses) == ["local", "remote"]  # the same entries, not `remote-2`
    assert (statuses["remote"].state, statuses["local"].state) == ("connected", "connected")
    assert tools == ["mcp__remote__echo", "mcp__local__echo"]
    echoed = model.requests[1].messages[-1]  # the first session was granted them all along
    assert not echoed.is_error
    assert "ping" in echoed.content

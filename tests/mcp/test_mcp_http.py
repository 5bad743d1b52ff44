"""Streamable HTTP: a real SDK server as a child process on 127.0.0.1, connected by ``url``."""

from __future__ import annotations

import pytest
from realservers import HttpServer, ToolsSeen, call, free_port, wait_until

from hermes_core._config import McpServerConfig
from hermes_core._mcp import McpSupervisor
from hermes_core._mcp.results import UNAVAILABLE
from hermes_core._paths import Environment

pytestmark = pytest.mark.anyio


@pytest.mark.subprocess
async def test_http_server_is_listed_and_called_by_url(
    env: Environment, http_toolbox: HttpServer
) -> None:
    seen = ToolsSeen()
    entry = McpServerConfig(url=http_toolbox.url)
    async with McpSupervisor({"web": entry}, env, on_tools_changed=seen) as mcp:
        status = mcp.status()["web"]
        names = seen.names("web")
        result = await call(seen.tool("mcp__web__add"), a=20, b=22)
    assert (status.state, status.transport) == ("connected", "http")
    assert len(names) == 7
    assert (result.text_content, result.structured) == ("42", {"sum": 42})


@pytest.mark.subprocess
async def test_http_headers_are_expanded_and_sent(
    env: Environment, http_toolbox: HttpServer
) -> None:
    env.dotenv_path.write_text("REMOTE_TOKEN=s3cret\n", encoding="utf-8")
    entry = McpServerConfig(
        url=http_toolbox.url, headers={"Authorization": "Bearer ${REMOTE_TOKEN}"}
    )
    seen = ToolsSeen()
    async with McpSupervisor({"web": entry}, env, on_tools_changed=seen):
        header = await call(seen.tool("mcp__web__header"), name="authorization")
    assert header.text_content == "Bearer s3cret"


@pytest.mark.subprocess
async def test_http_server_that_stops_gives_error_results_naming_it(
    env: Environment, http_toolbox: HttpServer
) -> None:
    seen = ToolsSeen()
    entry = McpServerConfig(url=http_toolbox.url)
    async with McpSupervisor({"web": entry}, env, on_tools_changed=seen, backoff_base=600) as mcp:
        echo = seen.tool("mcp__web__echo")
        http_toolbox.process.kill()
        http_toolbox.process.wait()
        failed = await call(echo, text="anyone?")
        await wait_until(lambda: mcp.status()["web"].state == "unavailable", "'web' to drop")
        later = await call(echo, text="anyone?")
        tools_left = seen.names("web")
    assert failed.is_error
    assert "MCP server 'web'" in (failed.error_message or "")
    assert later.error_code == UNAVAILABLE
    assert "MCP server 'web' is unavailable" in (later.error_message or "")
    assert tools_left == []


async def test_unreachable_url_is_unavailable_with_the_reason(env: Environment) -> None:
    entry = McpServerConfig(url=f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=10)
    async with McpSupervisor({"nowhere": entry}, env, backoff_base=600) as mcp:
        status = mcp.status()["nowhere"]
    assert status.state == "unavailable"
    assert status.reason is not None
    assert status.reason.startswith("cannot connect:")

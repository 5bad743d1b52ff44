"""Hostile answers of a stdio MCP server: what a real server child process writes on its output
cannot make hermes hold more than a bounded amount of it, and a server that breaks the bound is
ended with a reason that names it. Arguments too deeply nested to send (a hostile model's) are
refused before they reach the connection."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from realservers import (
    SERVERS_DIR,
    ToolsSeen,
    call,
    live_pids,
    start_listening,
    toolbox_entry,
    wait_until,
)

from hermes_core import ToolResult
from hermes_core._config import McpServerConfig
from hermes_core._mcp import McpSupervisor
from hermes_core._mcp.results import MCP_ERROR, UNAVAILABLE
from hermes_core._mcp.stdio import _answered_id
from hermes_core._paths import Environment
from tests.peak_rss import peak_rss_growth

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

FLOOD = SERVERS_DIR / "flood.py"
DEEP = SERVERS_DIR / "deep.py"
HTTP_FLOOD = SERVERS_DIR / "httpflood.py"
STORM = SERVERS_DIR / "storm.py"
PAGER = SERVERS_DIR / "pager.py"
LIMIT = "64 MiB"
"""The longest line hermes reads from a server's output (``_jsonrpc_lines.MAX_LINE_BYTES``)."""


async def _call_then_echo(
    env: Environment, server: str, entry: McpServerConfig, tool: str
) -> tuple[ToolResult, ToolResult]:
    """``tool``'s result on ``server`` (no arguments), then an ``echo`` of "still here" on the
    same connection: a call the answer broke must leave the server usable."""
    async with McpSupervisor({server: entry}, env) as mcp:
        result = await mcp.call_tool(server, tool, {})
        echoed = await mcp.call_tool(server, "echo", {"text": "still here"})
    return result, echoed


async def _connect_and_echo(env: Environment, url: str) -> ToolResult:
    """An ``echo`` of "still here" on the HTTP server at ``url``, once it has connected."""
    entry = McpServerConfig(url=url, connect_timeout=20)
    async with McpSupervisor({"remote": entry}, env) as mcp:
        assert mcp.status()["remote"].state == "connected", mcp.status()["remote"].reason
        return await mcp.call_tool("remote", "echo", {"text": "still here"})


async def test_a_server_writing_an_endless_line_is_ended_naming_the_limit_and_comes_back(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    entry = McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(FLOOD)], "timeout": 20}
    )
    seen = ToolsSeen()
    caplog.set_level(logging.WARNING)
    async with McpSupervisor({"flood": entry}, env, on_tools_changed=seen, backoff_base=0.2) as mcp:
        first = live_pids(str(FLOOD))
        assert len(first) == 1
        result = await call(seen.tool("mcp__flood__flood"))
        assert result.is_error
        assert result.error_code == UNAVAILABLE
        message = result.error_message or ""
        assert "'flood'" in message
        assert LIMIT in message, message
        assert "\n" not in message
        # The server was ended, not left writing into a pipe nobody reads.
        await wait_until(lambda: first[0] not in live_pids(str(FLOOD)), "the flood server's end")

        def reconnected() -> bool:
            pids = live_pids(str(FLOOD))
            return (
                bool(pids) and first[0] not in pids and mcp.status()["flood"].state == "connected"
            )

        await wait_until(reconnected, "a reconnect")
        answer = await call(seen.tool("mcp__flood__echo"), text="still here")
        assert answer.text_content == "echo: still here"
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("'flood' is unavailable" in w and LIMIT in w for w in warned), warned


async def test_a_listing_too_deep_to_read_fails_the_connect_at_once_saying_why(
    env: Environment,
) -> None:
    # 300 objects deep: JSON, but deeper than the SDK's reader goes (its recursion limit)
    entry = McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(DEEP), "300"], "connect_timeout": 20}
    )
    async with McpSupervisor({"deep": entry}, env) as mcp:
        status = mcp.status()["deep"]
    assert status.state == "unavailable"
    reason = status.reason or ""
    assert "cannot read the server's answer" in reason, reason
    assert "recursion limit" in reason, reason
    assert "connect_timeout" not in reason, reason


async def test_an_answer_too_deep_to_read_ends_its_call_at_once_saying_why(
    env: Environment,
) -> None:
    entry = McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(DEEP), "10"], "timeout": 20}
    )
    async with McpSupervisor({"deep": entry}, env) as mcp:
        result = await mcp.call_tool("deep", "deep", {})
        assert mcp.status()["deep"].state == "connected"
        echoed = await mcp.call_tool("deep", "echo", {"text": "still here"})
    assert result.is_error
    assert result.error_code == MCP_ERROR
    message = result.error_message or ""
    assert message.startswith("MCP server 'deep' answered the call of 'deep': "), message
    assert "cannot read the server's answer" in message, message
    assert "recursion limit" in message, message
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize(
    "where",
    [
        # {"result": <300 objects deep>, "id": 3, "jsonrpc": "2.0"}: neither first nor last
        "--id-inside",
        # {"jsonrpc": "2.0", "result": <300 objects deep>, "id": "\u0033"}: "3", request 3's id
        "--id-escaped",
    ],
)
async def test_an_answer_too_deep_to_read_ends_its_call_at_once_wherever_and_however_its_id_is(
    env: Environment, where: str
) -> None:
    entry = McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(DEEP), "10", where], "timeout": 20}
    )
    result, echoed = await _call_then_echo(env, "deep", entry, "deep")
    assert result.is_error
    assert result.error_code == MCP_ERROR, result.error_message
    message = result.error_message or ""
    assert message.startswith("MCP server 'deep' answered the call of 'deep': "), message
    assert "cannot read the server's answer" in message, message
    assert echoed.text_content == "echo: still here"


@pytest.fixture
def http_flood(request: pytest.FixtureRequest) -> Iterator[str]:
    """``httpflood.py`` serving on 127.0.0.1 as a child process, with the options the test is
    parametrized with (``--encoding gzip``, ``--sse``); its URL."""
    extra = str(getattr(request, "param", "")).split()
    process, port = start_listening(
        lambda port: [sys.executable, str(HTTP_FLOOD), str(port), *extra], "the HTTP flood server"
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


async def test_an_endless_json_answer_over_http_is_cut_off_at_the_limit_naming_it(
    env: Environment, http_flood: str
) -> None:
    entry = McpServerConfig(url=http_flood, timeout=30)
    async with McpSupervisor({"remote": entry}, env) as mcp:
        assert mcp.status()["remote"].state == "connected"
        result = await mcp.call_tool("remote", "flood", {})
        echoed = await mcp.call_tool("remote", "echo", {"text": "still here"})
    assert result.is_error
    assert result.error_code == MCP_ERROR, result.error_message
    message = result.error_message or ""
    assert "'remote'" in message
    assert LIMIT in message, message
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize(
    "http_flood",
    [
        "--encoding gzip",
        "--encoding gzip --members 3",
        "--encoding deflate",
        "--encoding raw-deflate",
        "--encoding gzip --dribble",
        "--encoding deflate --dribble",
        "--encoding raw-deflate --dribble",
    ],
    indirect=True,
    ids=[
        "gzip",
        "gzip-members",
        "deflate",
        "raw-deflate",
        "gzip-byte-by-byte",
        "deflate-byte-by-byte",
        "raw-deflate-byte-by-byte",
    ],
)
async def test_a_compressed_json_answer_is_read_although_hermes_asked_for_none(
    env: Environment, http_flood: str
) -> None:
    echoed = await _connect_and_echo(env, http_flood)
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize(
    "http_flood", ["", "--members 2"], indirect=True, ids=["one-member", "member-a-megabyte"]
)
async def test_a_gzip_bomb_is_cut_off_at_the_limit_of_what_it_expands_to(
    env: Environment, http_flood: str
) -> None:
    # About 250 KB of gzip that expands to 256 MiB (in one gzip member, or in 258: the 64 MiB
    # hold for them all): read whole, the body and its joined copy would grow the process by
    # at least 512 MiB.
    entry = McpServerConfig(url=http_flood, timeout=30)
    async with McpSupervisor({"remote": entry}, env) as mcp:
        with peak_rss_growth() as peak:
            result = await mcp.call_tool("remote", "bomb", {})
        echoed = await mcp.call_tool("remote", "echo", {"text": "still here"})
    assert peak.grown < 200, f"the peak RSS grew by {peak.grown:.0f} MiB"
    assert result.is_error
    assert result.error_code == MCP_ERROR, result.error_message
    message = result.error_message or ""
    assert "'remote'" in message, message
    assert LIMIT in message, message
    assert "gzip" in message, message
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize("tool", ["untrailed", "cut"])
async def test_a_gzip_answer_cut_short_ends_its_call_naming_the_server(
    env: Environment, http_flood: str, tool: str
) -> None:
    # untrailed: the whole answer but gzip's 8-byte trailer; cut: half the compressed bytes
    entry = McpServerConfig(url=http_flood, timeout=30)
    result, echoed = await _call_then_echo(env, "remote", entry, tool)
    assert result.is_error
    assert result.error_code == MCP_ERROR, result.error_message
    message = result.error_message or ""
    assert message.startswith(f"MCP server 'remote' refused the call of '{tool}': "), message
    assert f"the gzip-compressed answer of {http_flood} is cut short" in message, message
    assert "JSON" not in message.partition("cut short")[2], message
    assert echoed.text_content == "echo: still here"


async def test_a_broken_answer_names_the_servers_url_without_its_password(
    env: Environment, http_flood: str
) -> None:
    url = http_flood.replace("http://", "http://user:s3cret@", 1)
    entry = McpServerConfig(url=url, timeout=30)
    result, echoed = await _call_then_echo(env, "remote", entry, "cut")
    message = result.error_message or ""
    shown = http_flood.replace("http://", "http://user:[redacted]@", 1)
    assert f"the gzip-compressed answer of {shown} is cut short" in message, message
    assert "s3cret" not in message
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize(
    ("tool", "bound"), [("void", "more than 100,000 gzip members"), ("stall", "64 MiB as sent")]
)
async def test_a_compressed_answer_expanding_to_nothing_without_end_is_cut_off_naming_why(
    env: Environment, http_flood: str, tool: str, bound: str
) -> None:
    # void: empty gzip members without end; stall: one member of empty deflate blocks
    entry = McpServerConfig(url=http_flood, timeout=20)
    result, echoed = await _call_then_echo(env, "remote", entry, tool)
    assert result.is_error
    assert result.error_code == MCP_ERROR, result.error_message
    message = result.error_message or ""
    assert message.startswith(f"MCP server 'remote' refused the call of '{tool}': "), message
    assert http_flood in message, message
    assert bound in message, message
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize(
    "http_flood",
    ["--sse --encoding gzip --members 3", "--sse --encoding raw-deflate --dribble"],
    indirect=True,
    ids=["sse-gzip-members", "sse-raw-deflate-byte-by-byte"],
)
async def test_a_compressed_sse_answer_is_read_whatever_its_members_or_chunks(
    env: Environment, http_flood: str
) -> None:
    echoed = await _connect_and_echo(env, http_flood)
    assert echoed.text_content == "echo: still here"


@pytest.mark.parametrize("http_flood", ["--sse"], indirect=True, ids=["sse"])
async def test_a_gzip_sse_answer_cut_short_ends_as_a_dropped_stream_and_is_logged_naming_it(
    env: Environment, http_flood: str, caplog: pytest.LogCaptureFixture
) -> None:
    # cut: half the compressed bytes of one event, the stream ending there. The SDK resumes a
    # dropped stream of a server that numbers its events (this one does not), so a cut is one.
    entry = McpServerConfig(url=http_flood, timeout=30)
    caplog.set_level(logging.WARNING)
    async with McpSupervisor({"remote": entry}, env) as mcp:
        result = await mcp.call_tool("remote", "cut", {})
    assert result.is_error
    message = result.error_message or ""
    assert "'remote'" in message, message
    assert "SSE stream ended without a response" in message, message
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    cut = f"the gzip-compressed answer of {http_flood} is cut short"
    assert any(cut in w for w in warned), warned


@pytest.mark.parametrize("http_flood", ["--sse --encoding gzip"], indirect=True, ids=["sse"])
async def test_a_compressed_sse_answer_is_read_and_a_bomb_in_one_event_is_cut_off_naming_why(
    env: Environment, http_flood: str
) -> None:
    # The SDK reads SSE itself (httpx expands it a megabyte at a time) and bounds an event at
    # 1 MiB: the bomb, one event of 256 MiB, ends its stream.
    entry = McpServerConfig(url=http_flood, timeout=30)
    async with McpSupervisor({"remote": entry}, env) as mcp:
        assert mcp.status()["remote"].state == "connected", mcp.status()["remote"].reason
        echoed = await mcp.call_tool("remote", "echo", {"text": "first"})
        with peak_rss_growth() as peak:
            result = await mcp.call_tool("remote", "bomb", {})
        # hermes takes the SDK's word that the connection closed, and connects again.
        for _ in range(100):
            again = await mcp.call_tool("remote", "echo", {"text": "still here"})
            if not again.is_error:
                break
            await anyio.sleep(0.2)
    assert peak.grown < 200, f"the peak RSS grew by {peak.grown:.0f} MiB"
    assert echoed.text_content == "echo: first"
    assert result.is_error
    message = result.error_message or ""
    assert "'remote'" in message, message
    assert "1048576 byte limit" in message, message
    assert again.text_content == "echo: still here"


async def test_a_storm_of_list_changed_is_listed_at_most_once_a_second(env: Environment) -> None:
    entry = McpServerConfig.model_validate({"command": sys.executable, "args": [str(STORM)]})
    async with McpSupervisor({"storm": entry}, env) as mcp:
        await anyio.sleep(3)
        counted = await mcp.call_tool("storm", "listings", {})
        assert mcp.status()["storm"].state == "connected"
    listings = int(counted.text_content)
    # The first listing, then one a second at most (a storm of 600 notifications in 3 s).
    assert 1 < listings <= 5, listings


async def test_a_server_listing_tools_without_end_is_refused_past_the_bound_naming_the_count(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    # 500 new tools on every page, and a next cursor for ever
    entry = McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(PAGER), "500"], "connect_timeout": 30}
    )
    seen = ToolsSeen()
    caplog.set_level(logging.WARNING)
    async with McpSupervisor({"pager": entry}, env, on_tools_changed=seen) as mcp:
        status = mcp.status()["pager"]
    assert status.state == "unavailable"
    reason = status.reason or ""
    assert "more than 10,000 tools" in reason, reason
    assert "10,500" in reason, reason
    assert "connect_timeout" not in reason, reason
    assert "\n" not in reason
    assert not seen.current.get("pager")
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("'pager'" in w and "10,000" in w for w in warned), warned


@pytest.mark.parametrize(
    ("ident", "expected"),
    [
        (b"7", 7),
        (b'"a\\"b"', 'a"b'),
        (b'"a\\\\b"', "a\\b"),
        (b'"plain"', "plain"),
        (b'"a\\nb"', "a\nb"),
        (b'"\\u0041\\/"', "A/"),
        (b'"\\ud83d\\ude00 \\t\\"\\\\"', '\U0001f600 \t"\\'),
        (b'"\\u0033"', "3"),
        (b'"\\x"', None),  # not an escape JSON has
        (b'"' + b"\\u0041" * 200 + b'"', "A" * 200),  # 1,200 bytes as written
        (b'"' + b"a" * 1201 + b'"', None),  # past the bound of an id's length
    ],
)
def test_the_id_of_a_deep_answer_is_read_as_the_server_wrote_it(
    ident: bytes, expected: object
) -> None:
    # The scan blanks escapes to find the strings' ends; the id must come from the line itself.
    deep = b"[" * 300 + b"]" * 300
    line = b'{"jsonrpc": "2.0", "result": ' + deep + b', "id": ' + ident + b"}"

    assert _answered_id(line) == expected


@pytest.mark.parametrize("depth", [255, 900])
async def test_arguments_too_deep_to_send_are_refused_and_the_server_stays_connected(
    env: Environment, depth: int
) -> None:
    # A model's arguments nested some 255 levels deep broke the SDK's encoder: the connection
    # closed mid-call and every later call found the server "still connecting".
    nested: Any = []
    for _ in range(depth - 1):
        nested = [nested]
    async with McpSupervisor({"box": toolbox_entry(timeout=20)}, env) as mcp:
        result = await mcp.call_tool("box", "echo", {"text": "deep", "nested": nested})
        assert mcp.status()["box"].state == "connected"
        echoed = await mcp.call_tool("box", "echo", {"text": "still here"})
    assert result.is_error
    assert result.error_code == "INVALID_ARGUMENTS"
    message = result.error_message or ""
    assert message == (
        "the arguments of 'echo' (MCP server 'box') nest more than 200 levels deep; nothing "
        "was sent: send them less deeply nested"
    ), message
    assert echoed.text_content == "echo: still here"


async def test_arguments_nested_100_levels_deep_still_reach_the_server(env: Environment) -> None:
    nested: Any = []
    for _ in range(98):
        nested = [nested]
    async with McpSupervisor({"box": toolbox_entry(timeout=20)}, env) as mcp:
        result = await mcp.call_tool("box", "echo", {"text": "deep", "nested": nested})
    assert result.text_content == "echo: deep"

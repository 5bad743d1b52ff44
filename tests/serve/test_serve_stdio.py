"""``hermes serve`` as over stdio (one connection, one hermes session), driven by the ``mcp`` SDK
client in both protocol eras: 2026-07-28 (the SDK's default, ``auto``) and 2025-11-25
(``legacy``, the era of the TypeScript SDK and most desktop clients). The rules are checked
with the host served in this process (``in_process.py``); one test starts the real process."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from in_process import in_process
from mcp import Client
from serving import BRIDGE_TOOLS, CORE_TOOLS, ServeHome, served_tools_once_listed, toolbox_server

ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


@pytest.mark.parametrize("mode", ERAS)
def test_tools_list_is_the_core_tools_plus_the_bridge_with_the_listing(
    served: ServeHome, mode: Any
) -> None:
    served.write_config(mcp_servers={"box": toolbox_server()})

    async def main() -> list[mcp_types.Tool]:
        async with in_process(served, mode=mode) as client:
            return await served_tools_once_listed(client, "mcp__box__echo")

    tools = anyio.run(main)
    by_name = {tool.name: tool for tool in tools}
    assert [tool.name for tool in tools] == CORE_TOOLS + BRIDGE_TOOLS
    listing = by_name["tool_search"].description or ""
    assert "mcp__box__echo" in listing
    assert "todo_list" in listing
    read_file = by_name["read_file"]
    assert read_file.input_schema["required"] == ["path"]
    assert read_file.annotations is not None
    assert read_file.annotations.read_only_hint is True
    assert read_file.annotations.destructive_hint is False
    terminal = by_name["terminal"].annotations
    assert terminal is not None
    assert terminal.destructive_hint is True


@pytest.mark.parametrize("mode", ERAS)
def test_the_bridge_searches_describes_and_calls_a_deferred_mcp_tool(
    served: ServeHome, mode: Any
) -> None:
    served.write_config(mcp_servers={"box": toolbox_server()})
    name = "mcp__box__echo"

    async def main() -> list[mcp_types.CallToolResult]:
        async with in_process(served, mode=mode) as client:
            return [
                await client.call_tool("tool_search", {"queries": ["echo the text back"]}),
                await client.call_tool("tool_describe", {"names": [name]}),
                await client.call_tool("tool_call", {"name": name, "arguments": {"text": "hi"}}),
            ]

    found, described, called = anyio.run(main)
    assert found.is_error is False
    assert found.structured_content is not None
    assert name in found.structured_content["results"][0]["matches"]
    assert described.is_error is False
    assert described.structured_content is not None
    schema = described.structured_content["tools"][name]["parameters"]
    assert schema["required"] == ["text"]
    assert called.is_error is False
    assert text_of(called) == "echo: hi"


def test_one_session_per_connection_keeps_the_todo_list_between_calls(served: ServeHome) -> None:
    served.write_config()

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served) as client:
            written = await client.call_tool(
                "tool_call",
                {"name": "todo_list", "arguments": {"todos": [{"content": "water the plants"}]}},
            )
            assert written.is_error is False, text_of(written)
            return await client.call_tool("tool_call", {"name": "todo_list", "arguments": {}})

    shown = anyio.run(main)
    assert shown.is_error is False
    assert "water the plants" in text_of(shown)


def test_a_call_needing_approval_is_denied_with_the_non_interactive_rule(
    served: ServeHome,
) -> None:
    served.write_config()
    marker = served.work / "created-by-terminal"

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served, mode="legacy") as client:
            return await client.call_tool("terminal", {"command": f"touch {marker}"})

    result = anyio.run(main)
    assert result.is_error is True
    assert "approvals.non_interactive" in text_of(result)
    assert not marker.exists()


def test_non_interactive_allow_lets_the_call_run(served: ServeHome) -> None:
    served.write_config(approvals={"non_interactive": "allow"})
    marker = served.work / "created-by-terminal"

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served) as client:
            return await client.call_tool("terminal", {"command": f"touch {marker}"})

    result = anyio.run(main)
    assert result.is_error is False, text_of(result)
    assert marker.exists()


def test_invalid_arguments_come_back_as_an_error_result_naming_the_problem(
    served: ServeHome,
) -> None:
    served.write_config()

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served, mode="legacy") as client:
            return await client.call_tool("read_file", {"offset": 3})

    result = anyio.run(main)
    assert result.is_error is True
    assert "path" in text_of(result)


@pytest.mark.subprocess
def test_a_stdio_client_starts_serve_lists_searches_and_calls_and_serve_exits_with_it(
    served: ServeHome,
) -> None:
    # The whole process over stdio; the rules above are checked in process.
    served.write_config(mcp_servers={"box": toolbox_server()})
    name = "mcp__box__echo"

    async def main() -> tuple[list[str], mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with Client(served.stdio_parameters()) as client:
            tools = await served_tools_once_listed(client, name)
            found = await client.call_tool("tool_search", {"queries": ["echo the text back"]})
            called = await client.call_tool(
                "tool_call", {"name": name, "arguments": {"text": "hi"}}
            )
            return [tool.name for tool in tools], found, called

    names, found, called = anyio.run(main)
    assert names == CORE_TOOLS + BRIDGE_TOOLS
    assert found.structured_content is not None
    assert name in found.structured_content["results"][0]["matches"]
    assert called.is_error is False
    assert text_of(called) == "echo: hi"

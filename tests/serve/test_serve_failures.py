"""``hermes serve`` outlives what goes wrong inside one call: a plugin hook raising
``KeyboardInterrupt`` or a ``BaseException`` of its own, and a ``tool_call`` whose ``calls`` is
a JSON string nested deeper than Python parses. Each is an error result; the next call is
served. A tool whose plugin is not loaded is explained, also once the plugin was enabled after
serve started; an MCP server added since is said to connect at the next start, unless it is
added disabled."""

from __future__ import annotations

import sys

import anyio
import mcp_types
from in_process import in_process
from serving import BUNDLED, TOOLBOX_SERVER, ServeHome

from hermes_core.testing import write_dir_plugin

ENDING_HOOK = """
from hermes_core._hookspecs import hookimpl


class PluginBaseException(BaseException):
    pass


@hookimpl
def hermes_pre_tool_call(call):
    if call.name == "todo_list":
        raise KeyboardInterrupt("raised by the hook")
    if call.name == "search_files":
        raise PluginBaseException("raised by the hook")
"""


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


def test_serve_answers_after_hooks_raise_base_exceptions_and_a_too_deep_tool_call(
    served: ServeHome,
) -> None:
    write_dir_plugin(served.home / "plugins", "ending", ENDING_HOOK)
    served.write_config(plugins={"enabled": [*BUNDLED, "ending"]})
    deep = "[" * 100_000 + "]" * 100_000

    async def main() -> list[mcp_types.CallToolResult]:
        async with in_process(served) as client:
            return [
                await client.call_tool("tool_call", {"name": "todo_list", "arguments": {}}),
                await client.call_tool("search_files", {"pattern": "x"}),
                await client.call_tool("tool_call", {"calls": deep}),
                await client.call_tool("tool_search", {"queries": ["todo"]}),
            ]

    interrupted, ended, too_deep, searched = anyio.run(main)
    assert interrupted.is_error is True
    assert "'ending'" in text_of(interrupted)
    assert "KeyboardInterrupt" in text_of(interrupted)
    assert ended.is_error is True
    assert "PluginBaseException" in text_of(ended)
    assert too_deep.is_error is True
    assert "nested too deeply" in text_of(too_deep)
    assert searched.is_error is False


WEATHER = """
from hermes_core.plugin import Tool, hookimpl


@hookimpl
def hermes_tools():
    return [Tool("weather_now", "The weather now.", handler=lambda city="": "sunny")]
"""


def test_serve_names_the_plugin_of_a_tool_it_lacks_and_how_to_enable_it(
    served: ServeHome,
) -> None:
    # The model behind a client got a bare "There is no tool named"; hermes tools call said
    # which plugin provides the tool and how to enable it.
    write_dir_plugin(
        served.home / "plugins", "weather", WEATHER, manifest={"provides_tools": ["weather_now"]}
    )
    served.write_config()

    async def main() -> list[mcp_types.CallToolResult]:
        async with in_process(served) as client:
            return [
                await client.call_tool("weather_now", {"city": "Oslo"}),
                await client.call_tool("tool_call", {"name": "weather_now"}),
            ]

    for result in anyio.run(main):
        assert result.is_error is True
        assert "plugin 'weather' (user, " in text_of(result)
        assert "is not enabled: enable it with: hermes plugins enable weather" in text_of(result)


def test_a_plugin_enabled_while_serve_runs_is_said_to_load_at_its_next_start(
    served: ServeHome,
) -> None:
    # The running serve read its configuration at start: after `hermes plugins enable` it kept
    # telling the client to run that very command.
    write_dir_plugin(
        served.home / "plugins", "weather", WEATHER, manifest={"provides_tools": ["weather_now"]}
    )
    served.write_config()

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served) as client:
            await client.call_tool("weather_now", {"city": "Oslo"})
            served.cli.subprocess_run("plugins", "enable", "weather")
            return await client.call_tool("weather_now", {"city": "Oslo"})

    result = anyio.run(main)
    assert result.is_error is True
    text = text_of(result)
    assert "hermes plugins enable weather" not in text
    assert (
        f"plugin 'weather' (user, {served.home / 'plugins' / 'weather'}) is enabled in "
        f"{served.config_path} since this hermes started: it loads at hermes' next start "
        "(restart this hermes; for hermes serve, restart or reconnect its server in your MCP "
        "client)"
    ) in text


def test_an_mcp_server_added_while_serve_runs_is_said_to_connect_at_its_next_start(
    served: ServeHome,
) -> None:
    # After `hermes mcp add`, the running serve answered a call of the new server's tool with
    # "unknown tool ...: use tool_search to find the exact name", which finds nothing.
    served.write_config()

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served) as client:
            served.cli.subprocess_run(
                "mcp", "add", "box", "--", sys.executable, str(TOOLBOX_SERVER)
            )
            return await client.call_tool(
                "tool_call", {"name": "mcp__box__echo", "arguments": {"text": "hi"}}
            )

    result = anyio.run(main)
    assert result.is_error is True
    assert (
        f"'mcp__box__echo' would be a tool of the MCP server 'box', added to "
        f"{served.config_path} since this hermes started: it connects at hermes' next start "
        "(restart this hermes; for hermes serve, restart or reconnect its server in your MCP "
        "client)"
    ) in text_of(result)


def test_an_mcp_server_added_disabled_while_serve_runs_is_not_said_to_connect(
    served: ServeHome,
) -> None:
    # Added with `enabled: false`, the server was still said to connect at the next start.
    served.write_config()

    async def main() -> mcp_types.CallToolResult:
        async with in_process(served) as client:
            box = {"command": sys.executable, "args": [str(TOOLBOX_SERVER)], "enabled": False}
            served.write_config(mcp_servers={"box": box})
            return await client.call_tool(
                "tool_call", {"name": "mcp__box__echo", "arguments": {"text": "hi"}}
            )

    result = anyio.run(main)
    assert result.is_error is True
    text = text_of(result)
    assert "it connects at hermes' next start" not in text
    assert (
        f"'mcp__box__echo' would be a tool of the MCP server 'box', added to "
        f"{served.config_path} since this hermes started, and disabled there "
        "(mcp_servers.box.enabled is false)"
    ) in text

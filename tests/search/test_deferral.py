"""What is deferrable: the seven rules of tool-search.md, in order."""

from __future__ import annotations

import pytest
from bridge_fixtures import core_tool, mcp_tool, plugin_tool

from hermes_core._config import DEFAULT_DEFER, ToolSearchConfig
from hermes_core._tools import Tool
from hermes_core.search._deferral import is_deferrable


def test_bridge_names_are_never_deferrable() -> None:
    config = ToolSearchConfig(defer=["tool_search", "tool_call"])
    for name in ("tool_search", "tool_describe", "tool_call"):
        assert not is_deferrable(plugin_tool("x", name), config)


def test_always_visible_name_is_not_deferred() -> None:
    config = ToolSearchConfig(always_visible=["deploy"])
    assert not is_deferrable(plugin_tool("ops", "deploy"), config)
    assert is_deferrable(plugin_tool("ops", "rollback"), config)


def test_always_visible_glob_keeps_a_whole_server_visible() -> None:
    config = ToolSearchConfig(always_visible=["mcp__github__*"])
    assert not is_deferrable(mcp_tool("github", "create_issue"), config)
    assert is_deferrable(mcp_tool("gitlab", "create_issue"), config)


def test_always_visible_wins_over_defer() -> None:
    config = ToolSearchConfig(defer=["todo_list"], always_visible=["todo_*"])
    assert not is_deferrable(core_tool("todo_list"), config)


def test_defer_list_wins_over_core() -> None:
    config = ToolSearchConfig(defer=["read_file"])
    assert is_deferrable(core_tool("read_file"), config)
    assert not is_deferrable(core_tool("write_file"), config)


def test_default_defer_list_defers_event_triggered_builtins() -> None:
    config = ToolSearchConfig()
    assert list(DEFAULT_DEFER) == config.defer
    assert is_deferrable(core_tool("todo_list"), config)
    assert is_deferrable(core_tool("process_manage"), config)
    assert not is_deferrable(core_tool("clarify"), config)


@pytest.mark.subprocess
def test_user_defer_list_replaces_the_default() -> None:
    config = ToolSearchConfig(defer=["terminal"])
    assert is_deferrable(core_tool("terminal"), config)
    assert not is_deferrable(core_tool("todo_list"), config)


def test_empty_defer_list_defers_no_builtin() -> None:
    config = ToolSearchConfig(defer=[])
    assert not is_deferrable(core_tool("todo_list"), config)
    assert is_deferrable(mcp_tool("github", "create_issue"), config)


def test_core_tool_is_not_deferred() -> None:
    assert not is_deferrable(core_tool("read_file"), ToolSearchConfig())


def test_mcp_tool_is_deferred() -> None:
    assert is_deferrable(mcp_tool("github", "create_issue"), ToolSearchConfig())


def test_mcp_toolset_marks_an_mcp_tool() -> None:
    tool = Tool(name="list_repos", description="", toolset="mcp-github", source="plugin")
    assert is_deferrable(tool, ToolSearchConfig(defer=[]))


def test_other_plugin_tool_is_deferred() -> None:
    assert is_deferrable(plugin_tool("weather", "forecast"), ToolSearchConfig())


def test_catalog_and_connector_tools_are_deferred() -> None:
    for source in ("catalog", "connectors"):
        tool = Tool(name="x_y", description="", source=source)  # type: ignore[arg-type]
        assert is_deferrable(tool, ToolSearchConfig())


def test_tool_of_unknown_origin_stays_visible() -> None:
    tool = Tool(name="mystery", description="", source="somewhere")  # type: ignore[arg-type]
    assert not is_deferrable(tool, ToolSearchConfig())

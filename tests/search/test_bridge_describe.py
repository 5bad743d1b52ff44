"""tool_describe: shapes, the cap, not_found, errors, grants (connectors:
``tests/connectors/test_connector_calls.py``)."""

from __future__ import annotations

from typing import Any

import anyio
from bridge_fixtures import (
    core_tool,
    mcp_tool,
    registry_of,
    session,
    tool_search,
)

from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core.search._toolsearch import ToolSearch

SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}


def _registry() -> Registry:
    tools = [core_tool("read_file", "Read a file.")]
    tools += [mcp_tool("github", f"op_{n}", f"Operation {n}.", SCHEMA) for n in range(12)]
    return registry_of(tools)


def _describe(search: ToolSearch, names: Any, s: Session | None = None) -> Any:
    return anyio.run(search.describe, names, s or session())


def test_describe_returns_full_description_and_parameters() -> None:
    answer = _describe(tool_search(_registry()), ["mcp__github__op_1"])
    assert answer == {
        "tools": {"mcp__github__op_1": {"description": "Operation 1.", "parameters": SCHEMA}}
    }


def test_bare_string_is_one_name_and_duplicates_are_removed() -> None:
    search = tool_search(_registry())
    assert list(_describe(search, "mcp__github__op_2")["tools"]) == ["mcp__github__op_2"]
    names = ["mcp__github__op_2", "mcp__github__op_3", "mcp__github__op_2"]
    assert list(_describe(search, names)["tools"]) == ["mcp__github__op_2", "mcp__github__op_3"]


def test_describe_caps_at_10() -> None:
    search = tool_search(_registry())
    ten = _describe(search, [f"mcp__github__op_{n}" for n in range(10)])
    assert len(ten["tools"]) == 10
    eleven = _describe(search, [f"mcp__github__op_{n}" for n in range(11)])
    assert "at most 10" in eleven["error"]
    assert "tools" not in eleven


def test_ten_names_after_removing_duplicates_pass() -> None:
    names = [f"mcp__github__op_{n}" for n in range(10)] + ["mcp__github__op_0"]
    assert len(_describe(tool_search(_registry()), names)["tools"]) == 10


def test_unknown_names_go_to_not_found_and_empty_keys_are_omitted() -> None:
    answer = _describe(tool_search(_registry()), ["mcp__github__op_0", "nope"])
    assert answer["not_found"] == ["nope"]
    assert "errors" not in answer


def test_visible_tool_is_an_error_saying_call_it_directly() -> None:
    answer = _describe(tool_search(_registry()), ["read_file"])
    assert answer == {"errors": {"read_file": "in your tool list: call it directly"}}


def test_bridge_tool_is_an_error() -> None:
    answer = _describe(tool_search(_registry()), ["tool_call"])
    assert "call it directly" in answer["errors"]["tool_call"]


def test_tool_outside_the_grant_is_not_found() -> None:
    conversation = session(granted_toolsets=frozenset({"core"}))
    answer = _describe(tool_search(_registry()), ["mcp__github__op_0"], conversation)
    assert answer == {"not_found": ["mcp__github__op_0"]}


def test_describe_result_through_the_tool_is_compact_json() -> None:
    describe_tool = tool_search(_registry()).bridge_tools()[1]
    assert describe_tool.name == "tool_describe"
    assert describe_tool.handler is not None
    result = anyio.run(lambda: describe_tool.handler(session=session(), names="mcp__github__op_0"))
    assert result.structured == {
        "tools": {"mcp__github__op_0": {"description": "Operation 0.", "parameters": SCHEMA}}
    }


def test_a_name_without_its_server_prefix_is_not_found_with_the_name_to_send() -> None:
    # A model often drops the prefix (``op_1`` for ``mcp__github__op_1``); tool_call names the
    # full name then, and tool_describe must too, or the model is left to guess.
    answer = _describe(tool_search(_registry()), ["op_1", "github__op_2", "nothing_like_it"])
    assert answer == {
        "not_found": ["op_1", "github__op_2", "nothing_like_it"],
        "did_you_mean": {"op_1": "mcp__github__op_1", "github__op_2": "mcp__github__op_2"},
    }
    # ... and never a tool outside the session's grant.
    conversation = session(granted_toolsets=frozenset({"core"}))
    assert _describe(tool_search(_registry()), ["op_1"], conversation) == {"not_found": ["op_1"]}


def test_a_bare_name_two_servers_share_is_an_error_naming_both() -> None:
    tools = [mcp_tool("bee", "search", "Search the hive."), mcp_tool("cee", "search", "Sea.")]
    answer = _describe(tool_search(registry_of(tools)), ["search"])
    assert answer == {
        "errors": {
            "search": "no tool has that name; did you mean one of 'mcp__bee__search', "
            "'mcp__cee__search'? Send the full name"
        }
    }


def test_a_misnamed_names_key_is_named_with_the_call_to_send_instead() -> None:
    describe_tool = tool_search(_registry()).bridge_tools()[1]
    assert describe_tool.handler is not None
    result = anyio.run(lambda: describe_tool.handler(session=session(), name="mcp__github__op_0"))
    assert result.structured == {
        "error": 'tool_describe takes "names", not "name". Nothing was described: send '
        '{"names": ["mcp__github__op_0"]}',
        "code": "INVALID_ARGUMENTS",
    }

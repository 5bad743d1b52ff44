"""tool_call: accepted shapes, the batch rule, refusals, validation, dispatch under the real name
(connector batches: ``tests/connectors/test_connector_calls.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge_fixtures import (
    HookRecorder,
    core_tool,
    mcp_tool,
    plugin_tool,
    real_host,
    session,
    tool_search,
    use_search,
)

from hermes_core._dispatch import Dispatcher
from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core._tools import Tool, ToolResult
from hermes_core.search._toolsearch import ToolSearch

ISSUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "count": {"type": "integer"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        },
    },
    "required": ["repo"],
}


class Bench:
    """A registry, the real dispatcher with a hook recorder, and the tool search over them."""

    def __init__(self, tmp_path: Path) -> None:
        self.ran: list[dict[str, Any]] = []

        def create_issue(**arguments: Any) -> dict[str, Any]:
            self.ran.append(arguments)
            return {"created": arguments}

        tools = [
            core_tool("read_file", "Read a file."),
            mcp_tool("github", "create_issue", "Create an issue.", ISSUE_SCHEMA, create_issue),
            mcp_tool("github", "list_issues", "List issues."),
            plugin_tool("weather", "forecast", "Weather forecast."),
        ]
        self.hooks = HookRecorder()
        self.host = real_host(tmp_path, tools, [("recorder", self.hooks)])
        self.registry: Registry = self.host.registry
        self.dispatcher: Dispatcher = self.host.dispatcher
        self.search: ToolSearch = use_search(self.host, tool_search(self.registry))

    def call(self, payload: Any, s: Session | None = None) -> ToolResult:
        return anyio.run(self.dispatcher.dispatch, "tool_call", payload, s or session())


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Bench]:
    made = Bench(tmp_path)
    yield made
    made.host.close()


def _error(result: ToolResult) -> dict[str, Any]:
    assert result.is_error
    payload = json.loads(result.text_content)
    assert payload == result.structured
    return payload  # type: ignore[no-any-return]


def test_call_is_dispatched_under_the_real_tool_name(bench: Bench) -> None:
    payload = {"calls": [{"name": "mcp__github__create_issue", "arguments": {"repo": "a/b"}}]}
    result = bench.call(payload)
    assert not result.is_error
    assert result.structured == {"created": {"repo": "a/b"}}
    assert bench.hooks.pre == ["mcp__github__create_issue"]
    assert bench.hooks.post == ["mcp__github__create_issue"]


def test_calls_as_a_json_string(bench: Bench) -> None:
    calls = json.dumps([{"name": "mcp__github__create_issue", "arguments": {"repo": "a/b"}}])
    assert not bench.call({"calls": calls}).is_error
    assert bench.ran == [{"repo": "a/b"}]


@pytest.mark.parametrize(
    "payload",
    [
        {"calls": [{"name": "mcp__github__create_issue", "arguments": {"repo": "a/b"}}]},
        {"name": "mcp__github__create_issue", "arguments": {"repo": "a/b"}},
    ],
)
def test_the_whole_arguments_object_as_a_json_string(bench: Bench, payload: Any) -> None:
    """What an OpenAI-style model sends: the arguments of tool_call as the JSON text of the
    object, not the object."""
    assert not bench.call(json.dumps(payload)).is_error
    assert bench.ran == [{"repo": "a/b"}]


def test_single_shape_name_and_arguments(bench: Bench) -> None:
    assert not bench.call(
        {"name": "mcp__github__create_issue", "arguments": {"repo": "x/y"}}
    ).is_error
    assert bench.ran == [{"repo": "x/y"}]


def test_arguments_as_a_json_string(bench: Bench) -> None:
    entry = {"name": "mcp__github__create_issue", "arguments": '{"repo": "a/b", "count": 2}'}
    assert not bench.call({"calls": [entry]}).is_error
    assert bench.ran == [{"repo": "a/b", "count": 2}]


@pytest.mark.parametrize("blank", ["", "   ", None, {}, []])
def test_blank_arguments_are_an_empty_object(bench: Bench, blank: Any) -> None:
    result = bench.call({"calls": [{"name": "mcp__github__list_issues", "arguments": blank}]})
    assert not result.is_error
    assert result.structured == {"received": {}}


def test_missing_arguments_are_an_empty_object(bench: Bench) -> None:
    result = bench.call({"calls": [{"name": "mcp__github__list_issues"}]})
    assert result.structured == {"received": {}}


def test_missing_calls_is_a_clear_error(bench: Bench) -> None:
    error = _error(bench.call({}))
    assert '{"calls": [{"name": "<tool name>", "arguments": {...}}]}' in error["error"]


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({"name": 5, "arguments": {}}, "calls[0].name must be a string (the tool's name), not 5"),
        (
            {"calls": [{"name": ["x"]}]},
            "calls[0].name must be a string (the tool's name), not a list",
        ),
        ({"calls": [{"name": "  "}]}, "calls[0].name is missing"),
        ({"calls": [{"arguments": {}}]}, "calls[0].name is missing"),
    ],
)
def test_a_name_that_is_not_a_string_is_named_as_such_not_as_missing(
    bench: Bench, payload: Any, said: str
) -> None:
    """A client (``hermes serve``'s, say) that sends ``{"name": 5}`` sent a name: telling it
    the name is missing sends it looking for the wrong mistake."""
    error = _error(bench.call(payload))
    assert error["error"].startswith(said)
    assert error["code"] == "INVALID_ARGUMENTS"
    assert bench.ran == []


def test_local_batch_is_rejected_with_first_entry_as_retry_shape(bench: Bench) -> None:
    first = {"name": "mcp__github__create_issue", "arguments": {"repo": "a/b"}}
    second = {"name": "mcp__github__list_issues", "arguments": {}}
    error = _error(bench.call({"calls": [first, second]}))
    shape = '{"calls":[{"name":"mcp__github__create_issue","arguments":{"repo":"a/b"}}]}'
    assert error["retry_with"] == shape
    assert shape in error["error"]
    assert "send the others as separate tool_call calls" in error["error"]
    assert bench.ran == []
    assert bench.hooks.pre == []


def test_batch_mixing_connector_and_local_tools_is_rejected(bench: Bench) -> None:
    calls = [
        {"name": "connectors__gmail__SEND_EMAIL", "arguments": {"to": "x"}},
        {"name": "mcp__github__list_issues", "arguments": {}},
    ]
    error = _error(bench.call({"calls": calls}))
    assert error["retry_with"].startswith('{"calls":[{"name":"connectors__gmail__SEND_EMAIL"')


def test_retry_shape_elides_arguments_past_1500_characters(bench: Bench) -> None:
    big = {"repo": "a/b", "body": "x" * 2000}
    calls = [
        {"name": "mcp__github__create_issue", "arguments": big},
        {"name": "mcp__github__list_issues"},
    ]
    error = _error(bench.call({"calls": calls}))
    assert "x" * 1500 not in error["retry_with"]
    assert "characters elided" in error["retry_with"]
    assert json.loads(error["retry_with"])["calls"][0]["name"] == "mcp__github__create_issue"


def test_a_batch_of_two_mcp_tools_is_refused_as_only_connector_tools_can_be_batched(
    bench: Bench,
) -> None:
    calls = [{"name": "mcp__github__create_issue"}, {"name": "mcp__github__list_issues"}]
    error = _error(bench.call({"calls": calls}))
    assert error["error"].startswith("only connector tools (connectors__...) can be batched")
    assert "local" not in error["error"]
    assert bench.ran == []


def test_a_batch_repeating_one_tool_names_it_once_in_the_refusal(bench: Bench) -> None:
    # A batch of 30 echoes was "this batch of 30 holds mcp__github__list_issues,
    # mcp__github__list_issues, ..." five times over.
    calls = [{"name": "mcp__github__list_issues"}] * 30 + [{"name": "mcp__github__create_issue"}]
    error = _error(bench.call({"calls": calls}))
    assert error["error"].startswith(
        "only connector tools (connectors__...) can be batched, and this batch of 31 holds "
        "mcp__github__list_issues, mcp__github__create_issue. Nothing was run."
    ), error["error"]
    assert bench.ran == []


def _tool_call_schema(search: ToolSearch) -> dict[str, Any]:
    (tool,) = [tool for tool in search.bridge_tools() if tool.name == "tool_call"]
    return dict(tool.parameters)


def test_tool_call_schema_requires_calls_and_allows_one_entry_without_connectors(
    bench: Bench,
) -> None:
    schema = _tool_call_schema(bench.search)
    assert schema["required"] == ["calls"]
    assert (
        schema["properties"]["calls"]["minItems"],
        schema["properties"]["calls"]["maxItems"],
    ) == (
        1,
        1,
    )


def test_calls_as_a_json_string_nested_too_deeply_is_a_clear_error(bench: Bench) -> None:
    error = _error(bench.call({"calls": "[" * 100_000 + "]" * 100_000}))
    assert "nested too deeply" in error["error"]
    assert bench.ran == []


def test_entry_arguments_as_a_json_string_nested_too_deeply_are_a_clear_error(
    bench: Bench,
) -> None:
    deep = '{"a":' * 50_000 + "1" + "}" * 50_000
    entry = {"name": "mcp__github__create_issue", "arguments": deep}
    error = _error(bench.call({"calls": [entry]}))
    assert error["error"].startswith("arguments is a JSON string nested too deeply")
    assert bench.ran == []


def test_a_refused_batch_holding_values_that_are_not_json_still_answers(bench: Bench) -> None:
    calls = [
        {"name": "mcp__github__create_issue", "arguments": {"labels": {"bug"}, "raw": b"x"}},
        {"name": "mcp__github__list_issues", "arguments": object()},
    ]
    error = _error(bench.call({"calls": calls}))
    assert "not JSON data" in error["retry_with"]
    assert bench.ran == []


def test_bridge_name_inside_calls_is_refused(bench: Bench) -> None:
    error = _error(bench.call({"calls": [{"name": "tool_search", "arguments": {}}]}))
    assert "bridge tool" in error["error"]


def test_visible_tool_is_refused_with_call_it_directly(bench: Bench) -> None:
    error = _error(bench.call({"calls": [{"name": "read_file", "arguments": {}}]}))
    assert "call it directly" in error["error"]
    assert bench.hooks.pre == []


def test_tool_outside_the_grant_is_not_available_in_this_session(bench: Bench) -> None:
    conversation = session(granted_toolsets=frozenset({"core", "weather"}))
    entry = {"name": "mcp__github__list_issues", "arguments": {}}
    error = _error(bench.call({"calls": [entry]}, conversation))
    assert "not available in this session" in error["error"]
    assert bench.hooks.pre == []


def test_unknown_name_suggests_the_deferred_name_that_ends_the_same_way(bench: Bench) -> None:
    error = _error(bench.call({"calls": [{"name": "create_issue", "arguments": {}}]}))
    assert (
        error["error"] == "unknown tool 'create_issue'. Did you mean 'mcp__github__create_issue'?"
    )
    error = _error(bench.call({"calls": [{"name": "mcp__gh__create_issue", "arguments": {}}]}))
    assert "Did you mean 'mcp__github__create_issue'?" in error["error"]


def test_a_bare_name_two_servers_share_is_answered_with_both_names(tmp_path: Path) -> None:
    # Two servers list "search": guessing the first in alphabetical order sent the model to a
    # server it may not have meant.
    tools = [
        mcp_tool("bee", "search", "Search the hive."),
        mcp_tool("cee", "search", "Search the sea."),
        mcp_tool("cee", "deep_search", "Search deeper."),
    ]
    host = real_host(tmp_path, tools, [])
    try:
        use_search(host, tool_search(host.registry))
        for name in ("search", "mcp__dee__search"):
            entry = {"name": name, "arguments": {}}
            result = anyio.run(host.dispatcher.dispatch, "tool_call", {"calls": [entry]}, session())
            assert _error(result)["error"] == (
                f"unknown tool {name!r}. Did you mean one of 'mcp__bee__search', "
                "'mcp__cee__search'? Send the full name."
            )
    finally:
        host.close()


def test_a_bare_name_two_servers_share_called_directly_suggests_both_first(
    tmp_path: Path,
) -> None:
    # `hermes tools call search`, or a serve client: the closest names by spelling alone were
    # web_search, tool_search and search_files, never the two servers' own "search".
    tools = [mcp_tool("bee", "search", "Search the hive."), mcp_tool("cee", "search", "Sea.")]
    host = real_host(tmp_path, tools, [])
    try:
        use_search(host, tool_search(host.registry))
        result = anyio.run(host.dispatcher.dispatch, "search", {}, session())
    finally:
        host.close()
    assert result.error_code == "UNKNOWN_TOOL"
    assert result.text_content.startswith(
        "There is no tool named 'search'. Did you mean: mcp__bee__search, mcp__cee__search, "
    ), result.text_content


def test_unknown_name_without_a_close_match_says_use_tool_search(bench: Bench) -> None:
    error = _error(bench.call({"calls": [{"name": "launch_rocket", "arguments": {}}]}))
    assert "use tool_search" in error["error"]
    assert "Did you mean" not in error["error"]


def test_did_you_mean_only_offers_tools_in_the_grant(bench: Bench) -> None:
    conversation = session(granted_toolsets=frozenset({"weather"}))
    error = _error(bench.call({"calls": [{"name": "create_issue"}]}, conversation))
    assert "Did you mean" not in error["error"]


def test_validation_errors_carry_the_schema_and_the_tool_does_not_run(bench: Bench) -> None:
    entry = {
        "name": "mcp__github__create_issue",
        "arguments": {"repo": "a", "items": [{"id": "x"}]},
    }
    result = bench.call({"calls": [entry]})
    # Issue 28: the text is a readable sentence (not the JSON), the structured result the detail.
    assert result.is_error
    assert result.text_content.startswith("Invalid arguments for 'mcp__github__create_issue'")
    assert "arguments.items[0].id" in result.text_content
    error: dict[str, Any] = result.structured
    assert error["path"] == "arguments.items[0].id"
    assert error["rule"] == "type"
    assert error["parameters"] == ISSUE_SCHEMA
    assert "send the call again" in error["hint"]
    assert bench.ran == []
    assert bench.hooks.pre == []


def test_arguments_are_coerced_before_validation(bench: Bench) -> None:
    entry = {"name": "mcp__github__create_issue", "arguments": {"repo": "a/b", "count": "3"}}
    assert not bench.call({"calls": [entry]}).is_error
    assert bench.ran == [{"repo": "a/b", "count": 3}]


def test_validators_are_built_on_a_tools_first_bridged_call(bench: Bench) -> None:
    assert bench.dispatcher.prepared_tools == 0
    bench.search.assemble(200_000)
    assert bench.dispatcher.prepared_tools == 0
    bench.call({"calls": [{"name": "mcp__github__create_issue", "arguments": {"repo": "r"}}]})
    assert bench.dispatcher.prepared_tools == 1


def _bridged_call(tmp_path: Path, tools: list[Tool], payload: dict[str, Any]) -> ToolResult:
    host = real_host(tmp_path, tools)
    try:
        return anyio.run(host.dispatch, "tool_call", payload, session())
    finally:
        host.close()


def test_broken_schema_does_not_block(tmp_path: Path) -> None:
    broken = mcp_tool("odd", "do_it", "Do it.", {"type": "object", "properties": 7})
    payload = {"name": "mcp__odd__do_it", "arguments": {"x": 1}}
    result = _bridged_call(tmp_path, [broken], payload)
    assert result.structured == {"received": {"x": 1}}


def test_non_local_ref_does_not_block(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"id": {"$ref": "https://example.com/id.json"}}}
    tools = [mcp_tool("odd", "fetch", "Fetch.", schema)]
    result = _bridged_call(tmp_path, tools, {"name": "mcp__odd__fetch", "arguments": {"id": 5}})
    assert result.structured == {"received": {"id": 5}}


def test_tool_call_dispatched_by_the_real_dispatcher_runs_the_real_tool(bench: Bench) -> None:
    arguments = {"name": "mcp__github__create_issue", "arguments": '{"repo": "a/b"}'}
    result = anyio.run(bench.dispatcher.dispatch, "tool_call", arguments, session())
    assert not result.is_error, result.text_content
    assert bench.ran == [{"repo": "a/b"}]
    assert "mcp__github__create_issue" in bench.hooks.pre


def test_tool_search_dispatched_by_the_real_dispatcher_accepts_a_bare_string(bench: Bench) -> None:
    result = anyio.run(bench.dispatcher.dispatch, "tool_search", {"queries": "forecast"}, session())
    assert not result.is_error, result.text_content
    assert result.structured["results"][0]["matches"] == ["forecast"]
    assert bench.hooks.post == ["tool_search"]

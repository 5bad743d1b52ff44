"""Failures from plugin code and odd input stay inside the dispatcher as clear error results."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import Harness, build_harness

from hermes_core._errors import RegistrationError
from hermes_core._hookspecs import hookimpl
from hermes_core._registry import Registry
from hermes_core._specs import PreCallDirective, ToolCall
from hermes_core._tools import Tool, ToolAnnotations, ToolResult

READ_ONLY = ToolAnnotations(read_only=True, destructive=False)


class ExitingTools:
    """Tools whose handlers end the process the way careless plugin code does."""

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        def exits() -> str:
            sys.exit(3)

        async def exits_async() -> str:
            raise SystemExit(4)

        def own_timeout() -> str:
            raise TimeoutError("connect timed out")

        async def own_timeout_async() -> str:
            raise TimeoutError("read timed out")

        def bad_blocks() -> ToolResult:
            return ToolResult(content=["just a string"])  # type: ignore[list-item]

        def untyped_blocks() -> ToolResult:
            return ToolResult(content=[{"text": "no type"}])

        schema = {
            "type": "object",
            "properties": {"offset": {"type": "integer"}, "items": {"type": "array"}},
        }
        common: dict[str, Any] = {"toolset": "sample", "annotations": READ_ONLY}
        return [
            Tool("exits", "x", handler=exits, **common),
            Tool("exits_async", "x", handler=exits_async, **common),
            Tool("own_timeout", "x", handler=own_timeout, **common),
            Tool("own_timeout_async", "x", handler=own_timeout_async, **common),
            Tool("bad_blocks", "x", handler=bad_blocks, **common),
            Tool("untyped_blocks", "x", handler=untyped_blocks, **common),
            Tool("takes", "x", schema, handler=lambda **kw: "ran", **common),
        ]


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(*plugins: tuple[str, object], **options: Any) -> Harness:
        harness = build_harness(
            tmp_path / f"h{len(made)}", plugins=[("sample", ExitingTools()), *plugins], **options
        )
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.mark.parametrize("tool", ["exits", "exits_async"])
def test_a_handler_calling_sys_exit_is_a_tool_error(
    harnesses: Callable[..., Harness], tool: str
) -> None:
    harness = harnesses()

    result = harness.call(tool, {})

    assert result.error_code == "TOOL_ERROR"
    assert "SystemExit" in result.text_content


class ExitingHook:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> None:
        sys.exit(5)


class ExitingObserver:
    @hookimpl
    def hermes_post_tool_call(self, call: ToolCall) -> None:
        sys.exit(6)


def test_a_hook_calling_sys_exit_blocks_the_call_naming_the_plugin(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(("quitter", ExitingHook()))

    result = harness.call("takes", {})

    assert result.error_code == "BLOCKED"
    assert "'quitter'" in result.text_content
    assert "SystemExit" in result.text_content


def test_an_observer_calling_sys_exit_does_not_stop_the_call(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(("quitter", ExitingObserver()))

    result = harness.call("takes", {})

    assert result.text_content == "ran"


@pytest.mark.parametrize("tool", ["own_timeout", "own_timeout_async"])
def test_a_timeout_error_raised_by_the_handler_is_its_failure_not_a_dispatch_timeout(
    harnesses: Callable[..., Harness], tool: str
) -> None:
    harness = harnesses()

    result = harness.call(tool, {})

    assert result.error_code == "TOOL_ERROR"
    assert "TimeoutError" in result.text_content
    assert "timed out" in result.text_content
    assert "did not finish within" not in result.text_content


class TimingOutHook:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> None:
        raise TimeoutError("policy server timed out")


def test_a_timeout_error_raised_by_a_hook_is_reported_as_its_failure(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(("gatekeeper", TimingOutHook()))

    result = harness.call("takes", {})

    assert result.error_code == "BLOCKED"
    assert "policy server timed out" in result.text_content
    assert "did not answer within" not in result.text_content


class ModifyWithoutArguments:
    def __init__(self, directive: object) -> None:
        self.directive = directive

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> object:
        return self.directive


@pytest.mark.parametrize(
    "directive",
    [
        pytest.param({"action": "modify", "arguments": "oops"}, id="mapping-with-a-string"),
        pytest.param({"action": "modify"}, id="mapping-without-arguments"),
        pytest.param(PreCallDirective("modify"), id="directive-without-arguments"),
    ],
)
def test_a_modify_directive_without_arguments_blocks_naming_the_plugin(
    harnesses: Callable[..., Harness], directive: object
) -> None:
    harness = harnesses(("rewriter", ModifyWithoutArguments(directive)))

    result = harness.call("takes", {"offset": 1})

    assert result.error_code == "BLOCKED"
    assert "'rewriter'" in result.text_content
    assert "without a mapping of arguments" in result.text_content


@pytest.mark.parametrize("tool", ["bad_blocks", "untyped_blocks"])
def test_a_result_whose_content_is_not_content_blocks_is_a_tool_error(
    harnesses: Callable[..., Harness], tool: str
) -> None:
    harness = harnesses()

    result = harness.call(tool, {})

    assert result.error_code == "TOOL_ERROR"
    assert "content blocks" in result.text_content


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"offset": "1" * 5000}, id="integer-with-too-many-digits"),
        pytest.param({"items": "[" * 100_000}, id="array-nested-too-deeply"),
        pytest.param("[" * 100_000, id="raw-arguments-nested-too-deeply"),
    ],
)
def test_oversized_or_too_deep_arguments_are_invalid_arguments(
    harnesses: Callable[..., Harness], arguments: Any
) -> None:
    harness = harnesses()

    result = harness.call("takes", arguments)

    assert result.error_code == "INVALID_ARGUMENTS"


TREE_SCHEMA = {
    "type": "object",
    "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    "properties": {"tree": {"$ref": "#/$defs/node"}},
}


class TreeTool:
    """A tool whose schema recurses: jsonschema follows a value as deep as it goes."""

    def __init__(self, schema: dict[str, Any] = TREE_SCHEMA) -> None:
        self.schema = schema
        self.ran: list[object] = []

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        def plant(tree: object) -> str:
            self.ran.append(tree)
            return "planted"

        return [Tool("plant", "x", self.schema, handler=plant, annotations=READ_ONLY)]


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_arguments_too_deep_for_the_validator_are_refused_and_the_tool_does_not_run(
    harnesses: Callable[..., Harness],
) -> None:
    tree = TreeTool()
    harness = harnesses(("tree", tree))

    result = harness.call("plant", {"tree": _nested(600, "not an array")})

    assert result.error_code == "INVALID_ARGUMENTS"
    assert "could not be checked" in result.text_content
    assert "nested too deeply" in result.text_content
    assert tree.ran == []
    assert harness.call("plant", {"tree": _nested(20, [])}).text_content == "planted"


def test_a_schema_whose_local_ref_leads_nowhere_does_not_block(
    harnesses: Callable[..., Harness],
) -> None:
    broken = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/missing"}}}
    tree = TreeTool(broken)
    harness = harnesses(("tree", tree))

    assert harness.call("plant", {"tree": 1}).text_content == "planted"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        pytest.param({"parameters": None}, "has parameters of type NoneType", id="parameters"),
        pytest.param({"timeout": None}, "has timeout None", id="timeout-none"),
        pytest.param({"timeout": "5"}, "has timeout '5'", id="timeout-string"),
        pytest.param({"timeout": 0}, "has timeout 0", id="timeout-zero"),
        pytest.param({"annotations": {"read_only": True}}, "annotations of type dict", id="ann"),
        pytest.param({"handler": "run"}, "handler of type str", id="handler"),
    ],
)
def test_a_malformed_tool_definition_is_refused_at_registration_naming_the_owner(
    fields: dict[str, Any], words: str
) -> None:
    registry = Registry()
    tool = Tool("broken", "x", **fields)

    with pytest.raises(RegistrationError, match=r"^my-plugin: the tool 'broken' ") as raised:
        registry.register(tool, owner="my-plugin")

    assert words in str(raised.value)
    assert "broken" not in registry

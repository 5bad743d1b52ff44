"""Validation of bridged arguments: errors carry path, rule and schema; broken schemas pass."""

from __future__ import annotations

from typing import Any

from bridge_fixtures import mcp_tool

from hermes_core._validation import argument_path, validate_arguments

ITEMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        }
    },
    "required": ["items"],
}


def test_valid_arguments_pass() -> None:
    tool = mcp_tool("shop", "order", parameters=ITEMS_SCHEMA)
    assert validate_arguments(tool, {"items": [{"id": 1}]}) is None


def test_error_carries_the_path_of_the_bad_value() -> None:
    tool = mcp_tool("shop", "order", parameters=ITEMS_SCHEMA)
    problem = validate_arguments(tool, {"items": [{"id": "x"}]})
    assert problem is not None
    assert problem.path == "arguments.items[0].id"
    assert problem.rule == "type"
    assert "'x' is not of type 'integer'" in problem.message


def test_missing_required_key_points_at_the_key() -> None:
    tool = mcp_tool("shop", "order", parameters=ITEMS_SCHEMA)
    problem = validate_arguments(tool, {"items": [{}]})
    assert problem is not None
    assert (problem.path, problem.rule) == ("arguments.items[0].id", "required")


def test_error_result_carries_the_full_schema_and_a_retry_hint() -> None:
    tool = mcp_tool("shop", "order", parameters=ITEMS_SCHEMA)
    problem = validate_arguments(tool, {})
    assert problem is not None
    result = problem.as_result()
    assert result["parameters"] == ITEMS_SCHEMA
    assert result["code"] == "INVALID_ARGUMENTS"
    assert result["path"] == "arguments.items"
    assert "send the call again" in result["hint"]
    assert "did not run" in result["hint"]


def test_broken_schema_does_not_block() -> None:
    tool = mcp_tool("shop", "order", parameters={"type": "object", "properties": 5})
    assert validate_arguments(tool, {"anything": True}) is None


def test_non_local_ref_does_not_block() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"$ref": "https://example.com/schemas/id.json"}},
    }
    tool = mcp_tool("shop", "order", parameters=schema)
    assert validate_arguments(tool, {"id": "whatever"}) is None


def test_local_ref_is_followed() -> None:
    schema = {
        "type": "object",
        "$defs": {"id": {"type": "integer"}},
        "properties": {"id": {"$ref": "#/$defs/id"}},
    }
    tool = mcp_tool("shop", "order", parameters=schema)
    problem = validate_arguments(tool, {"id": "x"})
    assert problem is not None
    assert problem.path == "arguments.id"


def test_argument_path_reads_like_the_arguments() -> None:
    assert argument_path(["a", 2, "b"]) == "arguments.a[2].b"
    assert argument_path([]) == "arguments"

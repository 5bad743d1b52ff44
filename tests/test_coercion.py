"""Argument coercion: exactly the repairs of the specification, and nothing else."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core._coercion import coerce_arguments, coerce_value
from hermes_core._hookspecs import hookimpl
from hermes_core._tools import Tool, ToolAnnotations
from hermes_core.testing import make_host


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        pytest.param("42", {"type": "integer"}, 42, id="integer-string"),
        pytest.param(" -7 ", {"type": "integer"}, -7, id="integer-signed"),
        pytest.param("4.5", {"type": "number"}, 4.5, id="number-string"),
        pytest.param("3", {"type": "number"}, 3, id="number-integral"),
        pytest.param("TRUE", {"type": "boolean"}, True, id="boolean-any-case"),
        pytest.param("false", {"type": "boolean"}, False, id="boolean-false"),
        pytest.param('["a", "b"]', {"type": "array"}, ["a", "b"], id="json-array"),
        pytest.param('{"k": 1}', {"type": "object"}, {"k": 1}, id="json-object"),
        pytest.param("a.txt", {"type": "array"}, ["a.txt"], id="scalar-to-array"),
        pytest.param("5", {"type": "array", "items": {"type": "integer"}}, [5], id="scalar-item"),
        pytest.param("null", {"type": ["integer", "null"]}, None, id="null-type-list"),
        pytest.param("null", {"type": "integer", "nullable": True}, None, id="null-nullable"),
        pytest.param(
            "null", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, id="null-anyof"
        ),
        pytest.param("  ", {"type": "object"}, {}, id="blank-object"),
        pytest.param("7", {"type": ["boolean", "integer"]}, 7, id="union-in-order"),
        pytest.param("true", {"type": ["integer", "boolean"]}, True, id="union-second"),
    ],
)
def test_spec_coercions(value: Any, schema: dict[str, Any], expected: Any) -> None:
    assert coerce_value(value, schema) == expected
    assert type(coerce_value(value, schema)) is type(expected)


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        pytest.param("4.5", {"type": "integer"}, id="no-rounding"),
        pytest.param("yes", {"type": "boolean"}, id="only-true-false"),
        pytest.param("null", {"type": "integer"}, id="null-not-allowed"),
        pytest.param("null", {"type": ["string", "null"]}, id="null-is-a-string-here"),
        pytest.param("", {"type": "object", "required": ["a"]}, id="blank-with-required"),
        pytest.param("NaN", {"type": "number"}, id="no-nan"),
        pytest.param("1e999", {"type": "number"}, id="no-infinity"),
        pytest.param("[NaN]", {"type": "array"}, id="no-nan-in-json"),
        pytest.param('{"a": 1}', {"type": "array"}, id="json-of-wrong-kind"),
        pytest.param(42, {"type": "string"}, id="no-number-to-string"),
        pytest.param("42", {"type": "string"}, id="string-stays"),
        pytest.param("x", {}, id="no-schema"),
    ],
)
def test_conservative_when_unsure(value: Any, schema: dict[str, Any]) -> None:
    assert coerce_value(value, schema) == value


def test_nested_properties_and_items_are_coerced_where_the_schema_says() -> None:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer"},
            "filters": {
                "type": "object",
                "properties": {"archived": {"type": "boolean"}},
            },
            "ids": {"type": "array", "items": {"type": "integer"}},
            "free": {},
        },
    }
    arguments = {"limit": "10", "filters": '{"archived": "false"}', "ids": ["1", 2], "free": "3"}

    coerced = coerce_arguments(arguments, schema)

    assert coerced == {"limit": 10, "filters": {"archived": False}, "ids": [1, 2], "free": "3"}
    assert arguments["limit"] == "10"


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


SCHEMAS = st.sampled_from(
    [
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "number"}},
        {"type": "object", "properties": {"x": {"type": "number"}}},
        {"type": ["number", "null"]},
    ]
)


@given(value=st.text(max_size=30), schema=SCHEMAS)
def test_nan_and_infinity_are_never_produced(value: str, schema: dict[str, Any]) -> None:
    assert not _has_non_finite(coerce_value(value, schema))


def test_a_nullable_field_takes_null_through_the_dispatcher() -> None:
    # OpenAPI's nullable: true (MCP and catalog schemas made from OpenAPI use it): coercion
    # turns "null" into None, and the validator must then accept it.
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "nullable": True}, "nullable": {}},
    }
    tool = Tool(
        name="page",
        description="A page.",
        handler=lambda **kw: kw,
        parameters=schema,
        annotations=ToolAnnotations(read_only=True, destructive=False),
    )
    host = make_host(plugins={"pages": _Tools([tool])})
    try:
        for sent in ("null", None):
            result = anyio.run(host.dispatch, "page", {"limit": sent}, host.new_session())
            assert not result.is_error, result.text_content
        refused = anyio.run(host.dispatch, "page", {"limit": "many"}, host.new_session())
    finally:
        host.close()
    assert refused.error_code == "INVALID_ARGUMENTS"
    assert "'many' is not of type 'integer', 'null'" in refused.text_content


class _Tools:
    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        return self.tools

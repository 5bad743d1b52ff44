"""The structural check of a tool's JSON Schema made without jsonschema (at start, for a plugin's
core tools): what it calls broken, jsonschema calls broken too (no warning a schema does not
deserve), and a sound schema passes."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from hermes_core._broken_schema import shape_problem

BROKEN: list[Any] = [
    pytest.param(
        {"type": "object", "properties": {"x": {"type": "strng"}}},
        "at properties.x.type: 'strng' is not a JSON Schema type: give one of array, boolean, "
        "integer, null, number, object, string",
        id="type-name",
    ),
    pytest.param(
        {"type": ["string", 3]},
        "at type: ['string', 3] is not a JSON Schema type or a list of them: give one of array, "
        "boolean, integer, null, number, object, string",
        id="type-list",
    ),
    pytest.param(
        {"type": "object", "required": "x"},
        "at required: 'x' is not a list of property names",
        id="required-string",
    ),
    pytest.param(
        {"type": "object", "properties": ["x"]},
        "at properties: ['x'] is not an object of schemas",
        id="properties-list",
    ),
    pytest.param(
        {"type": "object", "properties": {"x": "string"}},
        "at properties.x: 'string' is not a schema (an object or a boolean)",
        id="property-not-schema",
    ),
    pytest.param(
        {"anyOf": []},
        "at anyOf: [] is not a non-empty list of schemas",
        id="empty-anyOf",
    ),
    pytest.param(
        {"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "int"}]}}},
        "at properties.x.oneOf.1.type: 'int' is not a JSON Schema type: give one of array, "
        "boolean, integer, null, number, object, string",
        id="deep-in-oneOf",
    ),
    pytest.param(
        {"type": "array", "items": {"type": "string", "minLength": -1}},
        "at items.minLength: -1 is not a non-negative integer",
        id="negative-count",
    ),
    pytest.param(
        {"type": "string", "maxLength": "10"},
        "at maxLength: '10' is not a non-negative integer",
        id="count-as-string",
    ),
    pytest.param(
        {"type": "number", "minimum": "0"},
        "at minimum: '0' is not a number",
        id="bound-as-string",
    ),
    pytest.param(
        {"type": "string", "pattern": 5},
        "at pattern: 5 is not a string",
        id="pattern-not-string",
    ),
    pytest.param(
        {"type": "string", "enum": "a"},
        "at enum: 'a' is not a list",
        id="enum-not-list",
    ),
]


@pytest.mark.parametrize(("schema", "why"), BROKEN)
def test_what_the_shape_check_calls_broken_jsonschema_calls_broken(
    schema: dict[str, Any], why: str
) -> None:
    broken = shape_problem(schema)
    assert broken is not None
    assert broken.text() == why
    with pytest.raises(SchemaError):
        validator_for(schema, default=Draft202012Validator).check_schema(schema)


SOUND: list[Any] = [
    pytest.param({}, id="empty"),
    pytest.param({"type": "object", "properties": {}}, id="no-properties"),
    pytest.param(
        {
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "minLength": 1, "pattern": "^a"},
                "b": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
                "c": True,
                "d": {"type": "array", "items": {"$ref": "#/$defs/thing"}, "maxItems": 3},
                "e": {"type": "number", "multipleOf": 0.5, "maximum": 1e9},
                "f": {"enum": ["x", 1, None], "nullable": True},
            },
            "required": ["a"],
            "additionalProperties": False,
            "$defs": {"thing": {"type": "string"}},
        },
        id="rich",
    ),
    pytest.param({"type": "integer", "maximum": 10.0, "minLength": 2.0}, id="integral-floats"),
    pytest.param(
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "minimum": 1,
            "exclusiveMinimum": True,
        },
        id="draft-04",
    ),
    pytest.param({"type": "object", "x-vendor": {"type": "no such type"}}, id="unknown-keyword"),
]


@pytest.mark.parametrize("schema", SOUND)
def test_a_sound_schema_passes_the_shape_check(schema: dict[str, Any]) -> None:
    assert shape_problem(schema) is None
    validator_for(schema, default=Draft202012Validator).check_schema(schema)


def test_a_schema_nested_too_deeply_is_left_to_jsonschema() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    assert shape_problem(deep) is None  # no RecursionError: the first call's check says it


def test_a_long_wrong_value_is_cut() -> None:
    required = {f"k{index}": "v" * 50 for index in range(20000)}
    broken = shape_problem({"type": "object", "required": required})
    assert broken is not None
    assert broken.text().startswith("at required: {'k0': ")
    assert len(broken.text()) < 300

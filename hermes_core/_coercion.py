"""Schema-guided argument coercion: the small repairs a model's arguments often need.

Models send ``"42"`` for an integer, ``"true"`` for a boolean or a JSON string where an array is
expected. :func:`coerce_arguments` repairs exactly the cases listed in the specification
(tool-search.md, "Argument coercion") and keeps the original value whenever it is unsure, so
validation still reports what is really wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

_INTEGER: Final = re.compile(r"\s*[+-]?\d+\s*")
_NUMBER: Final = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")
_NOT_COERCED: Final = object()
_SCALARS: Final = (str, int, float, bool)


def coerce_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``arguments`` coerced to the object ``schema``; the input is not changed."""
    coerced = _coerce_properties(dict(arguments), schema)
    return coerced


def coerce_value(value: Any, schema: Any) -> Any:
    """Coerce one value to ``schema``; return ``value`` itself when no rule applies."""
    if not isinstance(schema, Mapping):
        return value
    branches = _branches(schema)
    if len(branches) == 1:
        result = _coerce_to(value, branches[0])
        return value if result is _NOT_COERCED else result
    # A value that already fits one branch keeps that branch (only its insides are coerced).
    for branch in branches:
        if _fits(value, _type_of(branch)):
            return _coerce_inside(value, branch)
    for branch in branches:
        result = _coerce_to(value, branch)
        if result is not _NOT_COERCED:
            return result
    return value


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives a value may take, in order: union ``type`` lists, anyOf/oneOf, nullable."""
    alternatives: list[Mapping[str, Any]] = []
    declared = schema.get("type")
    if isinstance(declared, list):
        alternatives.extend({**schema, "type": name} for name in declared if isinstance(name, str))
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            for option in options:
                if isinstance(option, Mapping):
                    alternatives.extend(_branches({**base, **option}))
    if not alternatives:
        alternatives.append(schema)
    if schema.get("nullable") is True and not any(_type_of(b) == "null" for b in alternatives):
        alternatives.append({"type": "null"})
    return alternatives


def _type_of(schema: Mapping[str, Any]) -> str | None:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if declared is None:
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
    return None


def _fits(value: Any, type_name: str | None) -> bool:
    if type_name is None:
        return True
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "null":
        return value is None
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    return False


def _coerce_to(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` turned into the single type of ``schema``, or ``_NOT_COERCED``."""
    type_name = _type_of(schema)
    if _fits(value, type_name):
        return _coerce_inside(value, schema)
    if type_name == "array":
        if isinstance(value, str):
            parsed = _parse_json(value, list)
            if parsed is not _NOT_COERCED:
                return _coerce_inside(parsed, schema)
            if value.lstrip()[:1] in ("[", "{"):
                return _NOT_COERCED  # looks like JSON that is not an array: unsure, keep it
        if isinstance(value, _SCALARS):
            return [coerce_value(value, schema.get("items"))]
        return _NOT_COERCED
    if not isinstance(value, str):
        return _NOT_COERCED
    text = value.strip()
    if type_name == "integer":
        return _to_int(text) if _INTEGER.fullmatch(value) else _NOT_COERCED
    if type_name == "number":
        if not _NUMBER.fullmatch(value):
            return _NOT_COERCED
        if _INTEGER.fullmatch(value):
            return _to_int(text)
        number = float(text)
        return number if math.isfinite(number) else _NOT_COERCED
    if type_name == "boolean":
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        return _NOT_COERCED
    if type_name == "null":
        return None if text == "null" else _NOT_COERCED
    if type_name == "object":
        if not text and not schema.get("required"):
            return {}
        parsed = _parse_json(value, dict)
        return _NOT_COERCED if parsed is _NOT_COERCED else _coerce_inside(parsed, schema)
    return _NOT_COERCED


def _coerce_inside(value: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(value, dict):
        return _coerce_properties(value, schema)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        items = schema["items"]
        return [coerce_value(item, items) for item in value]
    return value


def _coerce_properties(value: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if not isinstance(properties, Mapping) and not isinstance(extra, Mapping):
        return value
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    result: dict[str, Any] = {}
    for key, item in value.items():
        sub = props.get(key, extra if isinstance(extra, Mapping) else None)
        result[key] = item if sub is None else coerce_value(item, sub)
    return result


def _to_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        return _NOT_COERCED


def _parse_json(text: str, expected: type) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return _NOT_COERCED
    try:
        parsed = json.loads(stripped, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python recurses
        return _NOT_COERCED
    return parsed if isinstance(parsed, expected) else _NOT_COERCED


def _refuse_constant(name: str) -> Any:
    # json accepts NaN and Infinity; the specification says they are never produced.
    raise ValueError(f"{name} is not allowed")

"""Validation of a call's arguments against the tool's JSON Schema: the one rule the dispatcher
and the bridge share.

Validators are built lazily, on a tool's first call, and cached by registry generation:
checking every schema of a large catalog up front would cost seconds. A schema that is itself
broken, or that refers outside itself (a non-local ``$ref``) or to nothing, never blocks a call:
the tool gets the arguments and decides. Arguments the validator cannot judge (nested deeper
than it can recurse) are refused: validation that cannot decide does not let the call through.

A schema comes from whoever serves the tool (an MCP server, a gateway), and its ``pattern``
may backtrack for ever (``^(a+)+$`` takes Python's ``re`` 19 s on 29 characters). Patterns are
therefore matched with the ``regex`` package under one budget per call (a well-made pattern
takes microseconds), with the GIL released: :mod:`hermes_core._pattern_budget`; a value the
budget does not decide is refused (``took too long``). The dispatcher checks such schemas in a
worker thread (:func:`has_patterns`), so a slow check never holds up the event loop.

jsonschema is imported by the first validator built, not with this module: a command that
calls only the bridge tools (which parse their own arguments) never pays for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from hermes_core._broken_schema import BrokenSchema
from hermes_core._pattern_budget import bounded, start_budget
from hermes_core._shown import PROBLEM_CHARACTERS, clipped
from hermes_core._tools import Tool, ToolResult

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "ArgumentError",
    "argument_error",
    "argument_path",
    "build_validator",
    "checked_validator",
    "has_patterns",
    "validate_arguments",
]

RETRY_HINT = (
    "The tool did not run. Fix the arguments to match 'parameters' (see 'path' and 'rule') and "
    "send the call again."
)
HOOK_HINT = (
    "The tool did not run. The arguments that failed were not yours: {source} replaced them "
    "(a pre_tool_call hook). Sending the call again will fail the same way; tell the user."
)


@dataclass(frozen=True)
class ArgumentError:
    """Why arguments do not match a tool's schema, with what the model needs to repair them."""

    tool: str
    path: str
    rule: str
    message: str
    parameters: Mapping[str, Any]
    source: str = ""
    """Who gave the arguments when it was not the model (``plugin 'x'`` for a modify
    directive)."""
    expected: str = ""
    """What the schema expects at :attr:`path`, short (``{"type": "integer", "minimum": 1}``,
    ``an object with the keys a, b (required: a)``); ``""`` when the path leads nowhere in
    the schema."""

    def text(self) -> str:
        """The error as a few readable sentences: the tool, the argument, the problem, the
        rule and the expected shape, then what to do. (The schema itself is in
        :meth:`as_result`, for whoever reads the structured result.)"""
        rule = f"rule {self.rule!r}"
        if self.expected:
            rule += f"; expected {self.expected}"
        what = f"from {self.source} " if self.source else ""
        if self.source:
            then = HOOK_HINT.format(source=self.source)
        else:
            then = f"The tool did not run. Fix {self.path} and send the call again."
        return (
            f"Invalid arguments {what}for {self.tool!r} at {self.path}: {self.message} "
            f"({rule}). {then}"
        )

    def as_result(self) -> dict[str, Any]:
        """The ``{"error": ...}`` payload: what the model needs to repair the call."""
        return {
            "error": f"invalid arguments{' from ' + self.source if self.source else ''} for "
            f"{self.tool!r} at {self.path}: {self.message}",
            "code": "INVALID_ARGUMENTS",
            "tool": self.tool,
            "path": self.path,
            "rule": self.rule,
            "message": self.message,
            "parameters": dict(self.parameters),
            "hint": HOOK_HINT.format(source=self.source) if self.source else RETRY_HINT,
        }

    def to_tool_result(self) -> ToolResult:
        """The error result of a call refused for its arguments: :meth:`text` for the model
        and the terminal, the payload of :meth:`as_result` as its structured result."""
        return ToolResult.error("INVALID_ARGUMENTS", self.text(), structured=self.as_result())


def argument_path(parts: Iterable[str | int]) -> str:
    """A JSON path inside the arguments, as the model wrote them: ``arguments.items[0].id``."""
    text = "arguments"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _has_remote_ref(schema: Any) -> bool:
    if isinstance(schema, Mapping):
        ref = schema.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(_has_remote_ref(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_remote_ref(value) for value in schema)
    return False


@cache
def _judging() -> tuple[
    Callable[[Iterable[ValidationError]], ValidationError | None], tuple[type[Exception], ...]
]:
    """jsonschema's ``best_match`` and the errors that say a schema itself is broken, imported
    once (a validator exists, so jsonschema is loaded already)."""
    from jsonschema.exceptions import SchemaError, best_match
    from referencing.exceptions import Unresolvable

    return best_match, (Unresolvable, SchemaError)


def build_validator(schema: Mapping[str, Any]) -> Validator | None:
    """A validator for ``schema``, or ``None`` when the schema cannot be trusted to judge
    (:func:`checked_validator`)."""
    built = checked_validator(schema)
    return None if isinstance(built, BrokenSchema) else built


def checked_validator(schema: Mapping[str, Any]) -> Validator | BrokenSchema | None:
    """A validator for ``schema``; else why it is not JSON Schema (jsonschema's check, or
    nested deeper than Python recurses), or ``None`` when it is but cannot be trusted to judge
    (a non-local ``$ref``, patterns beside ``unevaluatedProperties``, not a mapping)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        if not isinstance(schema, Mapping) or _has_remote_ref(schema):
            return None
        if has_patterns(schema) and _has_key(schema, "unevaluatedProperties"):
            # jsonschema matches patternProperties again, with ``re`` and no budget, to find
            # the unevaluated properties: such a schema is not used, as a broken one.
            return None
        cls = validator_for(schema, default=Draft202012Validator)
        plain = {key: _nullable_as_null(value) for key, value in schema.items()}
        cls.check_schema(plain)
        return bounded(cls)(plain)
    except SchemaError as exc:
        return BrokenSchema(".".join(str(part) for part in exc.path), exc.message)
    except RecursionError:
        return BrokenSchema(too_deep=True)
    except (TypeError, ValueError, LookupError):
        return None


def _has_key(schema: Any, key: str) -> bool:
    return _any_mapping(schema, lambda mapping: key in mapping)


def _any_mapping(schema: Any, test: Callable[[Mapping[str, Any]], bool]) -> bool:
    """Whether ``test`` holds for some mapping anywhere in ``schema``."""
    if isinstance(schema, Mapping):
        return test(schema) or any(_any_mapping(value, test) for value in schema.values())
    if isinstance(schema, list):
        return any(_any_mapping(value, test) for value in schema)
    return False


def has_patterns(schema: Any) -> bool:
    """Whether ``schema`` holds a ``pattern`` or ``patternProperties`` anywhere: checking
    arguments against it runs regular expressions, which may take up to
    :data:`~hermes_core._pattern_budget.PATTERN_BUDGET`."""
    return _any_mapping(schema, _names_a_pattern)


def _names_a_pattern(schema: Mapping[str, Any]) -> bool:
    return isinstance(schema.get("pattern"), str) or isinstance(
        schema.get("patternProperties"), Mapping
    )


def _nullable_as_null(value: Any) -> Any:
    """``value`` with OpenAPI's ``nullable: true`` (which JSON Schema does not know, and
    OpenAPI-made MCP and catalog schemas use) said in JSON Schema: that subschema or null. The
    coercion step turns ``"null"`` into None for such a field; without this the validator
    would then refuse the None."""
    if isinstance(value, list):
        return [_nullable_as_null(item) for item in value]
    if not isinstance(value, Mapping):
        return value
    flag = value.get("nullable") is True and not _SCHEMA_WORDS.isdisjoint(value)
    converted = {
        key: _nullable_as_null(item)
        for key, item in value.items()
        if not (flag and key == "nullable")
    }
    if not flag:
        return converted
    kind = converted.get("type")
    if isinstance(kind, str) and "enum" not in converted:  # the plainest error message
        return {**converted, "type": [kind, "null"]}
    return {"anyOf": [converted, {"type": "null"}]}


# A mapping holding one of these beside ``nullable: true`` is a schema (``properties`` may
# name a parameter "nullable").
_SCHEMA_WORDS = frozenset({"type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "format"})


def validate_arguments(tool: Tool, arguments: Mapping[str, Any]) -> ArgumentError | None:
    """Check ``arguments`` against ``tool.parameters``; ``None`` when they pass or when the
    schema cannot judge (broken, or with a non-local ``$ref``)."""
    return argument_error(build_validator(tool.parameters), tool, arguments)


def argument_error(
    validator: Validator | None, tool: Tool, arguments: Mapping[str, Any]
) -> ArgumentError | None:
    """What is wrong with ``arguments`` according to ``validator`` (``None``: nothing, or no
    validator to judge)."""
    if validator is None:
        return None
    best_match, broken_schema = _judging()
    start_budget()
    try:
        error: ValidationError | None = best_match(validator.iter_errors(dict(arguments)))
    except broken_schema:  # the schema itself is broken: it must not block
        return None
    except Exception as exc:  # jsonschema could not decide (values nested too deeply...): refuse
        why = "they are nested too deeply" if isinstance(exc, RecursionError) else repr(exc)
        return ArgumentError(
            tool=tool.name,
            path="arguments",
            rule="unchecked",
            message=f"the arguments could not be checked against the schema: {why:.200}",
            parameters=tool.parameters,
        )
    if error is None:
        return None
    parts: list[str | int] = list(error.absolute_path)
    required = error.validator_value
    if (
        error.validator == "required"
        and isinstance(error.instance, Mapping)
        and isinstance(required, list)
    ):
        # Point at the missing key itself: arguments.items[0].id, not arguments.items[0].
        missing = [key for key in required if key not in error.instance]
        parts.extend(missing[:1])
    return ArgumentError(
        tool=tool.name,
        path=argument_path(parts),
        rule=str(error.validator),
        # jsonschema's message holds the whole value: a megabyte string would come back whole.
        message=clipped(error.message, PROBLEM_CHARACTERS),
        parameters=tool.parameters,
        expected=expected_shape(tool.parameters, parts),
    )


EXPECTED_CHARACTERS: Final = 160
"""How many characters of the expected shape an argument error shows."""


def expected_shape(schema: Any, parts: Iterable[str | int]) -> str:
    """What ``schema`` expects at the argument path ``parts``, in a few words: an object's
    keys, else the subschema as compact JSON without its descriptions (cut at
    :data:`EXPECTED_CHARACTERS`); ``""`` when the path leads nowhere the schema says."""
    for part in parts:
        if not isinstance(schema, Mapping):
            return ""
        if isinstance(part, int):
            schema = schema.get("items")
        else:
            properties = schema.get("properties")
            schema = properties.get(part) if isinstance(properties, Mapping) else None
    if not isinstance(schema, Mapping):
        return ""
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and properties:
        keys = ", ".join(str(key) for key in properties)
        required = schema.get("required")
        text = f"an object with the keys {keys}"
        if isinstance(required, list) and required:
            text += f" (required: {', '.join(str(key) for key in required)})"
        return clipped(text, EXPECTED_CHARACTERS)
    plain = {key: value for key, value in schema.items() if key not in ("description", "title")}
    try:
        shape = json.dumps(plain, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return ""
    return clipped(shape, EXPECTED_CHARACTERS)

"""What makes a tool's parameters not a JSON Schema, and the warning that names the tool.

A :class:`BrokenSchema` says where in the schema and what is wrong. Two checks find one:
jsonschema's own (:func:`hermes_core._validation.checked_validator`, when a tool's validator is
built at its first call) and :func:`shape_problem`, the structural part of it that needs no
jsonschema import (~45 ms), run when a plugin's core tool is registered (:func:`start_problem`):
its schema is in every model request, so its author hears of a broken one at start, once. What
:func:`shape_problem` calls broken, jsonschema calls broken under every draft it knows; what it
leaves (a pattern that is not a regular expression, a rule of one draft) is said at the first
call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from hermes_core._shown import PROBLEM_CHARACTERS, clipped
from hermes_core._tools import Tool

__all__ = ["BrokenSchema", "shape_problem", "start_problem", "tool_named"]

TYPES: Final = ("array", "boolean", "integer", "null", "number", "object", "string")
_GIVE_TYPES: Final = f"give one of {', '.join(TYPES)}"
_DRAFTS: Final = ("draft-04", "draft-06", "draft-07", "2019-09", "2020-12")
"""The ``$schema`` drafts whose meta-schemas all hold the rules below (draft 3 does not)."""


@dataclass(frozen=True)
class BrokenSchema:
    """Why a tool's parameters are not a JSON Schema: ``why`` at ``where`` (a dotted path in
    the schema, ``""`` for the whole), or ``too_deep`` to check at all."""

    where: str = ""
    why: str = ""
    too_deep: bool = False

    def text(self) -> str:
        """``at properties.x.type: 'strng' is not ...``, each part cut to a line."""
        why = clipped(self.why, PROBLEM_CHARACTERS)
        return f"at {clipped(self.where, PROBLEM_CHARACTERS)}: {why}" if self.where else why

    def warning(self, tool: Tool) -> str:
        """The warning naming ``tool``: a broken schema never blocks a call (the tool gets the
        arguments and decides), so its author is told that nothing checks them."""
        if self.too_deep:
            return (
                f"{tool_named(tool)}: its parameters are nested too deeply to check as a JSON "
                "Schema, so its arguments are not checked"
            )
        return (
            f"{tool_named(tool)}: its parameters are not a valid JSON Schema, so its arguments "
            f"are not checked ({self.text()})"
        )


def tool_named(tool: Tool) -> str:
    """``tool 'x' of plugin 'p'`` (a tool made in code, an embedding host's, names no plugin)."""
    return f"tool {tool.name!r}" + (f" of plugin {tool.source_name!r}" if tool.source_name else "")


def start_problem(tool: Tool) -> BrokenSchema | None:
    """What :func:`shape_problem` finds in the schema of a plugin's core tool, warned about when
    it is registered (an MCP server's or a catalog's schema is not the user's to fix, and a
    deferred tool's is said at its first call)."""
    if not tool.core or tool.source != "plugin" or tool.meta.get("bridge") is True:
        return None
    return shape_problem(tool.parameters)


def shape_problem(schema: Mapping[str, Any]) -> BrokenSchema | None:
    """The first structural fault of ``schema`` (a keyword's value of the wrong kind: a type
    name that is none, ``required`` not a list of names...), found without jsonschema; ``None``
    when there is none or the schema is left to jsonschema (another ``$schema``, nested too
    deeply)."""
    declared = schema.get("$schema")
    if declared is not None and not (
        isinstance(declared, str) and any(draft in declared for draft in _DRAFTS)
    ):
        return None
    try:
        return _fault(schema, ())
    except RecursionError:
        return None


def _fault(schema: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, Mapping):
        return _broken(path, schema, "is not a schema (an object or a boolean)")
    for key, value in schema.items():
        check = _RULES.get(key)
        if check is None:
            continue
        found = check(value, (*path, key))
        if found is not None:
            return found
    return None


def _broken(path: tuple[str, ...], value: Any, why: str) -> BrokenSchema:
    return BrokenSchema(".".join(path), f"{clipped(repr(value), PROBLEM_CHARACTERS)} {why}")


def _type(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if isinstance(value, str):
        return (
            None
            if value in TYPES
            else _broken(path, value, f"is not a JSON Schema type: {_GIVE_TYPES}")
        )
    if isinstance(value, list) and all(isinstance(each, str) and each in TYPES for each in value):
        return None
    return _broken(path, value, f"is not a JSON Schema type or a list of them: {_GIVE_TYPES}")


def _schema(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    return _fault(value, path)


def _schemas_by_name(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if not isinstance(value, Mapping):
        return _broken(path, value, "is not an object of schemas")
    for name, each in value.items():
        found = _fault(each, (*path, str(name)))
        if found is not None:
            return found
    return None


def _schema_list(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if not isinstance(value, list) or not value:
        return _broken(path, value, "is not a non-empty list of schemas")
    for index, each in enumerate(value):
        found = _fault(each, (*path, str(index)))
        if found is not None:
            return found
    return None


def _items(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    # A list of schemas is a draft 7 tuple (draft 2020-12 calls it broken): left to jsonschema.
    return _schema_list(value, path) if isinstance(value, list) else _fault(value, path)


def _names(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if isinstance(value, list) and all(isinstance(each, str) for each in value):
        return None
    return _broken(path, value, "is not a list of property names")


def _count(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if whole and not isinstance(value, bool) and value >= 0:
        return None
    return _broken(path, value, "is not a non-negative integer")


def _number(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return None
    return _broken(path, value, "is not a number")


def _step(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return None
    return _broken(path, value, "is not a number above 0")


def _kind(kind: type, words: str) -> Callable[[Any, tuple[str, ...]], BrokenSchema | None]:
    def check(value: Any, path: tuple[str, ...]) -> BrokenSchema | None:
        return None if isinstance(value, kind) else _broken(path, value, f"is not {words}")

    return check


_RULES: Final[dict[str, Callable[[Any, tuple[str, ...]], BrokenSchema | None]]] = {
    "type": _type,
    "properties": _schemas_by_name,
    "patternProperties": _schemas_by_name,
    "definitions": _schemas_by_name,
    "additionalProperties": _schema,
    "not": _schema,
    "items": _items,
    "allOf": _schema_list,
    "anyOf": _schema_list,
    "oneOf": _schema_list,
    "required": _names,
    "enum": _kind(list, "a list"),
    "minLength": _count,
    "maxLength": _count,
    "minItems": _count,
    "maxItems": _count,
    "minProperties": _count,
    "maxProperties": _count,
    "minimum": _number,
    "maximum": _number,
    "multipleOf": _step,
    "pattern": _kind(str, "a string"),
    "title": _kind(str, "a string"),
    "description": _kind(str, "a string"),
    "uniqueItems": _kind(bool, "a boolean"),
}
"""Each keyword whose value every draft's meta-schema (4 to 2020-12) gives one kind, and its
check (keywords whose rule differs between drafts, ``exclusiveMinimum`` say, are left out)."""

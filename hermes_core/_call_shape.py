"""A tool as the dispatcher calls it: what is computed once per tool (:class:`PreparedTool`:
the compiled validator, the handler's shape), the arguments checked on the way in
(:func:`check_arguments`) and the handler's return value made a result on the way out
(:func:`handler_result`)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread

from hermes_core._arguments import ArgumentsProblem, read_arguments
from hermes_core._broken_schema import BrokenSchema, shape_problem, start_problem
from hermes_core._call_path import CALLER_PARAMETER
from hermes_core._coercion import coerce_arguments
from hermes_core._shown import PROBLEM_CHARACTERS, clipped
from hermes_core._tools import Tool, ToolResult
from hermes_core._validation import argument_error, checked_validator, has_patterns

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["PreparedTool", "check_arguments", "check_in_thread", "handler_result", "prepare_tool"]

log = logging.getLogger(__name__)

_INJECTED: Final = frozenset({"session", CALLER_PARAMETER})
"""Handler parameters the dispatcher fills itself; never arguments of the call."""


@dataclass(frozen=True)
class PreparedTool:
    """What the dispatcher computes once per tool: the compiled validator and the call shape."""

    tool: Tool
    validator: Validator | None
    """``None`` when the schema cannot judge (broken, non-local ``$ref``), or for a bridge tool:
    the call is not blocked for it."""
    is_async: bool
    wants_session: bool
    wants_caller: bool
    accepted: frozenset[str] | None
    patterned: bool = False
    """Whether checking the arguments runs the schema's regular expressions (up to
    ``PATTERN_BUDGET``): then it runs in a worker thread."""


def prepare_tool(tool: Tool) -> PreparedTool:
    """What the dispatcher computes once for ``tool``: its validator and call shape."""
    # A bridge tool parses its own arguments, accepting more than its schema advertises (the
    # single shape of tool_call, a bare string of queries) and refusing with repair hints.
    validator = None
    if tool.meta.get("bridge") is not True:
        built = checked_validator(tool.parameters)
        if not isinstance(built, BrokenSchema):
            validator = built
        elif tool.source == "plugin" and start_problem(tool) is None:
            # Not when the registry said it at start (a plugin's core tool); an MCP server's
            # or a catalog's schema is not the user's to fix. The structural check's words say
            # what to write; jsonschema's ("not valid under any of the given schemas") do not.
            log.warning("%s", (shape_problem(tool.parameters) or built).warning(tool))
    handler = tool.handler
    wants_session = wants_caller = False
    accepted: frozenset[str] | None = None
    is_async = False
    if handler is not None:
        is_async = inspect.iscoroutinefunction(handler)
        parameters: Mapping[str, inspect.Parameter] | None
        try:
            parameters = inspect.signature(handler).parameters
        except (TypeError, ValueError):
            parameters = None
        if parameters is not None:
            wants_session = "session" in parameters
            wants_caller = CALLER_PARAMETER in parameters
            if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
                accepted = frozenset(
                    name
                    for name, p in parameters.items()
                    if name not in _INJECTED
                    and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                )
    patterned = validator is not None and has_patterns(tool.parameters)
    return PreparedTool(tool, validator, is_async, wants_session, wants_caller, accepted, patterned)


async def check_in_thread(
    prepared: PreparedTool, arguments: Any, *, who: str = "the model"
) -> dict[str, Any] | ToolResult:
    """:func:`check_arguments` in a worker thread, for a schema with patterns: a pattern may
    take up to its budget, and the event loop serves other calls meanwhile. (Other schemas are
    checked in place: a thread hand-off would cost more than their check.)"""
    return await anyio.to_thread.run_sync(partial(check_arguments, prepared, arguments, who=who))


def check_arguments(
    prepared: PreparedTool, arguments: Any, *, who: str = "the model"
) -> dict[str, Any] | ToolResult:
    """Coerced and validated arguments, or an ``INVALID_ARGUMENTS`` result naming the problem."""
    name = prepared.tool.name
    read = read_arguments(arguments)
    if isinstance(read, ArgumentsProblem):
        if read.kind == "not_object":
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                f"The arguments {who} gave for {name} must be a JSON object, not {read.type_name}.",
            )
        return ToolResult.error(
            "INVALID_ARGUMENTS",
            f"The arguments {who} gave for {name} are not a JSON object: {arguments[:80]!r}",
        )
    arguments = read
    try:
        coerced = coerce_arguments(arguments, prepared.tool.parameters)
        problem = argument_error(prepared.validator, prepared.tool, coerced)
    except RecursionError:
        return ToolResult.error(
            "INVALID_ARGUMENTS",
            f"The arguments {who} gave for {name} are nested too deeply to check.",
        )
    if problem is not None:
        if who != "the model":
            problem = dataclasses.replace(problem, source=who)
        return problem.to_tool_result()
    if prepared.accepted is not None:
        unknown = sorted(str(key) for key in coerced if key not in prepared.accepted)
        if unknown:
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                f"{name} does not take the argument(s) {', '.join(unknown)}; it takes "
                f"{', '.join(sorted(prepared.accepted)) or 'no arguments'}.",
            )
    return coerced


def handler_result(name: str, value: Any) -> ToolResult:
    """What a handler of the tool ``name`` returned, as a result: a :class:`ToolResult` whose
    content is a list of content blocks, a string as text, JSON data as text and structured
    content; anything else is a ``TOOL_ERROR``."""
    if isinstance(value, ToolResult):
        content: Any = value.content  # a dataclass does not check its field types
        if isinstance(content, list) and all(
            isinstance(item, dict) and isinstance(item.get("type"), str) for item in content
        ):
            return value
        return ToolResult.error(
            "TOOL_ERROR",
            f"{name} returned a ToolResult whose content is not a list of content blocks "
            '(dicts with a "type" key).',
        )
    if isinstance(value, str):
        return ToolResult.text(value)
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        kind = clipped(type(value).__name__, PROBLEM_CHARACTERS)
        if not isinstance(value, _JSON_TYPES):
            message = f"{name} returned {kind}, which is not a ToolResult, a string or JSON data."
        else:  # a container (or a float) of a JSON type holding what JSON cannot write
            # json's ValueErrors: a float out of range (NaN, Infinity), or a circular reference;
            # its TypeError names the type inside, whatever the length of its name.
            if isinstance(exc, RecursionError):
                why = _TOO_DEEP
            elif str(exc).startswith("Out of range float"):
                why = _NOT_FINITE
            else:
                why = clipped(str(exc), PROBLEM_CHARACTERS)
            message = f"{name} returned a {kind} that is not JSON data: {why}."
        return ToolResult.error("TOOL_ERROR", message)
    return ToolResult.text(text, structured=value)


_JSON_TYPES: Final = (dict, list, tuple, int, float, bool, type(None))
_NOT_FINITE: Final = "it holds NaN or Infinity, which JSON cannot write"
_TOO_DEEP: Final = "it is nested too deeply to write as JSON"

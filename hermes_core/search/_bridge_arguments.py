"""What the model sends to the bridge tools, read: the queries and limit of ``tool_search``, the
names of ``tool_describe``, the entries of ``tool_call``.

Each reader accepts more than the schemas say (one bare string for a list, a list sent as a
JSON string, ``tool_call``'s single shape ``{name, arguments}``) and refuses the rest with a
:class:`BridgeArgumentError` whose message says what to send; :func:`refusal` is the payload
that carries it back (:mod:`hermes_core.search._bridge` shapes the rest of the answers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core._arguments import ArgumentsProblem
from hermes_core._tool_call_entries import BridgeArgumentError, CallEntry, parse_calls

__all__ = [
    "MAX_DESCRIBE_NAMES",
    "MAX_QUERIES",
    "MAX_QUERY_CHARS",
    "BridgeArgumentError",
    "CallEntry",
    "arguments_refusal",
    "parse_calls",
    "parse_limit",
    "parse_names",
    "parse_queries",
    "refusal",
    "sent_argument",
]

MAX_QUERIES = 7
MAX_QUERY_CHARS = 2000
"""The longest query searched (a request of a paragraph fits; the longest of the metatool set
has 1,089 characters); a longer one is refused, nothing searched, as its text would otherwise
be echoed back to the model several times."""
MAX_DESCRIBE_NAMES = 10


def refusal(message: str, code: str = "INVALID_ARGUMENTS", **context: Any) -> dict[str, Any]:
    """A bridge error payload: ``{"error": message, "code": code, **context}``."""
    return {"error": message, "code": code, **context}


@dataclass(frozen=True, slots=True)
class _Misnamed:
    """A required argument (``key``) not sent while other keys were (``others``): what
    :func:`sent_argument` gives the readers in its place, for an error naming those keys."""

    key: str
    others: Mapping[str, Any]

    def error(self) -> BridgeArgumentError:
        tool, done, example = _REQUIRED[self.key][:3]
        sent = (v for v in map(_maybe_json, self.others.values()) if _strings(v))
        values = next((v for v in sent if len(str(v)) <= _ECHOED_CHARS), example)
        wrong = ", ".join(f'"{key}"' for key in self.others)
        listed = [values] if isinstance(values, str) else values
        retry = json.dumps({self.key: listed}, ensure_ascii=False)
        return BridgeArgumentError(
            f'{tool} takes "{self.key}", not {wrong}. Nothing was {done}: send {retry}'
        )


_ECHOED_CHARS = 1500
"""The longest value echoed back in the call to send (past it, an example stands in)."""

_REQUIRED: dict[str, tuple[str, str, list[str], tuple[str, ...]]] = {
    "queries": ("tool_search", "searched", ["github create issue"], ("limit",)),
    "names": ("tool_describe", "described", ["mcp__github__create_issue"], ()),
}
"""For each required argument of a reader: its tool, what was not done, an example value and
the tool's other keys."""


def _strings(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    )


def sent_argument(arguments: Mapping[str, Any], key: str) -> Any:
    """``arguments[key]`` (``queries`` or ``names``) for its reader; when it was not sent but
    other keys were (``{"query": ...}``), a stand-in the reader refuses naming those keys and
    the call to send instead."""
    if key in arguments:
        return arguments[key]
    others = {name: v for name, v in arguments.items() if name not in _REQUIRED[key][3]}
    return _Misnamed(key, others) if others else None


# tool_search ----------------------------------------------------------------------------------


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def parse_queries(value: Any) -> list[str]:
    """The queries of ``tool_search``: a list of strings or one bare string (also a JSON list in a
    string); blanks are dropped; at most :data:`MAX_QUERIES`, each at most
    :data:`MAX_QUERY_CHARS` characters, else nothing is searched."""
    if isinstance(value, _Misnamed):
        raise value.error()
    value = _maybe_json(value)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(query, str) for query in value):
        raise BridgeArgumentError(
            'queries must be a list of strings, e.g. {"queries": ["github create issue"]}'
        )
    queries = [query.strip() for query in value if query.strip()]
    if value and not queries:
        blank = "the query sent is" if len(value) == 1 else f"every query sent ({len(value)}) is"
        raise BridgeArgumentError(
            f"{blank} blank: send at least one keyword query, "
            'e.g. {"queries": ["github create issue"]}'
        )
    if not queries:
        raise BridgeArgumentError("queries is empty: send at least one keyword query")
    if len(queries) > MAX_QUERIES:
        raise BridgeArgumentError(
            f"{len(queries)} queries sent; at most {MAX_QUERIES} per call. Nothing was searched: "
            "send the most important ones first"
        )
    for query in queries:
        if len(query) > MAX_QUERY_CHARS:
            raise BridgeArgumentError(
                f"a query of {len(query):,} characters was sent; each is at most "
                f"{MAX_QUERY_CHARS:,}. Nothing was searched: send a few keywords (the service, "
                "an action, an object), e.g. 'github create issue'"
            )
    return queries


def parse_limit(value: Any, default: int, maximum: int) -> int:
    """Hits per query: ``default`` when absent, else clamped to ``1..maximum``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise _not_a_limit(value) from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _not_a_limit(value)
    return min(max(value, 1), maximum)


def _not_a_limit(value: Any) -> BridgeArgumentError:
    # Quoted as JSON, the model's own notation (true, "many"), never Python's (True, 'many').
    try:
        shown = json.dumps(value, ensure_ascii=False, default=repr)[:100]
    except (ValueError, RecursionError):  # a value no JSON holds, from an in-process caller
        shown = type(value).__name__
    return BridgeArgumentError(f"limit must be a whole number such as 5, not {shown}")


# tool_describe --------------------------------------------------------------------------------


def parse_names(value: Any) -> list[str]:
    """The names of ``tool_describe``: a list or one bare string, duplicates removed (first kept);
    at most :data:`MAX_DESCRIBE_NAMES`."""
    if isinstance(value, _Misnamed):
        raise value.error()
    value = _maybe_json(value)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise BridgeArgumentError(
            'names must be a list of tool names, e.g. {"names": ["mcp__github__create_issue"]}'
        )
    names = list(dict.fromkeys(name.strip() for name in value if name.strip()))
    if not names:
        raise BridgeArgumentError("names is empty: send the tool names tool_search returned")
    if len(names) > MAX_DESCRIBE_NAMES:
        raise BridgeArgumentError(
            f"{len(names)} names sent; at most {MAX_DESCRIBE_NAMES} per call. Nothing was "
            "described: split them over several calls"
        )
    return names


def arguments_refusal(problem: ArgumentsProblem, where: str) -> dict[str, Any]:
    """The refusal of an entry whose arguments are not an object (``where`` names them:
    ``arguments`` or ``calls[2].arguments``)."""
    if problem.kind == "not_json":
        return refusal(f"{where} is a string that is not valid JSON; send an object")
    if problem.kind == "too_deep":
        return refusal(f"{where} is a JSON string nested too deeply to read; send an object")
    return refusal(f"{where} must be an object, not {problem.type_name}")

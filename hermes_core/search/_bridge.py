"""The three bridge tools as the model sees them: schemas, argument shapes, rules and results.

Everything here is pure: deciding what is refused and shaping the JSON that goes back (what the
model sent is read by :mod:`~hermes_core.search._bridge_arguments`, whose names this module
also exports). :class:`~hermes_core.search._toolsearch.ToolSearch` runs searches and
dispatches calls with these pieces. Errors are results (``{"error": ...}`` with enough context
to repair the call), never exceptions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from hermes_core._connector_names import CONNECTOR_PREFIX, is_connector_name
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.search._batches import MAX_BATCH
from hermes_core.search._bridge_arguments import (
    MAX_DESCRIBE_NAMES,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    BridgeArgumentError,
    CallEntry,
    arguments_refusal,
    parse_calls,
    parse_limit,
    parse_names,
    parse_queries,
    refusal,
)
from hermes_core.search._render import compact_json

__all__ = [
    "CONNECTORS_SIGNED_OUT_HINT",
    "CONNECTORS_UNAVAILABLE_HINT",
    "MAX_BATCH",
    "MAX_DESCRIBE_NAMES",
    "MAX_QUERIES",
    "MAX_QUERY_CHARS",
    "RETRY_ECHO_CHARS",
    "BridgeArgumentError",
    "CallEntry",
    "arguments_refusal",
    "batch_rule",
    "bridge_result",
    "connectors_unavailable_hint",
    "empty_match_hint",
    "loop_breaker",
    "make_bridge_tools",
    "parse_calls",
    "parse_limit",
    "parse_names",
    "parse_queries",
    "refusal",
    "search_description",
    "search_entry",
    "unmatched_hint",
]

RETRY_ECHO_CHARS = 1500
DESCRIPTION_CHARS = 500
REQUIRED_NAMES = 32

_SEARCH_INTRO = (
    "Search the deferred tools: tools not in your tool list that you can still use. Send short "
    "keyword queries naming the service plus a concrete action and object ('github create "
    f"issue'); up to {MAX_QUERIES} queries per call, 'limit' hits per query. Each result lists "
    "the query words no tool contains under 'unmatched'. Then read a tool's parameters with "
    "tool_describe and run it with tool_call."
)
_CONNECTORS_NOTE = (
    " Hosted app connectors (Gmail, Linear, Notion...) are searched too: their tools are named "
    "connectors__<app>__<tool>. If an app is not connected, use manage_connections."
)


# Schemas and tools ----------------------------------------------------------------------------


def search_description(listing: str, *, connectors: bool) -> str:
    """The ``tool_search`` description: how to use it, then the listing when there is one."""
    text = _SEARCH_INTRO + (_CONNECTORS_NOTE if connectors else "")
    return f"{text}\n\n{listing}" if listing else text


_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {"type": "string"},
            "description": f"Keyword queries, at most {MAX_QUERIES}.",
        },
        "limit": {"type": "integer", "description": "Hits per query."},
    },
    "required": ["queries"],
}
_DESCRIBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "names": {
            "type": "array",
            "items": {"type": "string"},
            "description": f"Tool names from tool_search, at most {MAX_DESCRIBE_NAMES}.",
        }
    },
    "required": ["names"],
}


def _call_schema(connectors: bool) -> dict[str, Any]:
    calls = "One {name, arguments} entry."
    if connectors:
        calls += (
            f" Several entries only when every name starts with {CONNECTOR_PREFIX} "
            f"(at most {MAX_BATCH})."
        )
    entry = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
        "required": ["name"],
    }
    batch = {
        "type": "array",
        "items": entry,
        "minItems": 1,
        "maxItems": MAX_BATCH if connectors else 1,
        "description": calls,
    }
    # The schema says what to send; the more the handler accepts (the single shape
    # {name, arguments}, calls as a JSON string) it parses itself: the dispatcher does not
    # validate a bridge tool's arguments against this schema.
    return {"type": "object", "properties": {"calls": batch}, "required": ["calls"]}


_DESCRIBE_DESCRIPTION = (
    "Read the full description and parameters schema of deferred tools found with tool_search, "
    f"before calling them with tool_call. Up to {MAX_DESCRIBE_NAMES} names."
)
_CALL_DESCRIPTION = (
    'Run a deferred tool: {"calls": [{"name": ..., "arguments": {...}}]} (calls is required). '
    "Tools in your tool list are called directly, not through tool_call."
)

BridgeHandler = Callable[..., Any]


def make_bridge_tools(
    description: str,
    search: BridgeHandler,
    describe: BridgeHandler,
    call: BridgeHandler,
    *,
    connectors: bool = False,
) -> list[Tool]:
    """The three bridge tools with ``description`` for ``tool_search`` and the given handlers;
    ``tool_call`` mentions connector batches only when ``connectors`` are in scope.

    They carry ``meta["bridge"] = True`` (they read their own arguments, accepting more than
    their schemas say). ``tool_call`` is also a *router* (``meta["router"] = True``): the
    dispatcher never runs it as itself; its handler, ``call(arguments, session)``, returns a
    :class:`~hermes_core._dispatch.CallPlan` of the real calls, which approvals and hooks judge.
    """
    reading = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
    # tool_call runs whatever it is given (a write, a shell command, a remote API), so it claims
    # nothing harmless: destructive and open world, as a tool without hints reads in MCP.
    passing_through = ToolAnnotations(destructive=True, open_world=True)

    def bridge_tool(name: str, text: str, schema: dict[str, Any], handler: BridgeHandler) -> Tool:
        annotations = reading if name != "tool_call" else passing_through
        meta = {"bridge": True, "router": True} if name == "tool_call" else {"bridge": True}
        return Tool(
            name=name,
            description=text,
            parameters=schema,
            handler=handler,
            toolset="tool_search",
            source="builtin",
            source_name="tool_search",
            annotations=annotations,
            core=True,
            meta=meta,
        )

    return [
        bridge_tool("tool_search", description, _SEARCH_SCHEMA, search),
        bridge_tool("tool_describe", _DESCRIBE_DESCRIPTION, _DESCRIBE_SCHEMA, describe),
        bridge_tool("tool_call", _CALL_DESCRIPTION, _call_schema(connectors), call),
    ]


def bridge_result(payload: Mapping[str, Any]) -> ToolResult:
    """A bridge answer as a tool result: compact JSON text and the same dict as ``structured``;
    an ``error`` key makes it an error result."""
    text = _json_text(payload)
    if text is None:  # a connector's response in a batch that is not JSON data
        text = _json_text(payload, default=repr) or compact_json(
            refusal("the answer is not JSON data", code="TOOL_ERROR")
        )
        payload = json.loads(text)
    if "error" in payload:
        code = str(payload.get("code") or "INVALID_ARGUMENTS")
        return ToolResult(
            content=[{"type": "text", "text": text}],
            structured=dict(payload),
            is_error=True,
            error_code=code,
            error_message=str(payload["error"]),
        )
    return ToolResult.text(text, structured=dict(payload))


# tool_search ----------------------------------------------------------------------------------


def loop_breaker(searches: int, max_searches: int) -> dict[str, Any] | None:
    """Past ``max_searches`` calls of ``tool_search`` in one turn (``searches`` counts this one),
    the error telling the model to act on what it found or ask the user."""
    if searches <= max_searches:
        return None
    return refusal(
        f"tool_search was called {searches} times this turn (limit {max_searches}). Stop "
        "searching: act on the tools already found, or ask the user how to proceed.",
        code="SEARCH_LIMIT",
    )


CONNECTORS_UNAVAILABLE_HINT = (
    "Hosted app connectors could not be searched just now; do not conclude that an app is "
    "missing: retry later or tell the user."
)
"""The hint of a search answer whose hosted app connectors could not be searched."""

CONNECTORS_SIGNED_OUT_HINT = (
    "Hosted app connectors could not be searched: the connector gateway refused the sign-in. "
    "Do not conclude that an app is missing: tell the user to {again}."
)
"""The hint when the gateway refused the token: retrying would not help, signing in would
(``again``: how, :func:`~hermes_core.connectors._signin.sign_in_again`)."""


def connectors_unavailable_hint(reason: str, sign_in_again: str = "") -> str:
    """The hint of a search answer whose hosted app connectors could not be searched for
    ``reason`` (``signed_out``, ``unreachable``...); ``sign_in_again`` says how to sign in
    again for ``signed_out``."""
    if reason != "signed_out":
        return CONNECTORS_UNAVAILABLE_HINT
    again = sign_in_again or "sign in again: run 'hermes connectors login'"
    return CONNECTORS_SIGNED_OUT_HINT.format(again=again)


def empty_match_hint(query: str) -> str:
    """The hint for a query that matched nothing, in the query's language."""
    # Imported here: only a query that misses words needs hints (the texts' regular
    # expressions and tables were 5 ms of every search's start).
    from hermes_core.search._hint_language import hint_text
    from hermes_core.search._query_language import query_language

    localized = hint_text(query_language(query), "empty", query=repr(query))
    return localized or (
        f"No tool matched {query!r}. The sources in available_sources are connected and their "
        "tools remain available: retry with the service name plus a concrete action and object "
        "(e.g. 'github create issue') before concluding that a capability is missing."
    )


def unmatched_hint(
    unmatched: Sequence[str],
    absent: Collection[str],
    *,
    connectors_unavailable: bool = False,
    query: str = "",
) -> str:
    """The hint for a query some of whose words none of its matches holds (``unmatched``), of
    which no tool at all holds ``absent``: only of those may it say that no source has them,
    and not even then while the hosted app connectors could not be searched. In ``query``'s
    language (:func:`~hermes_core.search._query_language.query_language`), saying which words
    were not understood."""
    from hermes_core.search._hint_language import hint_text
    from hermes_core.search._query_language import query_language

    missing = [word for word in unmatched if word in absent]
    elsewhere = [word for word in unmatched if word not in absent]
    language = query_language(query)
    if language != "en":
        absent_key = "missing_unavailable" if connectors_unavailable else "missing"
        texts = [
            hint_text(language, key, words=_quoted(words))
            for key, words in ((absent_key, missing), ("elsewhere", elsewhere))
            if words
        ]
        return " ".join(text for text in texts if text)
    parts = []
    if missing and connectors_unavailable:
        parts.append(
            f"No local tool contains {_quoted(missing)}, and the hosted app connectors could not "
            "be searched just now: if that names a service or app, do not conclude that it is "
            "missing. If it is an argument value (a place, an id, a file name), search without "
            "it and pass it to the tool instead."
        )
    elif missing:
        parts.append(
            f"No tool contains {_quoted(missing)}. If that names a service or app, none of the "
            "connected sources provides it, and any matches share only your other words. If it "
            "is an argument value (a place, an id, a file name), search without it and pass it "
            "to the tool instead."
        )
    if elsewhere:
        parts.append(
            f"None of these matches contains {_quoted(elsewhere)}, but other tools do: search "
            "again with fewer words around it (the service or object and one action)."
        )
    return " ".join(parts)


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(repr(word) for word in words)


def _required_names(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required") if isinstance(schema, Mapping) else None
    if not isinstance(required, list):
        return []
    return [str(name) for name in required[:REQUIRED_NAMES]]


def search_entry(
    source: str, source_name: str, description: str, parameters: Mapping[str, Any]
) -> dict[str, Any]:
    """One tool in the ``tools`` map of a search result."""
    text = description if len(description) <= DESCRIPTION_CHARS else description[:499] + "…"
    return {
        "source": source,
        "source_name": source_name,
        "description": text,
        "required": _required_names(parameters),
    }


# tool_call ------------------------------------------------------------------------------------


def _json_text(value: Any, default: Callable[[Any], Any] | None = None) -> str | None:
    """``value`` as compact JSON, or ``None`` when it is not JSON data (a set, bytes, a cycle,
    nesting too deep for the encoder): in-process callers can send anything."""
    try:
        return compact_json(value, default=default)
    except (TypeError, ValueError, RecursionError):
        return None


def _retry_shape(entry: CallEntry) -> str:
    arguments = entry.arguments if entry.arguments is not None else {}
    shown = _json_text(arguments)
    if shown is None:
        arguments = "<arguments that are not JSON data: send them as a JSON object>"
    elif len(shown) > RETRY_ECHO_CHARS:
        arguments = f"<{len(shown)} characters elided: send the same arguments>"
    return compact_json({"calls": [{"name": entry.name, "arguments": arguments}]})


def batch_rule(entries: Sequence[CallEntry]) -> dict[str, Any] | None:
    """The batch rule: several entries only when every name is a ``connectors__`` tool, at most
    :data:`MAX_BATCH`. A batch holding any other tool is refused with the caller's own first
    entry as the exact shape to retry with; ``None`` when the entries may run."""
    if len(entries) <= 1:
        return None
    others = list(dict.fromkeys(e.name for e in entries if not is_connector_name(e.name)))
    if others:
        shape = _retry_shape(entries[0])
        return refusal(
            f"only connector tools ({CONNECTOR_PREFIX}...) can be batched, and this batch of "
            f"{len(entries)} holds {', '.join(others[:5])}. Nothing was run. Retry with exactly "
            f"{shape} and send the others as separate tool_call calls.",
            retry_with=shape,
        )
    if len(entries) > MAX_BATCH:
        return refusal(
            f"a connector batch holds at most {MAX_BATCH} entries, not {len(entries)}. Nothing "
            "was run: split it."
        )
    return None

"""The gateway protocol's JSON bodies: requests built, answers read and checked.

Every reader takes the decoded body of a 2xx answer and returns the protocol type, or raises
:class:`Malformed` saying what does not follow the protocol: the field and what came instead
(the client turns it into a failure). A value of the wrong type is never read as truthy or
falsy. Results are matched to requests by position; a missing one is an error of its entry.
A schema entry that cannot be read is left out rather than failing the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.connectors import (
    ConnectionLink,
    ConnectorSchema,
    ConnectorState,
    ExecuteCall,
    ExecuteError,
    ExecuteResult,
)

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


class Malformed(ValueError):
    """An answer that does not follow the protocol; the message says where."""


_MISSING: Any = object()
"""What ``entry.get(key, _MISSING)`` gives for a key the answer does not have."""


def _shown(value: Any) -> str:
    """``value`` as an error message names what came instead of what was expected."""
    if value is _MISSING:
        return "missing"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "..."
        return f"the text {text!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise Malformed(f"{where} must be an object, not {_shown(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Malformed(f"{where} must be a list, not {_shown(value)}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise Malformed(f"{where} must be non-empty text, not {_shown(value)}")
    return value


def _flag(value: Any, where: str) -> bool:
    # Never bool(value): the text "false" would read as connected.
    if not isinstance(value, bool):
        raise Malformed(f"{where} must be true or false, not {_shown(value)}")
    return value


def _optional_text(value: Any, where: str) -> str | None:
    """Text, or ``None`` for an absent, null or empty value."""
    if value is _MISSING or value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Malformed(f"{where} must be text or null, not {_shown(value)}")
    return value


# Requests -------------------------------------------------------------------------------------


def search_body(use_cases: Sequence[str]) -> dict[str, Any]:
    """``{queries: [{useCase}]}``."""
    return {"queries": [{"useCase": use_case} for use_case in use_cases]}


def execute_body(calls: Sequence[ExecuteCall]) -> dict[str, Any]:
    """``{tools: [{connector, tool, arguments}]}``."""
    return {
        "tools": [
            {"connector": call.connector, "tool": call.tool, "arguments": dict(call.arguments)}
            for call in calls
        ]
    }


# Answers --------------------------------------------------------------------------------------


def read_schemas(value: Any, where: str = "schemas") -> dict[str, ConnectorSchema]:
    """``{slug: {connector, tool, description, inputSchema, annotations?}}``; unreadable entries
    left out. ``annotations`` that are not an object are read as none stated."""
    schemas: dict[str, ConnectorSchema] = {}
    for slug, entry in _object(value if value is not None else {}, where).items():
        if not isinstance(entry, Mapping) or not isinstance(slug, str) or not slug:
            continue
        connector = entry.get("connector")
        if not isinstance(connector, str) or not connector:
            continue
        description = entry.get("description")
        schema = entry.get("inputSchema")
        hints = entry.get("annotations")
        schemas[slug] = ConnectorSchema(
            slug=slug,
            connector=connector,
            description=description if isinstance(description, str) else "",
            input_schema=dict(schema) if isinstance(schema, Mapping) else dict(_EMPTY_SCHEMA),
            annotations=dict(hints) if isinstance(hints, Mapping) else {},
        )
    return schemas


def read_search(
    body: Any, count: int
) -> tuple[list[list[str]], dict[str, ConnectorSchema], dict[str, bool]]:
    """The slugs found for each of ``count`` use cases (by position), the schemas, and which
    connectors are connected."""
    answer = _object(body, "the answer")
    results = _list(answer.get("results", []), "results")
    found: list[list[str]] = []
    for index in range(count):
        if index >= len(results):
            found.append([])
            continue
        result = _object(results[index], f"results[{index}]")
        tools = _list(result.get("tools", []), f"results[{index}].tools")
        found.append([slug for slug in tools if isinstance(slug, str) and slug])
    connections: dict[str, bool] = {}
    for index, item in enumerate(_list(answer.get("connections", []), "connections")):
        where = f"connections[{index}]"
        entry = _object(item, where)
        connector = _text(entry.get("connector", _MISSING), f"{where}.connector")
        connections[connector] = _flag(entry.get("connected", _MISSING), f"{where}.connected")
    return found, read_schemas(answer.get("schemas")), connections


def read_schemas_answer(body: Any) -> tuple[dict[str, ConnectorSchema], list[str]]:
    """The schemas found and the slugs in ``notFound``."""
    answer = _object(body, "the answer")
    missing = _list(answer.get("notFound", []), "notFound")
    return read_schemas(answer.get("schemas")), [slug for slug in missing if isinstance(slug, str)]


def _call_error(value: Any, where: str) -> ExecuteError:
    error = _object(value, where)
    code = error.get("code")
    message = error.get("message")
    url = error.get("connectUrl")
    hint = error.get("hint")
    return ExecuteError(
        code=code if isinstance(code, str) and code else "PROVIDER_ERROR",
        message=message if isinstance(message, str) else "the gateway gave no message",
        connect_url=url if isinstance(url, str) and url else None,
        hint=hint if isinstance(hint, str) and hint else None,
    )


def read_execute(body: Any, calls: Sequence[ExecuteCall]) -> list[ExecuteResult]:
    """One result per call, by position: its ``data`` or its ``error``."""
    results = _list(_object(body, "the answer").get("results"), "results")
    read: list[ExecuteResult] = []
    for index, call in enumerate(calls):
        if index >= len(results):
            missing = ExecuteError("PROVIDER_ERROR", "the gateway gave no result for this call")
            read.append(ExecuteResult(call.connector, call.tool, error=missing))
            continue
        result = _object(results[index], f"results[{index}]")
        if result.get("error") is not None:
            error = _call_error(result["error"], f"results[{index}].error")
            read.append(ExecuteResult(call.connector, call.tool, error=error))
        else:
            read.append(ExecuteResult(call.connector, call.tool, data=result.get("data")))
    return read


def read_connections(body: Any, connectors: Sequence[str]) -> list[ConnectionLink]:
    """One link per connector asked for, by position."""
    results = _list(_object(body, "the answer").get("results"), "results")
    links: list[ConnectionLink] = []
    for index, connector in enumerate(connectors):
        if index >= len(results):
            links.append(ConnectionLink(connector, "failed"))
            continue
        result = _object(results[index], f"results[{index}]")
        status = result.get("status")
        url = result.get("connectUrl")
        links.append(
            ConnectionLink(
                connector,
                status if status in ("active", "initiated") else "failed",
                url if isinstance(url, str) and url else None,
            )
        )
    return links


def read_listing(body: Any) -> tuple[list[ConnectorState], str | None]:
    """One page of ``GET v1/connectors``: its items and ``nextCursor`` (``None`` on the last
    page). ``connectionStatus`` may be absent or null (read as ``""``)."""
    answer = _object(body, "the answer")
    items: list[ConnectorState] = []
    for index, item in enumerate(_list(answer.get("items", []), "items")):
        where = f"items[{index}]"
        entry = _object(item, where)
        status = entry.get("connectionStatus", _MISSING)
        items.append(
            ConnectorState(
                connector=_text(entry.get("connector", _MISSING), f"{where}.connector"),
                connected=_flag(entry.get("connected", _MISSING), f"{where}.connected"),
                status=_optional_text(status, f"{where}.connectionStatus") or "",
            )
        )
    return items, _optional_text(answer.get("nextCursor", _MISSING), "nextCursor")


def error_text(body: Any, fallback: str) -> str:
    """What an error body ``{"error": {code, message}}`` says, else ``fallback``."""
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error = body["error"]
        code, message = error.get("code"), error.get("message")
        if isinstance(message, str) and message:
            return f"{code}: {message}" if isinstance(code, str) and code else message
    return fallback

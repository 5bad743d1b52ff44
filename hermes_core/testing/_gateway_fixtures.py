"""The fixture file of the reference gateway (``hermes connectors dev-gateway --fixtures FILE``).

The format is fixed (other tools write it)::

    {"token": "optional-required-bearer",
     "connectors": [
       {"slug": "gmail", "name": "Gmail", "connected": false,
        "tools": [{"slug": "GMAIL_SEND_EMAIL",
                   "description": "Send an email from the user's Gmail account",
                   "input_schema": {"type": "object", "properties": {"to": {"type": "string"}},
                                    "required": ["to"]},
                   "annotations": {"destructiveHint": true},
                   "result": {"id": "msg-1", "status": "sent"}}]}]}

Only ``connectors``, each connector's ``slug`` and each tool's ``slug`` are required. A
:class:`~hermes_core._errors.ConfigError` names the file and the key of anything else wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core._errors import ConfigError
from hermes_core.connectors._json_files import read_json_file

__all__ = ["FixtureConnector", "FixtureTool", "Fixtures", "load_fixtures", "parse_fixtures"]

_TOP = frozenset({"token", "connectors"})
_CONNECTOR = frozenset({"slug", "name", "connected", "tools"})
_TOOL = frozenset({"slug", "description", "input_schema", "annotations", "result"})


@dataclass(frozen=True)
class FixtureTool:
    """One tool the reference gateway serves; ``result`` is what executing it answers."""

    slug: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    annotations: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None


@dataclass(frozen=True)
class FixtureConnector:
    """One app: its slug, display name, whether it starts connected, and its tools."""

    slug: str
    name: str
    connected: bool = False
    tools: tuple[FixtureTool, ...] = ()


@dataclass(frozen=True)
class Fixtures:
    """A whole fixture file: the bearer token it requires (``None``: any), and the apps."""

    connectors: tuple[FixtureConnector, ...]
    token: str | None = field(default=None, repr=False)


def _check_keys(
    data: Mapping[str, Any], known: frozenset[str], where: str, path: Path | None
) -> None:
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise ConfigError(
            f"unknown keys {unknown} (known: {', '.join(sorted(known))})", path=path, key=where
        )


def _mapping(value: Any, where: str, path: Path | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected an object, got {type(value).__name__}", path=path, key=where)
    return value


def _slug(value: Any, where: str, path: Path | None) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ConfigError(
            "expected non-empty text without surrounding spaces", path=path, key=where
        )
    return value


def _tool(data: Any, where: str, path: Path | None) -> FixtureTool:
    entry = _mapping(data, where, path)
    _check_keys(entry, _TOOL, where, path)
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ConfigError("expected text", path=path, key=f"{where}.description")
    schema = entry.get("input_schema", {"type": "object", "properties": {}})
    annotations = entry.get("annotations", {})
    return FixtureTool(
        slug=_slug(entry.get("slug"), f"{where}.slug", path),
        description=description,
        input_schema=dict(_mapping(schema, f"{where}.input_schema", path)),
        annotations=dict(_mapping(annotations, f"{where}.annotations", path)),
        result=entry.get("result"),
    )


def _connector(data: Any, where: str, path: Path | None) -> FixtureConnector:
    entry = _mapping(data, where, path)
    _check_keys(entry, _CONNECTOR, where, path)
    slug = _slug(entry.get("slug"), f"{where}.slug", path)
    if "__" in slug:
        raise ConfigError("a connector slug cannot hold '__'", path=path, key=f"{where}.slug")
    name = entry.get("name", slug)
    if not isinstance(name, str):
        raise ConfigError("expected text", path=path, key=f"{where}.name")
    connected = entry.get("connected", False)
    if not isinstance(connected, bool):
        raise ConfigError("expected true or false", path=path, key=f"{where}.connected")
    tools_data = entry.get("tools", [])
    if not isinstance(tools_data, list):
        raise ConfigError("expected a list", path=path, key=f"{where}.tools")
    tools = tuple(_tool(tool, f"{where}.tools[{i}]", path) for i, tool in enumerate(tools_data))
    slugs = [tool.slug for tool in tools]
    twice = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if twice:
        raise ConfigError(f"tool slugs given twice: {twice}", path=path, key=f"{where}.tools")
    return FixtureConnector(slug, name, connected, tools)


def parse_fixtures(data: Any, path: Path | None = None) -> Fixtures:
    """The fixtures of a decoded fixture document."""
    top = _mapping(data, "(top level)", path)
    _check_keys(top, _TOP, "(top level)", path)
    token = top.get("token")
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ConfigError("expected non-empty text or null", path=path, key="token")
    listed = top.get("connectors")
    if not isinstance(listed, list):
        raise ConfigError("expected a list of connectors", path=path, key="connectors")
    connectors = tuple(
        _connector(item, f"connectors[{index}]", path) for index, item in enumerate(listed)
    )
    slugs = [connector.slug for connector in connectors]
    twice = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if twice:
        raise ConfigError(f"connector slugs given twice: {twice}", path=path, key="connectors")
    return Fixtures(connectors, token)


def load_fixtures(path: Path) -> Fixtures:
    """The fixtures in the JSON file ``path``."""
    return parse_fixtures(read_json_file(path), path)

"""Catalog toolsets: a file of tool definitions loaded as deferred, search-only tools.

``tools.catalogs: [{path, server}]`` names JSON files in the eval format (an array of
``{name, description, input_schema?, server?}``). Their tools are searchable and describable like
any deferred tool, with source ``catalog``; calling one returns a clear "catalog-only tool" error,
since nothing stands behind it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hermes_core.config import CatalogEntry
from hermes_core.errors import ConfigError
from hermes_core.tools import (
    BRIDGE_TOOL_NAMES,
    TOOL_NAME_PATTERN,
    Tool,
    ToolAnnotations,
    ToolResult,
)

__all__ = ["CATALOG_ONLY", "catalog_tools", "load_catalog", "tools_from_entries"]

CATALOG_ONLY = "CATALOG_ONLY"
"""The error code of a call to a catalog tool."""


_ANNOTATIONS = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
"""Every catalog tool's: it only answers "catalog-only tool", nothing to approve."""


class _CatalogOnly:
    """The handler of one catalog tool. A slotted object rather than a closure: a catalog may
    hold hundreds of thousands of tools, and each tool should cost about what its JSON did."""

    __slots__ = ("name", "path")

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    def __call__(self, **_: Any) -> ToolResult:
        message = (
            f"{self.name!r} is a catalog-only tool (loaded from {self.path} for search and "
            "description); it cannot be run. Connect the real server that provides it to call it."
        )
        return ToolResult.error(CATALOG_ONLY, message, structured={"error": message})


def _field_error(path: Path, index: int, field: str, message: str) -> ConfigError:
    return ConfigError(f"entry {index}: {field}: {message}", path=path)


def tools_from_entries(
    entries: Any,
    path: Path,
    server: str | None = None,
    *,
    on_reserved: Callable[[str], None] | None = None,
) -> list[Tool]:
    """Tools from parsed catalog ``entries`` (read from ``path``); ``server`` overrides every
    entry's own server. Raises :class:`~hermes_core.errors.ConfigError` naming the index and the
    field of the first bad entry; nothing is returned half-built. An entry named like a bridge
    tool is an error too, unless ``on_reserved`` is given: then it is skipped and its name
    handed to ``on_reserved``."""
    if not isinstance(entries, list):
        raise ConfigError(
            f"a catalog must be a JSON array of tools, not {type(entries).__name__}", path=path
        )
    tools: list[Tool] = []
    seen: dict[str, int] = {}
    # Shared by every tool of the file (read-only), as are the annotations and each toolset name.
    meta = MappingProxyType({"catalog": str(path)})
    toolsets: dict[str, str] = {}
    for index, entry in enumerate(entries):
        # Parsed JSON gives dicts; the ABC check is the slow path (a catalog may be 330,000).
        if type(entry) is not dict and not isinstance(entry, Mapping):
            raise ConfigError(
                f"entry {index}: must be an object, not {type(entry).__name__}", path=path
            )
        name = entry.get("name")
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
            raise _field_error(
                path, index, "name", f"{name!r} is not a tool name (1-64 letters, digits, _ or -)"
            )
        if name in BRIDGE_TOOL_NAMES:
            if on_reserved is None:
                raise _field_error(path, index, "name", f"{name!r} is reserved for the bridge")
            on_reserved(name)
            continue
        if name in seen:
            raise _field_error(path, index, "name", f"{name!r} repeats entry {seen[name]}")
        seen[name] = index
        description = entry.get("description", "")
        if not isinstance(description, str):
            raise _field_error(path, index, "description", "must be a string")
        schema = entry.get("input_schema", {"type": "object", "properties": {}})
        if type(schema) is not dict and not isinstance(schema, Mapping):
            raise _field_error(path, index, "input_schema", "must be a JSON Schema object")
        own_server = entry.get("server")
        if own_server is not None and not isinstance(own_server, str):
            raise _field_error(path, index, "server", "must be a string")
        group = server or own_server or ""
        toolset = toolsets.get(group)
        if toolset is None:
            toolset = toolsets[group] = f"catalog-{group}" if group else "catalog"
        tools.append(
            Tool(
                name=name,
                description=description,
                parameters=dict(schema),
                handler=_CatalogOnly(name, path),
                toolset=toolset,
                source="catalog",
                source_name=group,
                annotations=_ANNOTATIONS,
                meta=meta,
            )
        )
    return tools


def load_catalog(
    path: Path,
    server: str | None = None,
    *,
    on_reserved: Callable[[str], None] | None = None,
) -> list[Tool]:
    """Read the catalog file at ``path`` as tools (see :func:`tools_from_entries`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read catalog: {exc.strerror or exc}", path=path) from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    return tools_from_entries(entries, path, server, on_reserved=on_reserved)


def catalog_tools(catalogs: Sequence[CatalogEntry], base: Path) -> list[Tool]:
    """Every tool of ``tools.catalogs``; relative paths are resolved against ``base`` (the
    directory of the configuration file)."""
    tools: list[Tool] = []
    for entry in catalogs:
        path = Path(entry.path).expanduser()
        tools.extend(load_catalog(path if path.is_absolute() else base / path, entry.server))
    return tools

"""Catalog toolsets: a file of tool definitions loaded as deferred, search-only tools.

``tools.catalogs: [{path, server}]`` names JSON files in the eval format (an array of
``{name, description, input_schema?, server?}``). Their tools are searchable and describable like
any deferred tool, with source ``catalog``; calling one returns a clear "catalog-only tool" error,
since nothing stands behind it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hermes_core._config import CatalogEntry
from hermes_core._errors import ConfigError
from hermes_core._gc_pause import collector_paused
from hermes_core._mcp.manifests import (
    MAX_SCHEMA_CHARACTERS,
    capped_description,
    description_problem,
    schema_problem,
)
from hermes_core._registry import Registry
from hermes_core._tool_blocks import ToolBlock
from hermes_core._tools import (
    BRIDGE_TOOL_NAMES,
    TOOL_NAME_PATTERN,
    Tool,
    ToolAnnotations,
    ToolResult,
)
from hermes_core.search import _catalog_cache as catalog_cache
from hermes_core.search._json_array import parsed_entries

__all__ = [
    "CATALOG_ONLY",
    "CATALOG_OWNER",
    "CatalogBlock",
    "catalog_blocks",
    "catalog_tool",
    "catalog_tools",
    "catalog_toolset",
    "checked_entries",
    "load_catalog",
    "read_catalog",
    "register_catalogs",
    "tools_from_entries",
]

logger = logging.getLogger(__name__)

CATALOG_ONLY = "CATALOG_ONLY"
"""The error code of a call to a catalog tool."""
CATALOG_OWNER = "catalog"
"""The registry owner of the catalogs' tools."""


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


def _not_an_array(entries: Any, path: Path) -> ConfigError:
    return ConfigError(
        f"a catalog must be a JSON array of tools, not {type(entries).__name__}", path=path
    )


def checked_entries(
    entries: Any,
    path: Path,
    server: str | None = None,
    *,
    on_reserved: Callable[[str], None] | None = None,
) -> Iterator[tuple[str, str, Mapping[str, Any], str]]:
    """``(name, description, input schema, group)`` of each of the parsed catalog ``entries``
    (read from ``path``), checked; ``server`` is the server (the group) of every entry, and an
    entry naming another one is an error.
    Raises :class:`~hermes_core._errors.ConfigError` naming the index and the field of the first
    bad entry. An entry named like a bridge tool is an error too, unless ``on_reserved`` is
    given: then it is skipped and its name handed to ``on_reserved``."""
    if not isinstance(entries, list):
        raise _not_an_array(entries, path)
    return _checked(entries, path, server, on_reserved)


def _checked(
    entries: Iterable[Any],
    path: Path,
    server: str | None,
    on_reserved: Callable[[str], None] | None,
) -> Iterator[tuple[str, str, Mapping[str, Any], str]]:
    """:func:`checked_entries` of the entries of an array, as they come."""
    seen: dict[str, int] = {}
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
        if (too_long := description_problem(description)) is not None:
            logger.warning(
                "catalog %s lists a tool whose description is too long, shortened: %r: %s",
                path,
                name,
                too_long,
            )
            description = capped_description(description)
        schema = entry.get("input_schema", {"type": "object", "properties": {}})
        if type(schema) is not dict and not isinstance(schema, Mapping):
            raise _field_error(path, index, "input_schema", "must be a JSON Schema object")
        own_server = entry.get("server")
        if own_server is not None and not isinstance(own_server, str):
            raise _field_error(path, index, "server", "must be a string")
        if server and own_server and own_server != server:
            # Overriding it silently would file the tool under a server it does not name.
            raise _field_error(
                path,
                index,
                "server",
                f"{own_server!r} is not the server {server!r} that tools.catalogs[].server "
                "gives this file; remove one of the two",
            )
        yield name, description, schema, server or own_server or ""


def catalog_toolset(group: str) -> str:
    """The toolset of a catalog's tools of ``group`` (their server): ``catalog-<group>``, or
    ``catalog`` for tools of no server."""
    return f"catalog-{group}" if group else "catalog"


def tools_from_entries(
    entries: Any,
    path: Path,
    server: str | None = None,
    *,
    on_reserved: Callable[[str], None] | None = None,
) -> list[Tool]:
    """Tools from parsed catalog ``entries`` (read from ``path``), checked as
    :func:`checked_entries` checks them; nothing is returned half-built."""
    tools: list[Tool] = []
    # Shared by every tool of the file (read-only), as are the annotations and each toolset name.
    meta = MappingProxyType({"catalog": str(path)})
    toolsets: dict[str, str] = {}
    for name, description, schema, group in checked_entries(
        entries, path, server, on_reserved=on_reserved
    ):
        toolset = toolsets.get(group)
        if toolset is None:
            toolset = toolsets[group] = catalog_toolset(group)
        tools.append(catalog_tool(name, description, schema, group, toolset, path, meta))
    return tools


def catalog_tool(
    name: str,
    description: str,
    schema: Mapping[str, Any],
    group: str,
    toolset: str,
    path: Path,
    meta: Mapping[str, Any],
    source_name: str | None = None,
) -> Tool:
    """The tool of one checked catalog entry (``source_name``: the group's, when it is not
    ``group`` itself)."""
    return Tool(
        name=name,
        description=description,
        parameters=dict(schema),
        handler=_CatalogOnly(name, path),
        toolset=toolset,
        source="catalog",
        source_name=group if source_name is None else source_name,
        annotations=_ANNOTATIONS,
        meta=meta,
    )


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
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", path=path) from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    return tools_from_entries(entries, path, server, on_reserved=on_reserved)


class CatalogBlock(ToolBlock):
    """The tools of one catalog file as one :class:`~hermes_core._tool_blocks.ToolBlock`: each
    made when it is asked for, from the parsed entries of a file just read or from the catalog
    cache (:mod:`~hermes_core.search._catalog_cache`). A tool of no server gets ``owner`` as its
    ``source_name``, as :meth:`~hermes_core._registry.Registry.register_all` would give it."""

    def __init__(
        self,
        path: Path,
        names: Sequence[str],
        group_ids: Sequence[int],
        groups: Sequence[str],
        entry: Callable[[int], tuple[str, Mapping[str, Any]]],
        sha256: str,
        server: str | None,
        owner: str,
        group_sizes: list[int] | None = None,
    ) -> None:
        key = hashlib.sha256(
            f"catalog {catalog_cache.FORMAT_VERSION}\n{sha256}\n{server or ''}\n{owner}".encode()
        ).hexdigest()
        super().__init__(
            names,
            group_ids,
            [group or owner for group in groups],
            [catalog_toolset(group) for group in groups],
            "catalog",
            key,
            group_sizes,
        )
        self.path = path
        self._entry = entry
        self._meta = MappingProxyType({"catalog": str(path)})

    def fields(self, position: int) -> tuple[str, str, str, Mapping[str, Any]]:
        description, schema = self._entry(position)
        return self.names[position], description, self.groups[self.group_ids[position]], schema

    def _make(self, position: int) -> Tool:
        name, description, source_name, schema = self.fields(position)
        group = self.group_ids[position]
        toolset = self.toolsets[group]
        return catalog_tool(
            name, description, schema, source_name, toolset, self.path, self._meta, source_name
        )


def read_catalog(
    path: Path, server: str | None, *, owner: str, cache_dir: Path | None
) -> CatalogBlock:
    """The catalog file at ``path`` as a :class:`CatalogBlock`, from the catalog cache in
    ``cache_dir`` when it holds this file as it is now; else read, checked (a
    :class:`~hermes_core._errors.ConfigError` naming the first bad entry) and, with a
    ``cache_dir``, cached."""
    try:
        status = path.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read catalog: {exc.strerror or exc}", path=path) from None
    if cache_dir is not None:
        cached = catalog_cache.load_cached(cache_dir, path, server, status)
        if cached is not None:
            return CatalogBlock(
                path,
                cached.names,
                cached.group_ids,
                cached.groups,
                cached.entry,
                cached.sha256,
                server,
                owner,
                cached.group_sizes,
            )
    read_at = time.time_ns()
    try:
        with open(path, "rb") as file:
            before = os.fstat(file.fileno())
            data = file.read()
            after = os.fstat(file.fileno())
    except OSError as exc:
        raise ConfigError(f"cannot read catalog: {exc.strerror or exc}", path=path) from None
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc.reason}", path=path) from None
    del data
    names: list[str] = []
    # Each entry's [description, input_schema] as JSON, encoded as it is checked: a tool's
    # schema is needed again only when the tool is made or indexed, and decoding one then
    # costs less than holding every catalog's schemas parsed.
    encoded: list[str] = []
    encode = catalog_cache.entry_encoder()
    group_ids: list[int] = []
    groups: dict[str, int] = {}
    try:
        entries = parsed_entries(text)
        if not isinstance(entries, Iterator):
            raise _not_an_array(entries, path)
        for name, description, schema, group in _checked(entries, path, server, None):
            text = encode((description, schema))
            # Only an entry this long can hold a schema over the cap: the others cost no more.
            if len(text) > MAX_SCHEMA_CHARACTERS and (
                bad := schema_problem(schema, "input_schema")
            ):
                logger.warning(
                    "catalog %s lists a tool hermes cannot use, skipped: %r: %s", path, name, bad
                )
                continue
            names.append(name)
            encoded.append(text)
            found = groups.get(group)
            if found is None:
                found = groups[group] = len(groups)
            group_ids.append(found)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    del text
    entry = _decoder(encoded)
    if cache_dir is not None and _identity(before) == _identity(after):
        written = catalog_cache.save_cached(
            cache_dir, path, server, after, read_at, sha256, names, group_ids, list(groups), encoded
        )
        if written is not None:  # read back from the file: the entries need not stay here
            entry = written.entry
    return CatalogBlock(path, names, group_ids, list(groups), entry, sha256, server, owner)


def _decoder(encoded: Sequence[str]) -> Callable[[int], tuple[str, Mapping[str, Any]]]:
    """The description and input schema of the entry at a position, from its JSON."""

    def entry(position: int) -> tuple[str, Mapping[str, Any]]:
        return catalog_cache.decode_entry(encoded[position])

    return entry


def _identity(status: os.stat_result) -> tuple[int, ...]:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def catalog_blocks(
    catalogs: Sequence[CatalogEntry], base: Path, *, owner: str, cache_dir: Path | None
) -> list[CatalogBlock]:
    """Every catalog of ``tools.catalogs`` as a :class:`CatalogBlock` (see
    :func:`read_catalog`); relative paths are resolved against ``base``."""
    blocks: list[CatalogBlock] = []
    for entry in catalogs:
        path = Path(entry.path).expanduser()
        blocks.append(
            read_catalog(
                path if path.is_absolute() else base / path,
                entry.server,
                owner=owner,
                cache_dir=cache_dir,
            )
        )
    return blocks


def register_catalogs(
    registry: Registry, catalogs: Sequence[CatalogEntry], base: Path, cache_dir: Path | None
) -> None:
    """Register every catalog of ``tools.catalogs`` in ``registry`` (owner ``catalog``), as one
    change; relative paths are resolved against ``base``."""
    with collector_paused():
        # Each catalog is one block, its tools made on first use; from the catalog cache a start
        # neither parses nor checks the file again (docs/tool-search.md).
        blocks = catalog_blocks(catalogs, base, owner=CATALOG_OWNER, cache_dir=cache_dir)
        with registry.batch():
            for block in blocks:
                registry.register_block(block, owner=CATALOG_OWNER)


def catalog_tools(catalogs: Sequence[CatalogEntry], base: Path) -> list[Tool]:
    """Every tool of ``tools.catalogs``; relative paths are resolved against ``base`` (the
    directory of the configuration file)."""
    tools: list[Tool] = []
    for entry in catalogs:
        path = Path(entry.path).expanduser()
        tools.extend(load_catalog(path if path.is_absolute() else base / path, entry.server))
    return tools

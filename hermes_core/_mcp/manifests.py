"""Tool manifests: each MCP server's last tool listing and its last failed connect, cached.

After every successful ``tools/list`` the server's listing (its tools in MCP wire form, every
page) is saved to ``<cache dir>/mcp/<server>.<key>.json``, where ``key`` is a hash of what
starts or reaches the server (``command``, ``args``, ``env``, ``cwd``, ``url``, ``headers`` as
written in ``config.yaml``, ``${VAR}`` unexpanded): a server whose entry changed has another
key and is never answered from the old listing. A failed connect is recorded in the same file
(its reason and time), next to the last listing, which it keeps. Files are written atomically
(a temporary file renamed over the old one), private to the user, and the files of the
server's older keys are removed.

Nothing read from the cache is trusted: a file that is not JSON, of another format version,
written for another entry, or whose tools are not MCP tool objects is ignored with one warning
and replaced by the server's next listing. A cache that cannot be written is warned about and
otherwise changes nothing. Reading a manifest needs neither the MCP SDK nor pydantic, so a
command answered from manifests pays for neither.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._atomic_write import write_atomically
from hermes_core._cache_files import cache_dir_blocked
from hermes_core._terminal_cells import shortened

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig

__all__ = [
    "MANIFEST_FORMAT",
    "MAX_DESCRIPTION_CHARACTERS",
    "MAX_SCHEMA_CHARACTERS",
    "MAX_SCHEMA_DEPTH",
    "ConnectFailure",
    "ManifestStore",
    "ServerManifest",
    "capped_description",
    "description_problem",
    "listed_schema_problem",
    "manifest_key",
    "schema_problem",
    "tool_problem",
]

log = logging.getLogger("hermes_core._mcp")

MANIFEST_FORMAT = 2
"""The version of the file layout, and the checks its listing passed; a file of another
version is not read (its server is asked again). (2: a tool whose schema is over
:data:`MAX_SCHEMA_CHARACTERS` is skipped at its listing, so a file written under 1 may hold
one.)"""


@dataclass(frozen=True)
class ConnectFailure:
    """A connect that failed: when (seconds since the epoch) and why; ``inputs``: the
    fingerprint of the ``${VAR}`` values it was made with
    (:func:`~hermes_core._mcp.expand.variables_fingerprint`), ``None`` when not known."""

    at: float
    reason: str
    inputs: str | None = None


@dataclass(frozen=True)
class ServerManifest:
    """What the cache knows of one server under one entry (``key``).

    ``tools`` is the last successful listing in MCP wire form, ``None`` when the server never
    answered under this entry; ``listed_at`` is when it was listed (seconds since the epoch).
    ``failure`` is the last failed connect, when it came after that listing.
    """

    server: str
    key: str
    tools: tuple[Mapping[str, Any], ...] | None = None
    listed_at: float | None = None
    protocol_version: str | None = None
    failure: ConnectFailure | None = None

    def age(self, now: float) -> float | None:
        """Seconds since the listing (``None`` without one)."""
        return None if self.listed_at is None else now - self.listed_at


def manifest_key(config: McpServerConfig) -> str:
    """The hash naming a server's manifest: what starts or reaches the server, as written.

    ``include``/``exclude``, the timeouts and ``enabled`` are not part of it: they are applied
    to the listing when it is read, so changing them keeps the manifest.
    """
    identity = {
        "command": config.command,
        "args": list(config.args),
        "env": dict(config.env),
        "cwd": config.cwd,
        "url": config.url,
        "headers": dict(config.headers),
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # A lone surrogate (an environment value of bytes that are not UTF-8) names the server too.
    return hashlib.sha256(f"{MANIFEST_FORMAT}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


class ManifestError(ValueError):
    """A manifest file that cannot be trusted; the message says what is wrong with it."""


def _finite(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ManifestError(f"{where}: expected a number of seconds, got {value!r}")
    return float(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


MAX_SCHEMA_DEPTH = 64
"""How deep a tool's ``inputSchema`` or ``outputSchema`` may nest objects and arrays. Real
schemas nest a few levels; the checks that walk a schema (validation, coercion) recurse, and a
schema of ~190 levels exhausts Python's stack in them."""


def deeper_than(value: Any, limit: int) -> bool:
    """Whether the JSON data ``value`` nests objects and arrays more than ``limit`` deep
    (walked without recursion, so any depth is measured)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def tool_problem(entry: Mapping[str, Any]) -> str | None:
    """What makes one listed tool (MCP wire form) unusable for hermes, in one line starting
    with the field (``name: ...``, ``inputSchema.required: ...``); ``None`` when it is usable.

    A tool needs a non-empty ``name`` (it becomes part of ``mcp__<server>__<tool>``) and a JSON
    Schema object as ``inputSchema`` (its ``required`` a list of names, its ``properties`` an
    object); ``description`` and ``title`` are text, ``annotations`` and ``outputSchema``
    objects, when given; a tool that runs only as a task (``execution.taskSupport:
    "required"``) is unusable too. Listings are screened with it (and
    :func:`listed_schema_problem`) as they come
    (:class:`~hermes_core._mcp.connection.ListingScreen`), so a manifest never holds such a
    tool.
    """
    if "name" not in entry:
        return "name: missing"
    name = entry["name"]
    if not isinstance(name, str) or not name:
        return f"name: expected a tool name, got {_shown(name)}"
    schema = entry.get("inputSchema")
    if not isinstance(schema, dict):
        return f"inputSchema: expected a JSON Schema object, got {_shown(schema)}"
    required = schema.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(item, str) for item in required)
    ):
        return f"inputSchema.required: expected a list of property names, got {_shown(required)}"
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, dict):
        return f"inputSchema.properties: expected an object, got {_shown(properties)}"
    for key in ("description", "title"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f"{key}: expected text, got {_shown(entry[key])}"
    for key in ("annotations", "outputSchema"):
        if entry.get(key) is not None and not isinstance(entry[key], dict):
            return f"{key}: expected an object, got {_shown(entry[key])}"
    execution = entry.get("execution")
    if isinstance(execution, dict) and execution.get("taskSupport") == "required":
        # The SDK's client cannot start a task: every call would be refused (-32601).
        return (
            "execution.taskSupport: 'required': it runs only as an MCP task, "
            "which hermes does not start"
        )
    return None


MAX_SCHEMA_CHARACTERS = 131_072
"""The most characters a tool's ``inputSchema`` or ``outputSchema`` may take as compact JSON.
A schema goes whole into the model's context (``tool_describe``, and every request when the
tool is visible), so one careless or hostile server could otherwise fill it. The largest real
schemas measured (docs/mcp.md) take 27,955 characters (an operation of a SaaS API) and 5,077
(among 527 tools of 70 MCP servers)."""


def schema_problem(schema: Any, key: str = "inputSchema") -> str | None:
    """Why hermes does not take the schema ``schema`` (``key`` names it in the line): nested
    deeper than :data:`MAX_SCHEMA_DEPTH`, or more than :data:`MAX_SCHEMA_CHARACTERS` as
    compact JSON; ``None`` when it is neither. The one rule for every schema that comes from
    outside (an MCP server's listing, a connector gateway's answer)."""
    if deeper_than(schema, MAX_SCHEMA_DEPTH):
        return f"{key}: nested more than {MAX_SCHEMA_DEPTH} levels deep"
    try:
        size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False))
    except (TypeError, ValueError):  # not JSON data: an in-process caller's, left to the tool
        return None
    if size > MAX_SCHEMA_CHARACTERS:
        return (
            f"{key}: {size:,} characters as JSON, more than the {MAX_SCHEMA_CHARACTERS:,} "
            "hermes passes to a model"
        )
    return None


def listed_schema_problem(entry: Mapping[str, Any]) -> str | None:
    """:func:`schema_problem` of a listed tool's ``inputSchema``, then its ``outputSchema``.
    Live listings are screened with it (:func:`~hermes_core._mcp.listing.screen_tools`), so no
    manifest holds such a tool; reading a manifest does not check its schemas again."""
    for key in ("inputSchema", "outputSchema"):
        problem = schema_problem(entry.get(key), key)
        if problem is not None:
            return problem
    return None


MAX_DESCRIPTION_CHARACTERS = 16_384
"""The most characters of a tool's description hermes passes to a model (``tool_describe``,
and every request when the tool is visible). The longest real descriptions measured
(docs/mcp.md) take 8,018 characters (a ToolBench endpoint) and 3,866 (among 527 tools of 70 MCP
servers). A parameter's description is inside the schema, bounded by
:data:`MAX_SCHEMA_CHARACTERS`."""


def description_problem(description: Any) -> str | None:
    """Why the description ``description`` is shortened (more than
    :data:`MAX_DESCRIPTION_CHARACTERS`), in one line; ``None`` when it is taken whole. The one
    rule for every description that comes from outside, with :func:`capped_description`."""
    if not isinstance(description, str) or len(description) <= MAX_DESCRIPTION_CHARACTERS:
        return None
    return (
        f"description: {len(description):,} characters, more than the "
        f"{MAX_DESCRIPTION_CHARACTERS:,} hermes passes to a model"
    )


def capped_description(description: str) -> str:
    """``description`` whole, or, over :data:`MAX_DESCRIPTION_CHARACTERS`, cut at a word (or
    between two letters) and ended with ``...`` and a note of the cut, in that many characters
    at most: the tool still works, and the model and the reader see that text is missing."""
    if len(description) <= MAX_DESCRIPTION_CHARACTERS:
        return description
    note = (
        f" (description cut at {MAX_DESCRIPTION_CHARACTERS:,} characters, of {len(description):,})"
    )
    return shortened(description, MAX_DESCRIPTION_CHARACTERS - len(note)) + note


def check_listing(value: Any) -> tuple[Mapping[str, Any], ...]:
    """``value`` as a listing of MCP tool objects (wire form), or :class:`ManifestError`
    naming the first entry and field that is not one (:func:`tool_problem`)."""
    if not isinstance(value, list):
        raise ManifestError(f"tools: expected a list, got {type(value).__name__}")
    for index, entry in enumerate(value):
        where = f"tools[{index}]"
        if not isinstance(entry, dict):
            raise ManifestError(f"{where}: expected an object, got {type(entry).__name__}")
        problem = tool_problem(entry)
        if problem is not None:
            raise ManifestError(f"{where}.{problem}")
    return tuple(value)


def _parse(text: str, server: str, key: str) -> ServerManifest:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ManifestError(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != MANIFEST_FORMAT:
        raise ManifestError(
            f"format {data.get('format')!r}, this hermes-core reads format {MANIFEST_FORMAT}"
        )
    if data.get("server") != server or data.get("key") != key:
        raise ManifestError("written for another server entry")
    tools = None if data.get("tools") is None else check_listing(data["tools"])
    listed_at = None
    if tools is not None:
        listed_at = _finite(data.get("listed_at"), "listed_at")
    version = data.get("protocol_version")
    if version is not None and not isinstance(version, str):
        raise ManifestError("protocol_version: expected text")
    failure = None
    recorded = data.get("failure")
    if recorded is not None:
        if not isinstance(recorded, dict) or not isinstance(recorded.get("reason"), str):
            raise ManifestError("failure: expected an object with a reason")
        inputs = recorded.get("inputs")
        if inputs is not None and not isinstance(inputs, str):
            raise ManifestError("failure.inputs: expected text")
        at = _finite(recorded.get("at"), "failure.at")
        failure = ConnectFailure(at, recorded["reason"], inputs)
    if tools is None and failure is None:
        raise ManifestError("holds neither a listing nor a failure")
    return ServerManifest(server, key, tools, listed_at, version, failure)


def _text_of(manifest: ServerManifest) -> str:
    failure = manifest.failure
    data = {
        "format": MANIFEST_FORMAT,
        "server": manifest.server,
        "key": manifest.key,
        "listed_at": manifest.listed_at,
        "protocol_version": manifest.protocol_version,
        "failure": None
        if failure is None
        else {"at": failure.at, "reason": failure.reason, "inputs": failure.inputs},
        "tools": None if manifest.tools is None else list(manifest.tools),
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


class ManifestStore:
    """The tool manifests in ``directory`` (the host uses ``<cache dir>/mcp``).

    ``clock`` gives the time recorded in the files (seconds since the epoch).
    """

    def __init__(self, directory: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.directory = directory
        self.clock = clock

    def path(self, server: str, config: McpServerConfig) -> Path:
        """The file of ``server`` under ``config`` (server names hold no ``.``, so no server's
        files match another's)."""
        return self.directory / f"{server}.{manifest_key(config)[:16]}.json"

    def load(self, server: str, config: McpServerConfig) -> ServerManifest | None:
        """The manifest of ``server`` under ``config``; ``None`` when there is none or it cannot
        be trusted (then with one warning saying why)."""
        path = self.path(server, config)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            if not (isinstance(exc, OSError) and cache_dir_blocked(self.directory)):
                self._ignored(server, path, f"it cannot be read ({exc})")
            return None
        try:
            return _parse(text, server, manifest_key(config))
        except ManifestError as exc:
            self._ignored(server, path, str(exc))
            return None

    def save_listing(
        self,
        server: str,
        config: McpServerConfig,
        tools: Sequence[Mapping[str, Any]],
        protocol_version: str | None,
    ) -> ServerManifest:
        """Record a successful listing (it clears a recorded failure); returns what was saved."""
        manifest = ServerManifest(
            server, manifest_key(config), tuple(tools), self.clock(), protocol_version
        )
        self._write(manifest, config)
        return manifest

    def save_failure(
        self,
        server: str,
        config: McpServerConfig,
        reason: str,
        previous: ServerManifest | None = None,
        inputs: str | None = None,
    ) -> ServerManifest:
        """Record a failed connect, keeping the listing of ``previous`` (the manifest read at
        start, when it is of the same entry), with the fingerprint of the variables it was made
        with (``inputs``); returns what was saved."""
        key = manifest_key(config)
        kept = previous if previous is not None and previous.key == key else None
        manifest = ServerManifest(
            server,
            key,
            kept.tools if kept is not None else None,
            kept.listed_at if kept is not None else None,
            kept.protocol_version if kept is not None else None,
            ConnectFailure(self.clock(), reason, inputs),
        )
        self._write(manifest, config)
        return manifest

    def _write(self, manifest: ServerManifest, config: McpServerConfig) -> None:
        path = self.path(manifest.server, config)
        try:
            write_atomically(path, _text_of(manifest), mode=0o600)
        except OSError as exc:
            if cache_dir_blocked(self.directory):
                return
            log.warning(
                "cannot write the tool manifest of MCP server %r to %s: %s",
                manifest.server,
                path,
                exc.strerror or exc,
            )
            return
        for other in self.directory.glob(f"{manifest.server}.*.json"):
            if other != path:
                with contextlib.suppress(OSError):
                    other.unlink()

    @staticmethod
    def _ignored(server: str, path: Path, problem: str) -> None:
        log.warning(
            "the tool manifest of MCP server %r (%s) is ignored: %s; it is rebuilt from the "
            "server's next listing",
            server,
            path,
            problem,
        )

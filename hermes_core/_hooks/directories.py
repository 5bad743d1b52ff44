"""Hook directories: ``$HERMES_HOME/hooks/<name>/`` with ``HOOK.yaml`` and ``handler.py``.

They are plugins' little siblings. Discovery reads the directories and their ``HOOK.yaml``
only; the plugin gate (:func:`hermes_core._plugins.gate.gate`, over ``hooks.enabled`` and
``hooks.disabled``) decides, and only an enabled directory's ``handler.py`` is imported (under
the private name ``hermes_hooks.<name>``). ``HOOK.yaml``:

- ``event``: ``pre_tool_call``, ``post_tool_call``, ``session_start`` or ``session_end``;
- ``match``: a glob over tool names (default ``*``; tool events only);
- ``timeout``: seconds, a number > 0 (default 10);
- ``description``: text, shown by ``hermes hooks list``.

``handler.py`` defines ``handle(event)``, a plain function (run in a worker thread) or a
coroutine function, receiving the event of :mod:`hermes_core._hooks.events`; on
``pre_tool_call`` it returns ``None``, a :class:`~hermes_core._specs.PreCallDirective` or a
mapping such as ``{"action": "block", "message": ...}``. An exception or a timeout blocks the
call, naming the hook directory.

Hook directories fail closed: one named in ``hooks.enabled`` that cannot be loaded (a broken
``HOOK.yaml``, no ``handler.py``, an import that fails) blocks the calls it would have seen,
each with a message naming the directory and its error: the tool calls its ``match`` glob
selects (``pre_tool_call``, ``post_tool_call``), or every call when its ``HOOK.yaml`` cannot be
read or its event is a session event (what it would have watched is the whole session).

A ``$HERMES_HOME/hooks`` that is the project's (``HERMES_HOME=./.hermes``, or a directory that
is a link into the project: :func:`~hermes_core._project_trust.project_owns`) holds project hook
directories: gated as project plugins are.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import sys
import traceback
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread

from hermes_core._config.claude_hooks import claude_event_hint
from hermes_core._errors import PluginError
from hermes_core._hooks.adapters import EventHook, adapter_for
from hermes_core._hooks.events import EVENTS, HookEvent
from hermes_core._hooks.shell import answered_directive
from hermes_core._plugin_names import normalize_name
from hermes_core._plugins.candidates import Candidate
from hermes_core._plugins.gate import gate
from hermes_core._plugins.manifest import (
    Manifest,
    ManifestError,
    key_line,
    read_manifest_data,
)
from hermes_core._plugins.records import LOADABLE, PluginStatus
from hermes_core._project_trust import gate_is_open, project_owns
from hermes_core._shown import did_you_mean, shown

if TYPE_CHECKING:
    from ruamel.yaml import YAML

    from hermes_core._config import Config
    from hermes_core._paths import Environment

__all__ = [
    "HANDLER_FILE",
    "HOOK_FILE",
    "HookDirectory",
    "HookManifest",
    "gated_warning",
    "hook_directory_plugins",
    "load_hook_directories",
    "plan_hook_directories",
    "refusing_plugins",
    "why_gated",
]

HOOK_FILE: Final = "HOOK.yaml"
HANDLER_FILE: Final = "handler.py"
NAMESPACE: Final = "hermes_hooks"
DEFAULT_TIMEOUT: Final = 10.0
_KNOWN_KEYS: Final = frozenset({"event", "match", "timeout", "description"})


@dataclass(frozen=True)
class HookManifest:
    """What ``HOOK.yaml`` says."""

    event: HookEvent
    match: str = "*"
    timeout: float = DEFAULT_TIMEOUT
    description: str = ""
    warnings: tuple[str, ...] = ()


def hook_manifest(
    data: Any, where: str, line_of_key: Callable[[str], int | None] = lambda key: None
) -> HookManifest:
    """Validate a parsed ``HOOK.yaml``; errors name ``where``, the key's line (``line_of_key``)
    and the key."""

    def at(key: str) -> str:
        line = line_of_key(key)
        return f"{where}:{line}: {key}" if line is not None else f"{where}: {key}"

    if not isinstance(data, Mapping):
        raise ManifestError(f"{where}: must be a mapping of keys to values")
    event = data.get("event")
    if event not in EVENTS:
        hint = claude_event_hint(event, EVENTS, "'event: {}'")
        raise ManifestError(
            f"{at('event')}: must be one of {', '.join(EVENTS)}, not {shown(event)}"
            + (f": {hint}" if hint else "")
        )
    match = data.get("match", "*")
    if not isinstance(match, str) or not match:
        raise ManifestError(f"{at('match')}: must be a glob over tool names, not {shown(match)}")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    try:
        number = float(timeout)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(timeout, bool) or not (0 < number < math.inf):
        raise ManifestError(
            f"{at('timeout')}: must be a number of seconds > 0, not {shown(timeout)}"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ManifestError(f"{at('description')}: must be text, not {shown(description)}")
    unknown = sorted(str(key) for key in data if key not in _KNOWN_KEYS)
    warnings = tuple(
        f"{where}: unknown key {shown(key)} ignored.{did_you_mean(key, _KNOWN_KEYS)}"
        for key in unknown
    )
    return HookManifest(event, match, number, description, warnings)


@dataclass
class HookDirectory:
    """One hook directory and what became of it: a row of ``hermes hooks list``."""

    name: str
    path: Path
    status: PluginStatus
    message: str | None = None
    manifest: HookManifest | None = None
    handler: Callable[[dict[str, Any]], Any] | None = field(default=None, repr=False)
    traceback: str | None = None
    wanted: bool = False
    """Named in ``hooks.enabled`` and let through by the gate: when it cannot load, the calls
    it would have seen are blocked."""

    @property
    def loadable(self) -> bool:
        """Whether the gate lets its ``handler.py`` be imported."""
        return self.status in LOADABLE

    def fail(self, message: str, trace: str | None = None) -> None:
        """Mark the directory as failed with ``message``."""
        self.status = "error"
        self.message = message
        self.traceback = trace
        self.handler = None

    def to_json(self) -> dict[str, Any]:
        """The object printed by ``hermes hooks list --json``."""
        manifest = self.manifest
        return {
            "name": self.name,
            "path": str(self.path),
            "status": self.status,
            "event": manifest.event if manifest else None,
            "match": manifest.match if manifest else None,
            "timeout": manifest.timeout if manifest else None,
            "description": manifest.description if manifest else "",
            "message": self.message,
        }


def _read(directory: Path, yaml: YAML) -> tuple[HookManifest | None, str | None]:
    where = directory / HOOK_FILE
    try:
        manifest = hook_manifest(read_manifest_data(where, yaml=yaml), str(where), key_line(where))
    except ManifestError as exc:
        return None, f"broken {HOOK_FILE}: {exc}"
    if not (directory / HANDLER_FILE).is_file():
        return manifest, f"{directory}: no {HANDLER_FILE} beside {HOOK_FILE}"
    return manifest, None


def plan_hook_directories(
    config: Config, env: Environment, *, config_path: Path | None = None
) -> tuple[list[HookDirectory], list[str]]:
    """Every hook directory with its status, in name order, and the warnings found (unreadable
    directories, unknown keys); nothing is imported. ``config_path`` is the file ``config``
    was read from (``None``: built in code), which may enable project hook directories only
    when it is not the project's."""
    from hermes_core._plugins.loader import config_trusted_for_project
    from hermes_core._yaml_limits import manifest_yaml

    root = env.hooks_dir
    warnings: list[str] = []
    try:
        entries = sorted(root.iterdir(), key=lambda entry: entry.name)
    except FileNotFoundError:
        return [], warnings
    except OSError as exc:
        return [], [f"hook directories: cannot read {root}: {exc.strerror or exc}"]
    yaml = manifest_yaml()
    found: list[HookDirectory] = []
    enabled = {normalize_name(name) for name in config.hooks.enabled}
    trusted = config_trusted_for_project(env, config_path)
    for entry in entries:
        if entry.name.startswith(("_", ".")):
            continue
        try:
            if not entry.is_dir() or not (entry / HOOK_FILE).is_file():
                continue
        except OSError as exc:
            warnings.append(f"hook directories: cannot read {entry}: {exc.strerror or exc}")
            continue
        name = normalize_name(entry.name)
        manifest, error = _read(entry, yaml)
        candidate = Candidate(
            source="project" if project_owns(env, entry) else "user",
            name=name,
            path=entry,
            manifest=Manifest(name=name, description=manifest.description) if manifest else None,
            directory=entry,
            error=error,
        )
        status, message = gate(
            candidate,
            config.hooks,
            env,
            project_enabled=gate_is_open(env),
            config_trusted_for_project=trusted,
            section="hooks",
        )
        if manifest is not None and status != "disabled":
            warnings.extend(manifest.warnings)
        wanted = status in LOADABLE or (status == "error" and name in enabled)
        found.append(HookDirectory(name, entry, status, message, manifest, wanted=wanted))
        if status == "gated" and name in enabled:
            warnings.append(gated_warning(found[-1]))
    return found, warnings


def why_gated(directory: HookDirectory) -> str:
    """``hook directory 'x' (project, /path) is gated: set HERMES_ENABLE_PROJECT_PLUGINS=1
    ...``: worded as :func:`~hermes_core._plugins.explain.why_not_loaded` words a plugin's."""
    where = f"project, {directory.path}"
    return f"hook directory {directory.name!r} ({where}) is gated: {directory.message}"


def gated_warning(directory: HookDirectory) -> str:
    """The warning for a gated project hook directory that ``hooks.enabled`` names, so that
    the user learns at start why it never runs, as for a gated plugin
    (:func:`~hermes_core._plugins.explain.gated_warning`); a gated one nothing enables is no
    news: a cloned project's hook directories are gated by design."""
    return f"{directory.name} is enabled but will not load: {why_gated(directory)}"


def _import_handler(directory: HookDirectory) -> Callable[[dict[str, Any]], Any]:
    module_name = f"{NAMESPACE}.{directory.name.replace('-', '_')}"
    path = directory.path / HANDLER_FILE
    if NAMESPACE not in sys.modules:
        package = types.ModuleType(NAMESPACE, "Private namespace of hermes-core hook directories.")
        package.__path__ = []
        sys.modules[NAMESPACE] = package
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    handle = getattr(module, "handle", None)
    if not callable(handle):
        raise TypeError(f"{path} defines no handle(event) function")
    return handle  # type: ignore[no-any-return]


def load_hook_directories(
    config: Config, env: Environment, *, strict: bool = False, config_path: Path | None = None
) -> tuple[list[HookDirectory], list[str]]:
    """:func:`plan_hook_directories`, then import the ``handler.py`` of each enabled one.

    A failure is recorded on its directory (``error``), unless ``strict``: then the first
    error, of discovery or import, raises :class:`~hermes_core._errors.PluginError` naming the
    hook directory.
    """
    directories, warnings = plan_hook_directories(config, env, config_path=config_path)
    for directory in directories:
        if directory.status == "error" and strict:
            raise PluginError(f"hook directory {directory.name}", directory.message or "error")
        if not directory.loadable:
            continue
        try:
            directory.handler = _import_handler(directory)
        except (Exception, SystemExit) as exc:
            message = f"import failed: {type(exc).__name__}: {exc}"
            directory.fail(message, traceback.format_exc())
            if strict:
                raise PluginError(f"hook directory {directory.name}", message) from exc
    warnings += [load_failure(d) for d in directories if d.wanted and d.status == "error"]
    return directories, warnings


def load_failure(directory: HookDirectory) -> str:
    """The warning for an enabled ``directory`` that failed to load: its calls are blocked."""
    return (
        f"hook directory {directory.name!r} ({directory.path}) failed to load: "
        f"{directory.message}; the calls it would see are blocked"
    )


class HandlerAction:
    """Calls one directory's ``handle(event)``: awaited, or in a worker thread. A mapping it
    returns is read as a shell hook's printed directive is (``{}`` lets the call go on)."""

    def __init__(self, handle: Callable[[dict[str, Any]], Any]) -> None:
        self.handle = handle
        self.is_async = inspect.iscoroutinefunction(handle)

    async def __call__(self, event: dict[str, Any]) -> Any:
        if self.is_async:
            value = await self.handle(event)
        else:
            value = await anyio.to_thread.run_sync(
                partial(self.handle, event), abandon_on_cancel=True
            )
            if inspect.isawaitable(value):
                value = await value
        if isinstance(value, Mapping) and event.get("event") == "pre_tool_call":
            shown_value = json.dumps(value, ensure_ascii=False, default=repr)
            return answered_directive(value, f"it returned an unknown directive: {shown_value}")
        return value


def hook_directory_plugins(directories: list[HookDirectory]) -> list[tuple[str, EventHook]]:
    """A plugin object per loaded directory, with its registration name, in the order to
    register them (the first by name runs first)."""
    made: list[tuple[str, EventHook]] = []
    for directory in directories:
        manifest = directory.manifest
        if directory.handler is None or manifest is None:
            continue
        owner = f"hook directory {directory.name!r}"
        action = HandlerAction(directory.handler)
        adapter = adapter_for(
            manifest.event,
            owner,
            _remedy(directory),
            manifest.timeout,
            manifest.match,
            action,
        )
        made.append((f"hook-directory:{directory.name}", adapter))
    made.reverse()
    return made


def _remedy(directory: HookDirectory) -> str:
    """What a failure of the directory's hook says to do."""
    return f"fix or disable it (hermes hooks disable {directory.name})"


def refusing_plugins(directories: list[HookDirectory]) -> list[tuple[str, EventHook]]:
    """A ``pre_tool_call`` plugin object per wanted directory that failed to load, blocking
    the calls it would have seen (see the module docstring), with its registration name."""
    made: list[tuple[str, EventHook]] = []
    for directory in directories:
        if not (directory.wanted and directory.status == "error"):
            continue
        manifest = directory.manifest
        tool_event = manifest is not None and manifest.event in ("pre_tool_call", "post_tool_call")
        match = manifest.match if manifest is not None and tool_event else "*"
        owner = f"hook directory {directory.name!r}"
        refusal = {
            "action": "block",
            "message": (
                f"it failed to load ({directory.path}): {directory.message}; the calls it "
                "would see are blocked until it is fixed or listed in hooks.disabled"
            ),
        }
        action = partial(_refuse, refusal)
        made.append(
            (
                f"hook-directory-failed:{directory.name}",
                adapter_for(
                    "pre_tool_call", owner, _remedy(directory), DEFAULT_TIMEOUT, match, action
                ),
            )
        )
    made.reverse()
    return made


async def _refuse(refusal: dict[str, str], event: dict[str, Any]) -> dict[str, str]:
    return refusal

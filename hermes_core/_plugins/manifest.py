"""``plugin.yaml``: parse and validate a plugin's manifest, and normalize plugin names."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_core._plugin_names import normalize_name as normalize_name  # re-exported
from hermes_core._shown import did_you_mean, shown

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from ruamel.yaml import YAML

MANIFEST_FILE = "plugin.yaml"
_DUPLICATE = re.compile(r'(found duplicate key ".*?") with value ')
PluginKind = Literal["general", "backend", "toolset"]
"""``backend``: provides a search backend, connector gateway or approval policy; ``toolset``:
provides tools; ``general``: anything else. A bundled ``backend`` or ``toolset`` plugin is
enabled by default (the gate); elsewhere the kind only describes the plugin."""

_VALID_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")
_STRING_KEYS = ("version", "description", "author", "homepage", "license")
_LIST_KEYS = (
    "provides_tools",
    "provides_hooks",
    "requires_env",
    "requires_plugins",
)
KNOWN_KEYS = frozenset({"name", "kind", "requires_hermes", *_STRING_KEYS, *_LIST_KEYS})


class ManifestError(ValueError):
    """A manifest that cannot be read or does not validate; the message names file and key."""


@dataclass(frozen=True)
class Manifest:
    """What a plugin says about itself, read before any of its code runs.

    ``name`` is normalized. ``warnings`` lists problems that do not stop the plugin (unknown keys).
    """

    name: str
    version: str | None = None
    description: str = ""
    author: str = ""
    kind: PluginKind = "general"
    provides_tools: tuple[str, ...] = ()
    provides_hooks: tuple[str, ...] = ()
    requires_env: tuple[str, ...] = ()
    requires_plugins: tuple[str, ...] = ()
    requires_hermes: SpecifierSet | None = None
    homepage: str = ""
    license: str = ""
    warnings: tuple[str, ...] = field(default=(), compare=False)


def _string(data: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        problems.append(f"{key}: must be a string, not {type(value).__name__}")
        return None
    return str(value)


def _names(data: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        problems.append(f"{key}: must be a list of names (write [{shown(value)}])")
    elif not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.append(f"{key}: must be a list of strings")
    else:
        return tuple(value)
    return ()


def manifest_from_mapping(
    data: Any,
    *,
    where: str,
    default_name: str | None = None,
    line_of_key: Callable[[str], int | None] = lambda key: None,
) -> Manifest:
    """Validate a parsed manifest; ``where`` names its file in every error, which names every
    wrong value at once (a bad ``name`` alone, since nothing else can be said of its plugin),
    each with the line of its key (``line_of_key``), first line first.

    ``default_name`` is used when the mapping has no ``name`` (pip plugins, whose name is the
    entry-point name); a directory plugin must give one.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ManifestError(f"{where}: must be a mapping of keys to values")
    problems: list[str] = []
    raw_name = _string(data, "name", problems) or default_name
    if problems:
        raise ManifestError(_problems_at(where, problems, line_of_key))
    if not raw_name:
        raise ManifestError(f"{where}: name: required")
    name = normalize_name(raw_name)
    if not _VALID_NAME.fullmatch(name):
        problem = (
            f"name: {shown(raw_name)} is not a valid plugin name "
            "(letters, digits, '-', '_' and '.')"
        )
        raise ManifestError(_problems_at(where, [problem], line_of_key))
    kind = data.get("kind", "general")
    if kind not in ("general", "backend", "toolset"):
        problems.append(f"kind: must be 'general', 'backend' or 'toolset', not {shown(kind)}")
        kind = "general"
    requires_hermes = _specifier(_string(data, "requires_hermes", problems), problems)
    unknown = sorted(str(key) for key in data if key not in KNOWN_KEYS)
    manifest = Manifest(
        name=name,
        version=_string(data, "version", problems),
        description=_string(data, "description", problems) or "",
        author=_string(data, "author", problems) or "",
        kind=kind,
        provides_tools=_names(data, "provides_tools", problems),
        provides_hooks=_names(data, "provides_hooks", problems),
        requires_env=_names(data, "requires_env", problems),
        requires_plugins=tuple(
            normalize_name(item) for item in _names(data, "requires_plugins", problems)
        ),
        requires_hermes=requires_hermes,
        homepage=_string(data, "homepage", problems) or "",
        license=_string(data, "license", problems) or "",
        warnings=_unknown_key_warnings(unknown, where),
    )
    if problems:
        raise ManifestError(_problems_at(where, problems, line_of_key))
    return manifest


def _problems_at(where: str, problems: list[str], line_of_key: Callable[[str], int | None]) -> str:
    """``/p/plugin.yaml:3: kind: ...; line 5: requires_env: ...``: each problem (``key: why``)
    with the line of its key, by line; the file and the first line as editors read them."""
    lines = [line_of_key(problem.partition(":")[0]) for problem in problems]
    ordered = sorted(zip(lines, problems, strict=True), key=lambda pair: pair[0] or 1 << 30)
    parts = []
    for index, (line, problem) in enumerate(ordered):
        if line is None:
            parts.append(f"{where}: {problem}" if index == 0 else problem)
        else:
            parts.append(f"{where}:{line}: {problem}" if index == 0 else f"line {line}: {problem}")
    return "; ".join(parts)


def _specifier(text: str | None, problems: list[str]) -> SpecifierSet | None:
    if not text:
        return None
    # Imported here: a manifest rarely sets it, and every command reads the manifests.
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        problems.append(
            f"requires_hermes: {shown(text)} is not a version specifier (e.g. '>=0.1,<1')"
        )
        return None


_MAX_KEY_WARNINGS = 10


def _unknown_key_warnings(unknown: list[str], where: str) -> tuple[str, ...]:
    """One warning per unknown key, each key shortened and followed by the known key it is
    closest to (a mistyped ``requires_env`` drops a requirement), at most
    ``_MAX_KEY_WARNINGS`` of them."""
    listed = []
    for key in unknown[:_MAX_KEY_WARNINGS]:
        hint = did_you_mean(key, KNOWN_KEYS)
        listed.append(f"{where}: unknown key {shown(key)} ignored" + (f".{hint}" if hint else ""))
    if len(unknown) > _MAX_KEY_WARNINGS:
        listed.append(f"{where}: {len(unknown) - _MAX_KEY_WARNINGS} more unknown keys ignored")
    return tuple(listed)


def load_manifest(
    path: Path, *, default_name: str | None = None, yaml: YAML | None = None
) -> Manifest:
    """Read and validate the manifest file at ``path`` with ``yaml`` (a
    :func:`~hermes_core._yaml_limits.manifest_yaml`; a new one when not given).

    At most :data:`~hermes_core._yaml_limits.MANIFEST_MAX_BYTES` are read: a larger file, or
    anything but a regular file, is refused unread. Raises :class:`ManifestError` naming the
    file (and the line for YAML syntax errors and refused aliases, nesting or numbers).
    """
    data = read_manifest_data(path, yaml=yaml)
    return manifest_from_mapping(
        data, where=str(path), default_name=default_name, line_of_key=key_line(path)
    )


def key_line(path: Path) -> Callable[[str], int | None]:
    """The line of a top-level key of the YAML file at ``path``: read again, keeping lines,
    only for an error (the manifest loader's parse, cached, has none)."""

    def line(key: str) -> int | None:
        from ruamel.yaml.error import YAMLError

        from hermes_core._yaml_layout import line_of, round_trip_yaml
        from hermes_core._yaml_limits import (
            MANIFEST_MAX_BYTES,
            YamlFileError,
            limited,
            load_limited,
            read_limited,
        )

        try:
            text = read_limited(path, MANIFEST_MAX_BYTES)
            document = load_limited(limited(round_trip_yaml()), text or "")
        except (YamlFileError, YAMLError):
            return None
        return line_of(document, (key,))

    return line


def read_manifest_data(path: Path, *, yaml: YAML | None = None) -> Any:
    """The parsed YAML of a manifest-like file (``plugin.yaml``, a hook directory's
    ``HOOK.yaml``), read within the limits :func:`load_manifest` describes; a
    :class:`ManifestError` naming the file (and the line) when it cannot be."""
    from ruamel.yaml.error import YAMLError

    from hermes_core._yaml_limits import (
        MANIFEST_MAX_BYTES,
        YamlFileError,
        YamlLimitError,
        read_limited,
        yaml_problem,
    )

    try:
        text = read_limited(path, MANIFEST_MAX_BYTES)
    except YamlFileError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    if text is None:
        raise ManifestError(f"{path}: cannot be read: no such file")
    try:
        return _parsed(text, yaml)
    except YAMLError as exc:
        line, problem = yaml_problem(exc)
        duplicate = _DUPLICATE.match(problem)
        if duplicate is not None:  # its values are built after the check: "[]" of any list
            problem = f"{duplicate.group(1)}: write each key once"
        at = f":{line + 1}" if line is not None else ""
        what = "" if isinstance(exc, YamlLimitError) else "not valid YAML: "
        raise ManifestError(f"{path}{at}: {what}{problem}") from None


# A host reads every manifest again at each start (a delegated task's host, an embedder's
# second host, each test), and the pure-Python parse is most of that; every loader here is a
# manifest_yaml(), so the text alone decides the data. Callers get a copy; a failed parse is
# not kept. Within a discovery, the parse is also kept between processes (manifest_cache).
_PARSED: dict[str, Any] = {}
_PARSED_KEPT = 128


def _parsed(text: str, yaml: YAML | None) -> Any:
    from hermes_core._plugins.manifest_cache import persistent_cache
    from hermes_core._yaml_limits import load_limited, manifest_yaml

    kept = persistent_cache()
    found = False
    data = _PARSED.get(text, _PARSED)
    if data is _PARSED:
        found, data = kept.get(text) if kept is not None else (False, None)
        if not found:
            data = load_limited(yaml or manifest_yaml(), text)
        if len(_PARSED) >= _PARSED_KEPT:
            _PARSED.clear()
        _PARSED[text] = data
    if kept is not None and not found:  # parsed now, or earlier in this process
        kept.keep(text, data)
    return copy.deepcopy(data)

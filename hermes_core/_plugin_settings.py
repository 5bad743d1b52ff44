"""Typed plugin settings: ``plugins.entries.<name>`` checked against a class the plugin declares.

A plugin declares its settings as a dataclass (or a
:class:`~hermes_core._config.sections.Section` subclass) and gets them with
:meth:`PluginContext.settings_as <hermes_core._specs.PluginContext.settings_as>`::

    @dataclass(frozen=True)
    class FileSettings:
        max_read_bytes: Annotated[int, Ge(1)] = 100_000
        mode: Literal["fast", "safe"] = "safe"
        roots: list[str] = field(default_factory=list)

The keys are checked by the configuration's own rules (:mod:`hermes_core._config.sections`):
the same types, unknown keys refused with the closest known one, defaults for what is missing.
In a dataclass a key's ``Annotated`` metadata may be a bound of the ``annotated_types``
package (``Ge``, ``Gt``, ``Le``, ``Interval``), a check of the configuration
(``Number``, ``Before``, ``After``) or a plain function that takes the value as written and
returns it (or what the key keeps), raising ``ValueError`` with what was expected; a
``ValueError`` of the dataclass's ``__post_init__`` is a problem of the whole entry. Whatever
is refused is a :class:`~hermes_core._errors.PluginSettingsError` naming the plugin, the file and
line of ``config.yaml`` (when the configuration was read from one), the key and what was
expected.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from hermes_core._config.errors import located_problems, problems_text, source_of
from hermes_core._config.models import MOVED_SECTIONS, Config
from hermes_core._config.sections import (
    After,
    Before,
    InvalidConfig,
    Loc,
    Number,
    Problem,
    Section,
    section_keys,
)
from hermes_core._errors import PluginSettingsError
from hermes_core._plugin_names import normalize_name

__all__ = [
    "checked_settings",
    "entry_name",
    "moved_settings",
    "setting_problem",
    "settings_section",
]

T = TypeVar("T")

_BOUNDS = ("ge", "gt", "le", "lt")


def _is_bound(item: Any) -> bool:
    return type(item).__module__ == "annotated_types" and any(
        hasattr(item, name) for name in _BOUNDS
    )


def _number(base: Any, bounds: list[Any]) -> Before:
    """The :func:`Number` check of the ``annotated_types`` bounds of one key."""
    found: dict[str, float] = {}
    for item in bounds:
        for name in _BOUNDS:
            value = getattr(item, name, None)
            if value is not None:
                found[name] = value
    if "lt" in found:
        raise TypeError("a setting's upper bound is written Le(...) (inclusive), not Lt(...)")
    return Number(
        low=found.get("ge"), high=found.get("le"), above=found.get("gt"), whole=base is int
    )


def _setting(annotation: Any) -> Any:
    """A dataclass field's annotation in the configuration's terms: ``annotated_types`` bounds
    become a :func:`Number` check and plain functions :class:`Before` checks, at every depth
    (``list[Annotated[str, check]]``)."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        base, *metadata = arguments
        bounds = [item for item in metadata if _is_bound(item)]
        checks: list[Any] = [_number(base, bounds)] if bounds else []
        for item in metadata:
            if isinstance(item, Before | After):
                checks.append(item)
            elif callable(item) and not isinstance(item, type):
                checks.append(Before(item))
        base = _setting(base)
        return typing.Annotated[(base, *checks)] if checks else base
    if origin in (list, dict) or origin in (typing.Union, types.UnionType):
        converted = tuple(_setting(argument) for argument in arguments)
        if converted != arguments:
            if origin is list:
                return list[converted[0]]  # type: ignore[valid-type]
            if origin is dict:
                return dict[converted[0], converted[1]]  # type: ignore[valid-type]
            return typing.Union[converted]  # noqa: UP007  # a union made at run time
    return annotation


def settings_section(kind: type[Any]) -> type[Section]:
    """The configuration section that checks the settings declared by ``kind`` (a dataclass or
    a :class:`Section` subclass, returned as it is); made once per class."""
    if isinstance(kind, type) and issubclass(kind, Section):
        return kind
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        raise TypeError(
            f"typed settings are declared by a dataclass or a config Section subclass, not {kind!r}"
        )
    made = kind.__dict__.get("__settings_section__")
    if isinstance(made, type) and issubclass(made, Section):
        return made
    hints = typing.get_type_hints(kind, include_extras=True)
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": kind.__module__}
    for item in dataclasses.fields(kind):
        if not item.init:
            continue
        namespace["__annotations__"][item.name] = _setting(hints[item.name])
        if item.default is not dataclasses.MISSING:
            namespace[item.name] = item.default
        elif item.default_factory is not dataclasses.MISSING:
            namespace[item.name] = item.default_factory()
    section = type(f"{kind.__name__}Section", (Section,), namespace)
    section_keys(section)  # a key of a type the configuration has no rule for fails here
    type.__setattr__(kind, "__settings_section__", section)
    return section


def entry_name(config: Config, plugin: str | None, settings: Mapping[str, Any]) -> str:
    """The name of the plugin whose entry ``settings`` is: ``plugin`` when given, else the
    entry of ``config.plugins.entries`` that is ``settings``."""
    if plugin:
        return plugin
    for name, entry in config.plugins.entries.items():
        if entry is settings:
            return name
    return "?"


def moved_settings(config: Config, plugin: str) -> dict[str, Any]:
    """The settings of ``plugin``: its entry ``plugins.entries.<plugin>`` over the keys set in
    the deprecated top-level section that moved there (:data:`MOVED_SECTIONS`, still read for
    one release). The one rule for a key set in both places: the entry's value wins (what
    ``execute_code`` reads and what passes the scrub of a child process's environment)."""
    entry = dict(config.plugins.entries.get(normalize_name(plugin), {}))
    for section, target in MOVED_SECTIONS.items():
        if normalize_name(target.removeprefix("plugins.entries.")) == normalize_name(plugin):
            legacy = getattr(config, section)
            defaults = type(legacy)().model_dump()
            given = legacy.model_dump().items()
            entry = {**{key: value for key, value in given if value != defaults[key]}, **entry}
    return entry


def _spelled(document: Any, plugin: str) -> str:
    """``plugin``'s entry key as written in the document (``settings_demo``)."""
    entries = document.get("plugins", {}) if isinstance(document, dict) else {}
    entries = entries.get("entries", {}) if isinstance(entries, dict) else {}
    if isinstance(entries, dict):
        for key in entries:
            if isinstance(key, str) and normalize_name(key) == normalize_name(plugin):
                return key
    return plugin


def _error(plugin: str, exc: InvalidConfig, config: Config) -> PluginSettingsError:
    source = source_of(config)
    document = source.document if source is not None else {}
    path = source.path if source is not None else None
    prefix: Loc = ("plugins", "entries", _spelled(document, plugin))
    problems = located_problems(exc, document, prefix)
    line, key, detail = problems[0]
    if len(problems) == 1:
        where = (f"{path}:{line}: " if line is not None else f"{path}: ") if path else ""
        message = f"{where}{key}: {detail}"
    else:
        message = problems_text(problems, path)
    return PluginSettingsError(plugin, message, path=path, line=line, key=key)


def checked_settings(kind: type[T], settings: Mapping[str, Any], config: Config, plugin: str) -> T:
    """``settings`` (the entry of ``plugin``) checked and converted to ``kind``: see the module
    docstring. Raises :class:`~hermes_core._errors.PluginSettingsError`."""
    section = settings_section(kind)
    try:
        checked = section.model_validate(dict(settings))
    except InvalidConfig as exc:
        raise _error(plugin, exc, config) from None
    if section is kind:
        return checked  # type: ignore[return-value]
    try:
        return kind(**dict(checked))
    except ValueError as exc:  # the dataclass's __post_init__ checks the keys together
        raise _error(plugin, InvalidConfig([Problem((), str(exc))]), config) from None


def setting_problem(config: Config, plugin: str, key: str, detail: str) -> PluginSettingsError:
    """The error of the key ``key`` of ``plugin``'s entry that the plugin's own code refuses
    (a command line that cannot be split), named as :func:`checked_settings` names what it
    refuses: the file and line of ``config.yaml``, the dotted key and ``detail``. A plugin
    whose one tool the key is for leaves that tool out and logs this as a warning."""
    return _error(plugin, InvalidConfig([Problem((key,), detail)]), config)

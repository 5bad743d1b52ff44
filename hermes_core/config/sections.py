"""The base of the configuration's sections: typed keys, checked whenever a section is made.

A section is a class of annotated keys with their defaults::

    class ApprovalsConfig(Section):
        policy: str = "annotations"
        timeout: Annotated[float, Number(above=0)] = 300.0

made from a mapping with :meth:`Section.model_validate`, or from keyword arguments, and checked
then and on every assignment. Unknown keys are refused (with the closest known one suggested);
each value must be of its key's type (``str``, ``bool``, ``int``, ``float``, a ``Literal``,
``X | None``, ``list[X]``, ``dict[str, X]``, another section, ``Any``), after the
:class:`Before` checks of its ``Annotated`` metadata and before its :class:`After` checks; a
section's :meth:`Section._validate` then checks its keys together. Every problem found is
reported, each at its location (the keys and list indexes leading to it) in the user's words,
in one :class:`InvalidConfig`.

The standard library is all it takes: the configuration is read by every command, and pydantic,
which it was written with before, cost about 150 ms of each (docs/performance.md). A section's
rules are read from its annotations once, when the first one is made.
"""

from __future__ import annotations

import contextvars
import copy
import difflib
import math
import types
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple, Self

from hermes_core.shown import clipped, shown

Loc = tuple[int | str, ...]
"""Where a value is: the keys and list indexes that lead to it from the top of the file."""

Check = Callable[[Any, Loc, list["Problem"]], Any]
"""A key's rule: the value as the section keeps it, or :data:`_INVALID` after adding the
problems found to the list."""

_INVALID: Any = object()
_REQUIRED: Any = object()

WARNINGS_CONTEXT = "config_warnings"
"""The :meth:`Section.model_validate` context key under which values accepted with a fallback
are collected (:func:`fallback`)."""

_warnings_sink: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "config_warnings", default=None
)


class Problem(NamedTuple):
    """One problem of a configuration: where, and what is wrong there."""

    loc: Loc
    message: str


def key_text(loc: Loc) -> str:
    """A location as the user writes the key: ``mcp_servers.git.args[2]``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{clipped(part)}" if text else clipped(part)
    return text


class InvalidConfig(ValueError):
    """Values that a section refuses: :attr:`problems`, each with its location.

    :func:`hermes_core.config.errors.validate_document` turns it into a
    :class:`~hermes_core.errors.ConfigError` naming the file and the line.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(
            "\n".join(
                f"{key_text(problem.loc)}: {problem.message}" if problem.loc else problem.message
                for problem in self.problems
            )
        )


def fallback(warning: Warning) -> None:
    """Report a value accepted with a fallback (``enabled: maybe`` read as ``auto``): to the
    loader collecting them (which adds the file and the line), or as a Python warning when a
    section is made directly."""
    sink = _warnings_sink.get()
    if sink is not None:
        sink.append(warning)
    else:
        warnings.warn(warning, stacklevel=4)


# --------------------------------------------------------------------------------------------
# Checks a key's annotation can carry


@dataclass(frozen=True)
class Before:
    """``Annotated`` metadata: ``check`` takes the value as written and returns what the key's
    type is then checked on; a ``ValueError`` it raises is the problem."""

    check: Callable[[Any], Any]


@dataclass(frozen=True)
class After:
    """``Annotated`` metadata: ``check`` takes the value of the key's type and returns what the
    section keeps; a ``ValueError`` it raises is the problem."""

    check: Callable[[Any], Any]


def Number(
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    whole: bool = False,
) -> Before:
    """A number written as a number (never a boolean or text) within bounds; a message says
    which. ``whole``: an integer (``5000.0`` is accepted as ``5000``)."""
    what = "a whole number" if whole else "a number"
    if low is not None and high is not None:
        what += f" between {low:g} and {high:g}"
    elif low is not None:
        what += f" of at least {low:g}"
    elif above is not None:
        what += f" greater than {above:g}"

    def check(value: Any) -> Any:
        try:
            good = (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and (not whole or float(value).is_integer())
                and (low is None or value >= low)
                and (high is None or value <= high)
                and (above is None or value > above)
            )
        except OverflowError:  # an integer too large for a float is out of every bound
            good = False
        if not good:
            raise ValueError(f"expected {what}, got {shown(value)}")
        return int(value) if whole else float(value)

    return Before(check)


# --------------------------------------------------------------------------------------------
# The rule of each type


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _refused(loc: Loc, problems: list[Problem], message: str) -> Any:
    problems.append(Problem(loc, message))
    return _INVALID


def _any(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    return value


def _text(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    if isinstance(value, str):
        return value
    return _refused(loc, problems, f"expected text, got {shown(value)}")


def _boolean(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    # YAML 1.2 reads `yes` and `on` as text; they still mean true here, as they always did.
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return _refused(loc, problems, f"expected true or false, got {shown(value)}")


def _checked_by(check: Callable[[Any], Any]) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        try:
            return check(value)
        except ValueError as exc:
            return _refused(loc, problems, str(exc))

    return rule


def _one_of(options: tuple[Any, ...]) -> Check:
    quoted = [repr(option) for option in options]
    expected = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        # `type(value)`: True is not 1, as a Literal tells them apart.
        if any(type(value) is type(option) and value == option for option in options):
            return value
        return _refused(loc, problems, f"expected one of {expected}, got {shown(value)}")

    return rule


def _optional(inner: Check) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        return None if value is None else inner(value, loc, problems)

    return rule


def _list_of(item: Check) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, list | tuple):
            return _refused(loc, problems, f"expected a list, got {shown(value)}")
        items = [item(element, (*loc, index), problems) for index, element in enumerate(value)]
        return _INVALID if any(element is _INVALID for element in items) else items

    return rule


def _mapping_of(item: Check) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if not isinstance(value, Mapping):
            return _refused(loc, problems, f"expected a mapping, got {shown(value)}")
        found: dict[str, Any] = {}
        good = True
        for key, element in value.items():
            if not isinstance(key, str):
                _refused((*loc, str(key)), problems, f"expected a text key, got {shown(key)}")
                good = False
                continue
            found[key] = item(element, (*loc, key), problems)
            good = good and found[key] is not _INVALID
        return found if good else _INVALID

    return rule


def _section(kind: type[Section]) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if isinstance(value, kind):
            return value
        if not isinstance(value, Mapping):
            return _refused(loc, problems, f"expected a mapping, got {shown(value)}")
        made = kind.__new__(kind)
        return made if made._fill(value, loc, problems) else _INVALID

    return rule


def _annotated(inner: Check, metadata: Sequence[Any]) -> Check:
    before = [item.check for item in metadata if isinstance(item, Before)]
    after = [item.check for item in metadata if isinstance(item, After)]

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        try:
            for check in before:
                value = check(value)
        except ValueError as exc:
            return _refused(loc, problems, str(exc))
        value = inner(value, loc, problems)
        if value is _INVALID:
            return _INVALID
        try:
            for check in after:
                value = check(value)
        except ValueError as exc:
            return _refused(loc, problems, str(exc))
        return value

    return rule


def unwrap_optional(annotation: Any) -> Any:
    """``X | None`` -> ``X`` (and ``Annotated[X, ...]`` -> ``X``)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return unwrap_optional(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(options) == 1:
            return unwrap_optional(options[0])
    return annotation


def rule_of(annotation: Any) -> Check:
    """The check of a key annotated with ``annotation``; ``TypeError`` for a type that has
    none (a mistake in a section's definition, found when the first one is made)."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotated(rule_of(arguments[0]), arguments[1:])
    if annotation is Any:
        return _any
    if annotation is str:
        return _text
    if annotation is bool:
        return _boolean
    if annotation is int:
        return _checked_by(Number(whole=True).check)
    if annotation is float:
        return _checked_by(Number().check)
    if origin is Literal:
        return _one_of(arguments)
    if origin in (typing.Union, types.UnionType):
        options = [argument for argument in arguments if argument is not type(None)]
        if len(options) == 1 and len(arguments) == 2:
            return _optional(rule_of(options[0]))
    if origin is list and len(arguments) == 1:
        return _list_of(rule_of(arguments[0]))
    if origin is dict and len(arguments) == 2 and arguments[0] is str:
        return _mapping_of(rule_of(arguments[1]))
    if isinstance(annotation, type) and issubclass(annotation, Section):
        return _section(annotation)
    raise TypeError(f"a configuration key cannot be of type {annotation!r}")


# --------------------------------------------------------------------------------------------
# Sections


@dataclass(frozen=True)
class Key:
    """One key of a section: its annotation (resolved), its default (a marker that
    :attr:`required` tells apart when it has none) and its rule."""

    name: str
    annotation: Any
    default: Any
    check: Check
    null_is_default: bool
    """Whether ``key: null`` (a section or mapping whose lines are all commented out) means the
    default, rather than the value null."""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


def section_keys(kind: type[Section]) -> Mapping[str, Key]:
    """The keys of a section class, in the order they are declared."""
    keys: dict[str, Key] | None = kind.__dict__.get("_keys")
    if keys is None:
        keys = {}
        for name, annotation in typing.get_type_hints(kind, include_extras=True).items():
            if name.startswith("_") or typing.get_origin(annotation) is ClassVar:
                continue
            plain = unwrap_optional(annotation)
            keys[name] = Key(
                name,
                annotation,
                getattr(kind, name, _REQUIRED),
                rule_of(annotation),
                typing.get_origin(plain) is dict
                or (isinstance(plain, type) and issubclass(plain, Section)),
            )
        type.__setattr__(kind, "_keys", keys)
    return keys


def unknown_key(key: object, known: Sequence[str]) -> str:
    """The message for a key the section does not have, with the closest known one."""
    unknown = str(key)
    hint = difflib.get_close_matches(unknown, known, n=1) if len(unknown) < 100 else []
    text = "unknown key"
    if hint:
        text += f", did you mean {hint[0]!r}?"
    if known:
        text += f" (known keys: {', '.join(sorted(known))})"
    return text


def _fresh(default: Any) -> Any:
    """A default for one section: a mutable one is never shared between two."""
    if isinstance(default, list | dict):
        return copy.copy(default)
    if isinstance(default, Section):
        return copy.deepcopy(default)
    return default


def _dumped(value: Any) -> Any:
    if isinstance(value, Section):
        return value.model_dump()
    if isinstance(value, list):
        return [_dumped(item) for item in value]
    if isinstance(value, dict):
        return {key: _dumped(item) for key, item in value.items()}
    return value


@typing.dataclass_transform(kw_only_default=True)
class Section:
    """A configuration section; see the module docstring. Subclasses declare keys as annotated
    class attributes with their defaults (a key without one is required) and may override
    :meth:`_validate`. Made with keyword arguments or :meth:`model_validate`, it raises
    :class:`InvalidConfig` for anything its keys refuse; an assignment is checked the same way.
    """

    _keys: ClassVar[dict[str, Key]]

    def __init__(self, **values: Any) -> None:
        problems: list[Problem] = []
        self._fill(values, (), problems)
        if problems:
            raise InvalidConfig(problems)

    @classmethod
    def model_validate(cls, data: Any, *, context: Mapping[str, Any] | None = None) -> Self:
        """The section made from the mapping ``data`` (returned as it is when it is one
        already). With ``context[WARNINGS_CONTEXT]`` a list, the warnings of values accepted
        with a fallback are appended to it instead of issued."""
        sink = (context or {}).get(WARNINGS_CONTEXT)
        token = _warnings_sink.set(sink if isinstance(sink, list) else None)
        problems: list[Problem] = []
        try:
            made = _section(cls)(data, (), problems)
        finally:
            _warnings_sink.reset(token)
        if problems:
            raise InvalidConfig(problems)
        return made  # type: ignore[no-any-return]

    def _fill(self, values: Mapping[Any, Any], loc: Loc, problems: list[Problem]) -> bool:
        """Set every key from ``values`` (or its default), adding what is wrong to
        ``problems``; whether all was right."""
        keys = section_keys(type(self))
        before = len(problems)
        for name in values:
            if name not in keys:
                where = name if isinstance(name, int | str) else str(name)
                problems.append(Problem((*loc, where), unknown_key(name, list(keys))))
        for name, key in keys.items():
            value = values.get(name, _REQUIRED)
            if value is None and key.null_is_default:
                value = _REQUIRED
            if value is not _REQUIRED:
                value = key.check(value, (*loc, name), problems)
            elif key.required:
                problems.append(Problem((*loc, name), "this key is required"))
                continue
            else:
                value = _fresh(key.default)
            object.__setattr__(self, name, value)
        if len(problems) > before:
            return False
        try:
            self._validate()
        except ValueError as exc:
            problems.append(Problem(loc, str(exc)))
            return False
        return True

    def _validate(self) -> None:
        """Check the keys together, once each is valid; a ``ValueError`` is the problem. It
        may change a key's value with ``object.__setattr__``."""

    def __setattr__(self, name: str, value: Any) -> None:
        keys = section_keys(type(self))
        key = keys.get(name)
        if key is None:
            raise InvalidConfig([Problem((name,), unknown_key(name, list(keys)))])
        problems: list[Problem] = []
        checked = key.check(value, (name,), problems)
        if problems:
            raise InvalidConfig(problems)
        old = self.__dict__.get(name, _REQUIRED)
        object.__setattr__(self, name, checked)
        try:
            self._validate()
        except ValueError as exc:
            object.__setattr__(self, name, old)
            raise InvalidConfig([Problem((), str(exc))]) from None

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The keys and their values, sections as mappings (every value is one JSON can hold,
        so ``mode="json"`` gives the same)."""
        return {name: _dumped(getattr(self, name)) for name in section_keys(type(self))}

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with the keys of ``update`` changed, checked like any section."""
        values = {name: getattr(self, name) for name in section_keys(type(self))}
        return type(self).model_validate({**values, **(update or {})})

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for name in section_keys(type(self)):
            yield name, getattr(self, name)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Section) and type(other) is type(self) and dict(self) == dict(other)
        )

    def __repr__(self) -> str:
        shown_keys = ", ".join(f"{name}={value!r}" for name, value in self)
        return f"{type(self).__name__}({shown_keys})"

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dict


__all__ = [
    "WARNINGS_CONTEXT",
    "After",
    "Before",
    "InvalidConfig",
    "Key",
    "Loc",
    "Number",
    "Problem",
    "Section",
    "fallback",
    "key_text",
    "rule_of",
    "section_keys",
    "unknown_key",
    "unwrap_optional",
]

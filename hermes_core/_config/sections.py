"""The base of the configuration's sections: typed keys, checked whenever a section is made.

A section is a class of annotated keys with their defaults::

    class ApprovalsConfig(Section):
        policy: str = "annotations"
        timeout: Annotated[float, Number(above=0)] = 300.0

made from a mapping with :meth:`Section.model_validate`, or from keyword arguments, and checked
then and on every assignment. Unknown keys are refused (with the closest known one suggested);
each value must be of its key's type (``str``, ``bool``, ``int``, ``float``, a ``Literal``,
``X | None``, ``list[X]``, ``dict[str, X]`` (null being an empty one), another section,
``Any``), after the
:class:`Before` checks of its ``Annotated`` metadata and before its :class:`After` checks; a
section's :meth:`Section._validate` then checks its keys together. Every problem found is
reported, each at its location (the keys and list indexes leading to it) in the user's words,
in one :class:`InvalidConfig`.

The standard library is all it takes: the configuration is read by every command, and pydantic,
which it was written with before, cost about 150 ms of each (docs/performance.md). A section's
rules are read from its annotations once, when the first one is made.
"""

from __future__ import annotations

import copy
import difflib
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

from hermes_core._config.checks import (
    INVALID,
    After,
    Before,
    Check,
    Number,
    annotated,
    any_rule,
    boolean_rule,
    checked_by,
    list_of,
    mapping_of,
    one_of,
    optional,
    refused,
    text_rule,
    unwrap_optional,
)
from hermes_core._config.problems import (
    WARNINGS_CONTEXT,
    InvalidConfig,
    Loc,
    Problem,
    fallback,
    key_text,
    warnings_to,
)
from hermes_core._shown import shown

_REQUIRED: Any = object()


def _section(kind: type[Section]) -> Check:
    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if isinstance(value, kind):
            return value
        if not isinstance(value, Mapping):
            return refused(loc, problems, f"expected a mapping, got {shown(value)}")
        made = kind.__new__(kind)
        return made if made._fill(value, loc, problems) else INVALID

    return rule


def rule_of(annotation: Any) -> Check:
    """The check of a key annotated with ``annotation``; ``TypeError`` for a type that has
    none (a mistake in a section's definition, found when the first one is made)."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return annotated(rule_of(arguments[0]), arguments[1:])
    if annotation is Any:
        return any_rule
    if annotation is str:
        return text_rule
    if annotation is bool:
        return boolean_rule
    if annotation is int:
        return checked_by(Number(whole=True).check)
    if annotation is float:
        return checked_by(Number().check)
    if origin is Literal:
        return one_of(arguments)
    if origin in (typing.Union, types.UnionType):
        options = [argument for argument in arguments if argument is not type(None)]
        if len(options) == 1 and len(arguments) == 2:
            return optional(rule_of(options[0]))
    if origin is list and len(arguments) == 1:
        return list_of(rule_of(arguments[0]))
    if origin is dict and len(arguments) == 2 and arguments[0] is str:
        return mapping_of(rule_of(arguments[1]))
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
    """Whether ``key: null`` (a section whose lines are all commented out) means the default,
    rather than the value null (a list's or mapping's rule reads null as empty)."""

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
                isinstance(plain, type) and issubclass(plain, Section),
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


def key_paths(kind: type[Section], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key of ``kind`` and of the sections it holds (not those of a mapping of
    sections, whose keys have a name of the user's in their path), as paths, in order."""
    for name, key in section_keys(kind).items():
        path = (*prefix, name)
        yield path
        plain = unwrap_optional(key.annotation)
        if isinstance(plain, type) and issubclass(plain, Section):
            yield from key_paths(plain, path)


def misplaced(problem: Problem, paths: Sequence[tuple[str, ...]]) -> Problem:
    """``problem`` about an unknown key that is a key elsewhere (``paths``: every key's path)
    saying where: ``unknown key here, did you mean 'approvals.policy'?``, its paths under the
    section it was written in if it has any there, at most four; else ``problem`` as it is."""
    name = problem.loc[-1] if problem.loc else None
    if not isinstance(name, str) or not problem.message.startswith("unknown key"):
        return problem
    where = tuple(str(part) for part in problem.loc)
    found = [path for path in paths if path[-1] == name and path != where]
    near = [path for path in found if path[: len(where) - 1] == where[:-1]]
    found = near or found
    if not found or len(found) > 4:
        return problem
    named = ", ".join(repr(".".join(path)) for path in found)
    hint = f"did you mean {named}?" if len(found) == 1 else f"did you mean one of {named}?"
    known = problem.message.partition(" (known keys:")
    return Problem(problem.loc, f"unknown key here, {hint}{known[1]}{known[2]}")


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
        problems: list[Problem] = []
        with warnings_to(sink if isinstance(sink, list) else None):
            made = _section(cls)(data, (), problems)
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
    "key_paths",
    "key_text",
    "misplaced",
    "rule_of",
    "section_keys",
    "unknown_key",
    "unwrap_optional",
]

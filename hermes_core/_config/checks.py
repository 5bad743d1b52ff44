"""The rules of a section's keys: one for each type a key may have, and the checks its
``Annotated`` metadata may carry (:class:`Before`, :class:`After`, :func:`Number`).

A rule (:data:`Check`) takes a value and its location, and returns the value as the section
keeps it, or :data:`INVALID` after adding the problems found to the list. Which rule a key
gets is :func:`hermes_core._config.sections.rule_of`'s.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from hermes_core._config.problems import Loc, Problem
from hermes_core._shown import clipped, shown

Check = Callable[[Any, Loc, list["Problem"]], Any]
"""A key's rule: the value as the section keeps it, or :data:`INVALID` after adding the
problems found to the list."""

INVALID: Any = object()
"""What a rule returns for a value it refused."""


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


def http_url(value: object) -> str | None:
    """An :class:`After` check (or a plugin's plain one, given any value): ``value`` must be
    an ``http://`` or ``https://`` URL with a host and no spaces (``None`` passes; a URL whose
    scheme is a ``${VAR}`` reference is expanded and checked where it is used, one with
    references after its scheme, such as ``https://user:${PASS}@h``, is checked with them as
    they stand)."""
    if value is None or (isinstance(value, str) and "${" in value.partition("://")[0]):
        return value
    if not isinstance(value, str):  # a plugin's plain check gets the value as written
        raise ValueError(f"expected an http:// or https:// URL, got {shown(value)}")
    from urllib.parse import urlsplit

    from hermes_core._redaction import shown_url

    try:
        parts = urlsplit(value)
        host = parts.hostname  # none for "https://:8080"
    except ValueError:  # an unclosed IPv6 bracket
        host = None
    # A space is sent as %20, never as what was meant: the request goes nowhere.
    if host is None or parts.scheme not in ("http", "https") or any(c.isspace() for c in value):
        raise ValueError(f"expected an http:// or https:// URL, got {shown(shown_url(value))}")
    return value


def names_list(value: Any) -> Any:
    """A :class:`Before` check: lists of names must be YAML lists, a lone scalar is almost
    always a forgotten ``[...]``."""
    if isinstance(value, str | int | float | bool):
        raise ValueError(
            f"expected a list of names, got {shown(value)} (write [{clipped(str(value))}])"
        )
    return value


NamesList = Annotated[list[str], Before(names_list)]


def refused(loc: Loc, problems: list[Problem], message: str) -> Any:
    """Add the problem ``message`` at ``loc``; :data:`INVALID`."""
    problems.append(Problem(loc, message))
    return INVALID


def any_rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    """The rule of ``Any``: every value."""
    return value


def text_rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    """The rule of ``str``."""
    if isinstance(value, str):
        return value
    return refused(loc, problems, f"expected text, got {shown(value)}")


def boolean_rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
    """The rule of ``bool`` (also ``yes``, ``on``, ``1`` and their opposites)."""
    # YAML 1.2 reads `yes` and `on` as text; they still mean true here, as they always did.
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return refused(loc, problems, f"expected true or false, got {shown(value)}")


def checked_by(check: Callable[[Any], Any]) -> Check:
    """The rule of a check whose ``ValueError`` is the problem."""

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        try:
            return check(value)
        except ValueError as exc:
            return refused(loc, problems, str(exc))

    return rule


def one_of(options: tuple[Any, ...]) -> Check:
    """The rule of ``Literal[options]``."""
    quoted = [repr(option) for option in options]
    expected = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        # `type(value)`: True is not 1, as a Literal tells them apart.
        if any(type(value) is type(option) and value == option for option in options):
            return value
        return refused(loc, problems, f"expected one of {expected}, got {shown(value)}")

    return rule


def optional(inner: Check) -> Check:
    """The rule of ``X | None``, ``inner`` being ``X``'s."""

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        return None if value is None else inner(value, loc, problems)

    return rule


def list_of(item: Check) -> Check:
    """The rule of ``list[X]``, ``item`` being ``X``'s; null is the empty list."""

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        # `disabled:` with its last `- name` line deleted (or commented out) is YAML's null.
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            return refused(loc, problems, f"expected a list, got {shown(value)}")
        items = [item(element, (*loc, index), problems) for index, element in enumerate(value)]
        return INVALID if any(element is INVALID for element in items) else items

    return rule


def mapping_of(item: Check) -> Check:
    """The rule of ``dict[str, X]``, ``item`` being ``X``'s; null is the empty mapping."""

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            return refused(loc, problems, f"expected a mapping, got {shown(value)}")
        found: dict[str, Any] = {}
        good = True
        for key, element in value.items():
            if not isinstance(key, str):
                refused((*loc, str(key)), problems, f"expected a text key, got {shown(key)}")
                good = False
                continue
            found[key] = item(element, (*loc, key), problems)
            good = good and found[key] is not INVALID
        return found if good else INVALID

    return rule


def annotated(inner: Check, metadata: Sequence[Any]) -> Check:
    """The rule of ``Annotated[X, *metadata]``: its :class:`Before` checks, ``inner`` (``X``'s
    rule), its :class:`After` checks."""
    before = [item.check for item in metadata if isinstance(item, Before)]
    after = [item.check for item in metadata if isinstance(item, After)]

    def rule(value: Any, loc: Loc, problems: list[Problem]) -> Any:
        try:
            for check in before:
                value = check(value)
        except ValueError as exc:
            return refused(loc, problems, str(exc))
        value = inner(value, loc, problems)
        if value is INVALID:
            return INVALID
        try:
            for check in after:
                value = check(value)
        except ValueError as exc:
            return refused(loc, problems, str(exc))
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


__all__ = [
    "INVALID",
    "After",
    "Before",
    "Check",
    "Number",
    "annotated",
    "any_rule",
    "boolean_rule",
    "checked_by",
    "http_url",
    "list_of",
    "mapping_of",
    "one_of",
    "optional",
    "refused",
    "text_rule",
    "unwrap_optional",
]

"""A schema's ``pattern`` and ``patternProperties`` matched under one time budget per call.

A schema comes from whoever serves the tool, and its ``pattern`` may backtrack for ever
(``^(a+)+$`` takes Python's ``re`` 19 s on 29 characters). :func:`bounded` gives a jsonschema
validator class keywords that match with the ``regex`` package, with the GIL released, within
what is left of :data:`PATTERN_BUDGET` for the call (:func:`start_budget` starts it); a value
the budget does not decide is a validation error (``took too long``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Final

from hermes_core._shown import clipped

if TYPE_CHECKING:
    import regex
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["PATTERN_BUDGET", "bounded", "start_budget"]

PATTERN_BUDGET: Final = 0.1
"""Seconds the ``pattern`` checks of one call's arguments may take together."""


class _TooSlow(Exception):
    """The pattern budget of this call is spent."""


_budget = threading.local()
"""``left``: the seconds of matching this thread's current call has left (compiling a pattern,
or importing ``regex``, is not counted)."""


@lru_cache(maxsize=512)
def _compiled_pattern(pattern: str) -> regex.Pattern[str] | None:
    """``pattern`` compiled with ``regex`` (``None`` when it does not compile: a broken schema
    never blocks a call)."""
    import regex

    try:
        return regex.compile(pattern)
    except (regex.error, TypeError, ValueError, OverflowError):
        return None


def _matches(pattern: str, text: str) -> bool:
    """Whether ``pattern`` is found in ``text``, within what is left of the call's budget;
    :class:`_TooSlow` when it is not decided in time."""
    compiled = _compiled_pattern(pattern)
    if compiled is None:
        return True
    left: float = getattr(_budget, "left", PATTERN_BUDGET)
    if left <= 0:
        raise _TooSlow
    started = time.monotonic()
    try:
        return compiled.search(text, timeout=left, concurrent=True) is not None
    except TimeoutError:
        raise _TooSlow from None
    finally:
        _budget.left = left - (time.monotonic() - started)


def _too_slow(what: str, pattern: str) -> ValidationError:
    from jsonschema.exceptions import ValidationError

    return ValidationError(
        f"{what} took too long to check against the pattern {clipped(pattern)!r} (more than "
        f"{PATTERN_BUDGET:g} s for the whole call); send a shorter or simpler value"
    )


# The keyword functions take jsonschema's validator as ``Any``: ``descend`` is not part of its
# typed protocol.


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        found = _matches(pattern, instance)
    except _TooSlow:
        yield _too_slow("the value", pattern)
        return
    if not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = _matches(pattern, key)
            except _TooSlow:
                yield _too_slow(f"the argument name {clipped(key)!r}", pattern)
                continue
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's ``additionalProperties``, matching ``patternProperties`` under the budget."""
    from jsonschema import _keywords

    plain: Callable[..., Iterator[ValidationError] | None] = _keywords.additionalProperties
    patterns = schema.get("patternProperties")
    if (
        not isinstance(patterns, Mapping)
        or not patterns
        or not validator.is_type(instance, "object")
    ):
        yield from plain(validator, allowed, instance, schema) or ()
        return
    joined = "|".join(patterns)
    properties = schema.get("properties", {})
    extras: list[str] = []
    for key in instance:
        if key in properties:
            continue
        try:
            if not _matches(joined, key):
                extras.append(key)
        except _TooSlow:
            yield _too_slow(f"the argument name {clipped(key)!r}", joined)
            return
    if not extras:
        return
    from jsonschema.exceptions import ValidationError

    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed:
        joined_extras = ", ".join(repr(each) for each in sorted(extras))
        verb = "does" if len(extras) == 1 else "do"
        listed = ", ".join(repr(each) for each in sorted(patterns))
        yield ValidationError(f"{joined_extras} {verb} not match any of the regexes: {listed}")


@cache
def bounded(cls: type[Validator]) -> type[Validator]:
    """``cls`` with its pattern keywords matched under the budget."""
    from jsonschema import validators

    extend: Callable[..., type[Validator]] = validators.extend
    keywords: dict[str, Callable[..., Iterator[ValidationError]]] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    known = {key: value for key, value in keywords.items() if key in cls.VALIDATORS}
    return extend(cls, known)


def start_budget() -> None:
    """Give this thread's next call its whole :data:`PATTERN_BUDGET`."""
    _budget.left = PATTERN_BUDGET

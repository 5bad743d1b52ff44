"""A configuration's problems: where each is (:data:`Loc`), in the user's words.

:class:`InvalidConfig` holds every :class:`Problem` a section found; :func:`fallback` reports a
value accepted with a fallback, to the loader collecting them (:func:`warnings_to`) or as a
Python warning.
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from hermes_core._shown import clipped

Loc = tuple[int | str, ...]
"""Where a value is: the keys and list indexes that lead to it from the top of the file."""

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

    :func:`hermes_core._config.errors.validate_document` turns it into a
    :class:`~hermes_core._errors.ConfigError` naming the file and the line.
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


@contextmanager
def warnings_to(sink: list[Any] | None) -> Iterator[None]:
    """Within it, :func:`fallback` appends its warnings to ``sink`` (issues them when None)."""
    token = _warnings_sink.set(sink)
    try:
        yield
    finally:
        _warnings_sink.reset(token)


__all__ = [
    "WARNINGS_CONTEXT",
    "InvalidConfig",
    "Loc",
    "Problem",
    "fallback",
    "key_text",
    "warnings_to",
]

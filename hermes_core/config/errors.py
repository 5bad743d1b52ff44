"""Validation of a parsed ``config.yaml``, with its errors in the user's words.

A section's :class:`~hermes_core.config.problems.InvalidConfig` becomes a
:class:`~hermes_core.errors.ConfigError` naming the file, the line and the dotted key, saying
what was expected and what was found (``expected a number between 0 and 100, got 'five'``),
suggesting the closest known key for an unknown one, and listing every problem of the file
when there are several. Values accepted with a fallback become
:class:`~hermes_core.config.models.ConfigWarning` warnings carrying the file and the line.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from hermes_core import yaml_layout
from hermes_core.config.models import Config, ConfigWarning, where_prefix
from hermes_core.config.problems import WARNINGS_CONTEXT, InvalidConfig, key_text
from hermes_core.errors import ConfigError

_LISTED_PROBLEMS = 20
"""How many problems of one file an error lists; the count says how many there are."""


def _validation_error(exc: InvalidConfig, document: Any, path: Path | None) -> ConfigError:
    problems = [
        (yaml_layout.line_of(document, problem.loc), key_text(problem.loc), problem.message)
        for problem in exc.problems
    ]
    problems.sort(key=lambda problem: problem[0] if problem[0] is not None else 1 << 30)
    line, key, detail = problems[0]
    if len(problems) == 1:
        return ConfigError(detail, path=path, line=line, key=key)
    listed = [
        where_prefix(path, *problem[:2]) + problem[2] for problem in problems[:_LISTED_PROBLEMS]
    ]
    if len(problems) > _LISTED_PROBLEMS:
        listed.append(f"... and {len(problems) - _LISTED_PROBLEMS} more")
    listing = "\n".join(listed)
    error = ConfigError(f"{len(problems)} problems:\n{listing}", path=path)
    # The first problem stays reachable as attributes, as with a single error.
    error.line, error.key = line, key
    return error


def validate_document(document: Any, path: Path | None) -> Config:
    """Validate round-trip data; errors and fallback warnings carry the file and the line."""
    fallbacks: list[ConfigWarning] = []
    try:
        config = Config.model_validate(
            yaml_layout.plain(document), context={WARNINGS_CONTEXT: fallbacks}
        )
    except InvalidConfig as exc:
        raise _validation_error(exc, document, path) from None
    for warning in fallbacks:
        line = yaml_layout.line_of(document, tuple(warning.key.split(".")))
        warnings.warn(
            ConfigWarning(warning.detail, key=warning.key, path=path, line=line), stacklevel=3
        )
    return config


__all__ = ["validate_document"]

"""Validation of a parsed ``config.yaml``, with its errors in the user's words.

A section's :class:`~hermes_core._config.problems.InvalidConfig` becomes a
:class:`~hermes_core._errors.ConfigError` naming the file, the line and the dotted key, saying
what was expected and what was found (``expected a number between 0 and 100, got 'five'``),
suggesting the closest known key for an unknown one, and listing every problem of the file
when there are several. Values accepted with a fallback become
:class:`~hermes_core._config.models.ConfigWarning` warnings carrying the file and the line.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core import _yaml_layout as yaml_layout
from hermes_core._config.models import MOVED_SECTIONS, Config, ConfigWarning, where_prefix
from hermes_core._config.problems import WARNINGS_CONTEXT, InvalidConfig, Loc, key_text
from hermes_core._errors import ConfigError

_LISTED_PROBLEMS = 20
"""How many problems of one file an error lists; the count says how many there are."""


Located = tuple[int | None, str, str]
"""One problem as the user reads it: the line (when known), the dotted key and what is wrong."""


@dataclass(frozen=True)
class ConfigSource:
    """Where a :class:`Config` was read from: the file and its round-trip document (the lines
    of its keys), for errors found after loading (a plugin's typed settings)."""

    path: Path | None
    document: Any = field(repr=False)


_SOURCE = "_source"


def source_of(config: Config) -> ConfigSource | None:
    """Where ``config`` was loaded from; ``None`` for a configuration made in code."""
    source = config.__dict__.get(_SOURCE)
    return source if isinstance(source, ConfigSource) else None


def key_where(config: Config, key: str) -> str:
    """``PATH:LINE: `` of the dotted ``key`` in the file ``config`` was read from, as every
    configuration error names it (``PATH: `` when the key is not written there; nothing for a
    configuration made in code)."""
    source = source_of(config)
    if source is None or source.path is None:
        return ""
    line = yaml_layout.line_of(source.document, tuple(key.split(".")))
    return f"{source.path}:{line}: " if line is not None else f"{source.path}: "


def located_problems(exc: InvalidConfig, document: Any, prefix: Loc = ()) -> list[Located]:
    """The problems of ``exc``, found under ``prefix`` of ``document``, sorted by line."""
    problems = [
        (
            yaml_layout.line_of(document, (*prefix, *problem.loc)),
            key_text((*prefix, *problem.loc)),
            problem.message,
        )
        for problem in exc.problems
    ]
    problems.sort(key=lambda problem: problem[0] if problem[0] is not None else 1 << 30)
    return problems


def problems_text(problems: list[Located], path: Path | None) -> str:
    """Problems one per line, each with the file, line and key: at most 20 and a count."""
    listed = [
        where_prefix(path, *problem[:2]) + problem[2] for problem in problems[:_LISTED_PROBLEMS]
    ]
    if len(problems) > _LISTED_PROBLEMS:
        listed.append(f"... and {len(problems) - _LISTED_PROBLEMS} more")
    return f"{len(problems)} problems:\n" + "\n".join(listed)


def _validation_error(exc: InvalidConfig, document: Any, path: Path | None) -> ConfigError:
    problems = located_problems(exc, document)
    line, key, detail = problems[0]
    if len(problems) == 1:
        return ConfigError(detail, path=path, line=line, key=key)
    error = ConfigError(problems_text(problems, path), path=path)
    # The first problem stays reachable as attributes, as with a single error.
    error.line, error.key = line, key
    return error


def _moved_sections(document: Any) -> list[ConfigWarning]:
    return [
        ConfigWarning(
            f"this section is deprecated: move its keys under {moved} (read from here for one "
            "more release)",
            key=section,
        )
        for section, moved in MOVED_SECTIONS.items()
        if isinstance(document, dict) and document.get(section) is not None
    ]


def validate_document(document: Any, path: Path | None) -> Config:
    """Validate round-trip data; errors and fallback warnings carry the file and the line."""
    fallbacks: list[ConfigWarning] = []
    try:
        config = Config.model_validate(
            yaml_layout.plain(document), context={WARNINGS_CONTEXT: fallbacks}
        )
    except InvalidConfig as exc:
        raise _validation_error(exc, document, path) from None
    object.__setattr__(config, _SOURCE, ConfigSource(path, document))
    fallbacks.extend(_moved_sections(document))
    for warning in fallbacks:
        line = yaml_layout.line_of(document, tuple(warning.key.split(".")))
        warnings.warn(
            ConfigWarning(warning.detail, key=warning.key, path=path, line=line), stacklevel=3
        )
    return config


__all__ = [
    "ConfigSource",
    "Located",
    "located_problems",
    "problems_text",
    "source_of",
    "validate_document",
]

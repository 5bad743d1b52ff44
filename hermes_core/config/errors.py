"""Validation of a parsed ``config.yaml``, with its errors in the user's words.

A pydantic error becomes a :class:`~hermes_core.errors.ConfigError` naming the file, the line
and the dotted key, saying what was expected and what was found (``expected a number between 0
and 100, got 'five'``), suggesting the closest known key for an unknown one, and listing every
problem of the file when there are several. Values accepted with a fallback become
:class:`~hermes_core.config.models.ConfigWarning` warnings carrying the file and the line.
"""

from __future__ import annotations

import difflib
import typing
import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from hermes_core import yaml_layout
from hermes_core.config.models import (
    WARNINGS_CONTEXT,
    Config,
    ConfigWarning,
    unwrap_optional,
    where_prefix,
)
from hermes_core.errors import ConfigError
from hermes_core.shown import clipped, shown
from hermes_core.yaml_layout import Loc

_EXPECTED: dict[str, str] = {
    "missing": "this key is required",
    "string_type": "expected text",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
}


def _key_text(loc: Loc) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{clipped(part)}" if text else clipped(part)
    return text


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The section model found at ``loc`` (skipping list indexes and mapping keys)."""
    current: Any = Config
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            current = unwrap_optional(field.annotation)
        elif typing.get_origin(current) in (list, dict):
            current = unwrap_optional(typing.get_args(current)[-1])
        else:
            return None
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _describe(error: ErrorDetails) -> str:
    """What was expected and what was found, for one pydantic error."""
    kind = error["type"]
    context = error.get("ctx") or {}
    if kind in ("value_error", "assertion_error") and "error" in context:
        return str(context["error"])
    got = shown(error.get("input"))
    if kind == "extra_forbidden":
        section = _model_at(error["loc"][:-1])
        known = sorted(section.model_fields) if section is not None else []
        unknown = str(error["loc"][-1])
        hint = difflib.get_close_matches(unknown, known, n=1) if len(unknown) < 100 else []
        text = "unknown key"
        if hint:
            text += f", did you mean {hint[0]!r}?"
        if known:
            text += f" (known keys: {', '.join(known)})"
        return text
    if kind == "literal_error":
        return f"expected one of {context.get('expected', '?')}, got {got}"
    if kind == "missing":
        return _EXPECTED[kind]
    if kind in _EXPECTED:
        return f"{_EXPECTED[kind]}, got {got}"
    return f"{error['msg']}, got {got}"


_LISTED_PROBLEMS = 20
"""How many problems of one file an error lists; the count says how many there are."""


def _validation_error(exc: ValidationError, document: Any, path: Path | None) -> ConfigError:
    problems = [
        (yaml_layout.line_of(document, error["loc"]), _key_text(error["loc"]), _describe(error))
        for error in exc.errors()
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
    except ValidationError as exc:
        raise _validation_error(exc, document, path) from None
    for warning in fallbacks:
        line = yaml_layout.line_of(document, tuple(warning.key.split(".")))
        warnings.warn(
            ConfigWarning(warning.detail, key=warning.key, path=path, line=line), stacklevel=3
        )
    return config


__all__ = ["validate_document"]

"""Reading the JSON files of connectors (``auth.json``, the reference gateway's fixture file):
a file that cannot be read or parsed is a :class:`~hermes_core._errors.ConfigError` naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core._errors import ConfigError

__all__ = ["read_json_file"]

_RAISE: Any = object()


def read_json_file(path: Path, *, if_missing: Any = _RAISE) -> Any:
    """The parsed JSON of ``path``, or ``if_missing`` when there is no file (when given). Raises
    a :class:`~hermes_core._errors.ConfigError` naming the file when it cannot be read (a missing
    one too, unless ``if_missing`` is given), is not valid JSON, or is nested too deeply to
    decode."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        if if_missing is not _RAISE:
            return if_missing
        raise ConfigError(f"cannot be read: {exc.strerror or exc}", path=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot be read: {exc.strerror or exc}", path=path) from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"is not valid JSON: {exc}", path=path) from None
    except RecursionError:
        raise ConfigError("is nested too deeply to read", path=path) from None

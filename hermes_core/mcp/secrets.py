"""Writing secrets to ``$HERMES_HOME/.env``, the one place hermes keeps them (never config.yaml)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from hermes_core.atomic_write import write_atomically
from hermes_core.errors import HermesError
from hermes_core.mcp.expand import read_dotenv

__all__ = ["save_secrets"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _quoted(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise HermesError(f"the value of {name} spans several lines; .env holds one line each")
    if value and not re.search(r"[\s#'\"]", value):
        return value
    # read_dotenv strips one pair of matching quotes and knows no escapes.
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    raise HermesError(f"the value of {name} holds both kinds of quotes; .env cannot keep it")


def save_secrets(path: Path, values: Mapping[str, str]) -> None:
    """Set each ``NAME=value`` in the ``.env`` file ``path``: a line already setting the name is
    replaced in place, a new name is appended; every other line and comment is kept. The file
    is written atomically and a new one is private to the user. The existing file is read (and
    checked) first, so a malformed ``.env`` is reported and left as it was."""
    for name in values:
        if not _NAME.fullmatch(name):
            raise HermesError(f"not an environment variable name: {name!r}")
    read_dotenv(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    pending = {name: f"{name}={_quoted(name, value)}" for name, value in values.items()}
    kept: list[str] = []
    for line in lines:
        match = _ASSIGNMENT.match(line)
        if match is not None and match.group(1) in values:
            replacement = pending.pop(match.group(1), None)
            if replacement is not None:
                kept.append(replacement)
            continue
        kept.append(line)
    kept.extend(pending.values())
    write_atomically(path, "\n".join(kept) + "\n")

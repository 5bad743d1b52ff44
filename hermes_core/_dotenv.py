"""The user's secrets file, ``$HERMES_HOME/.env``: read where a secret is needed, never cached,
so a key added to it is used by the next request without a restart."""

from __future__ import annotations

import functools
import logging
import re
from pathlib import Path

from hermes_core._errors import ConfigError
from hermes_core._paths import Environment
from hermes_core._private_files import refuse_if_others_could_write
from hermes_core._project_trust import project_refusal

__all__ = ["dotenv_of", "read_dotenv", "secret_variable"]

_DOTENV_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")


def read_dotenv(path: Path) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of a ``.env`` file; a missing file is empty.

    Blank lines and ``#`` comments are skipped, ``export`` is allowed, values may be wrapped in
    single or double quotes, and an unquoted value ends at `` #``. A line that is none of these
    is an error naming the file and the line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    refuse_if_others_could_write(path)  # its variables reach the commands hermes starts
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _DOTENV_LINE.fullmatch(line)
        if match is None:
            raise ConfigError("expected KEY=VALUE", path=path, line=number)
        key, value = match.group(1), match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values


def secret_variable(env: Environment, name: str) -> str | None:
    """The value of the variable ``name``: the environment first, then ``$HERMES_HOME/.env``
    (:func:`dotenv_of`); ``None`` when neither sets it (or sets it empty)."""
    value = env.get(name) or dotenv_of(env).get(name)
    return value or None


def dotenv_of(env: Environment) -> dict[str, str]:
    """The variables of ``$HERMES_HOME/.env``, unless that file is the project's and the project
    gate is closed (``HERMES_HOME=./.hermes`` in a cloned repository,
    :func:`~hermes_core._project_trust.project_refusal`): a planted key would send the user's
    conversations to the repository owner's account. Then none, with a warning."""
    path = env.dotenv_path
    refusal = project_refusal(env, path, "the secrets file") if path.exists() else None
    if refusal is not None:
        _warn_once(f"{refusal}; not read")
        return {}
    return read_dotenv(path)


@functools.lru_cache(maxsize=8)
def _warn_once(message: str) -> None:
    logging.getLogger(__name__).warning("%s", message)

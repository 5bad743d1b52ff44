"""Signing in to the connector gateway: the bearer token and where it comes from.

``HERMES_CONNECTORS_TOKEN`` wins; otherwise ``$HERMES_HOME/auth.json`` holds it as
``{"connectors": {"token": "..."}}``, written atomically with mode 0600 by ``hermes connectors
login`` and removed by ``logout`` (other keys of the file are kept). The token is never printed,
logged or written to ``config.yaml``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core._atomic_write import write_atomically
from hermes_core._errors import ConfigError
from hermes_core._paths import Environment
from hermes_core.connectors._json_files import read_json_file

__all__ = [
    "TOKEN_VARIABLE",
    "SignIn",
    "SignInCache",
    "auth_path",
    "read_sign_in",
    "remove_token",
    "save_token",
    "sign_in_again",
]

TOKEN_VARIABLE = "HERMES_CONNECTORS_TOKEN"
_SECTION = "connectors"


@dataclass(frozen=True)
class SignIn:
    """Whether the user is signed in: the ``token`` (never in a ``repr``), where it came from,
    and why ``auth.json`` could not be read when it could not (``problem``)."""

    token: str | None = field(default=None, repr=False)
    source: Literal["environment", "file"] | None = None
    problem: str | None = None

    @property
    def signed_in(self) -> bool:
        """Whether a token is there."""
        return bool(self.token)


def sign_in_again(sign_in: SignIn) -> str:
    """What to do when the gateway refused the token of ``sign_in``: the variable holding it
    wins over ``auth.json``, so a new ``login`` alone would change nothing."""
    if sign_in.source == "environment":
        return (
            f"sign in again: {TOKEN_VARIABLE} holds the token refused: set it to another, "
            "or unset it and run 'hermes connectors login'"
        )
    return "sign in again: run 'hermes connectors login'"


def auth_path(env: Environment) -> Path:
    """``$HERMES_HOME/auth.json``, in the home's
    :attr:`~hermes_core._paths.Environment.data_home` (the user's, never a repository's)."""
    return env.connectors_auth_path


def _read_document(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` (``None`` when there is no file); a
    :class:`~hermes_core._errors.ConfigError` naming the file when it cannot be read."""
    no_file = object()
    data = read_json_file(path, if_missing=no_file)
    if data is no_file:
        return None
    if not isinstance(data, dict):
        raise ConfigError("must hold a JSON object", path=path)
    return data


def read_sign_in(env: Environment) -> SignIn:
    """The sign-in in effect: ``HERMES_CONNECTORS_TOKEN``, else ``auth.json``."""
    variable = (env.get(TOKEN_VARIABLE) or "").strip()
    if variable:
        return SignIn(variable, "environment")
    path = auth_path(env)
    try:
        data = _read_document(path)
    except ConfigError as exc:
        return SignIn(problem=str(exc))
    section = (data or {}).get(_SECTION)
    if section is None:
        return SignIn()
    token = section.get("token") if isinstance(section, dict) else None
    if not isinstance(token, str) or not token.strip():
        return SignIn(problem=f"{path}: connectors.token must be non-empty text")
    return SignIn(token.strip(), "file")


def save_token(env: Environment, token: str) -> Path:
    """Store ``token`` in ``auth.json`` (atomically, mode 0600, other keys kept); the path.
    Refuses a blank token and a file that cannot be read, changing nothing."""
    token = token.strip()
    if not token:
        raise ConfigError("the token is empty: nothing was saved")
    if any(char.isspace() for char in token):
        raise ConfigError("the token holds white space: nothing was saved")
    path = auth_path(env)
    data = _read_document(path) or {}
    data[_SECTION] = {"token": token}
    write_atomically(path, json.dumps(data, indent=2) + "\n", mode=0o600)
    return path


def remove_token(env: Environment) -> bool:
    """Remove the token from ``auth.json`` (the file goes when nothing else is in it); whether
    there was one."""
    path = auth_path(env)
    data = _read_document(path)
    if data is None or _SECTION not in data:
        return False
    del data[_SECTION]
    if data:
        write_atomically(path, json.dumps(data, indent=2) + "\n", mode=0o600)
    else:
        path.unlink()
    return True


class SignInCache:
    """:func:`read_sign_in`, read again only when ``auth.json`` changes: asking costs one
    ``stat``, so a long-running host sees a ``login`` or ``logout`` at once."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._stamp: tuple[int, int, int] | None = None
        self._sign_in: SignIn | None = None

    def current(self) -> SignIn:
        """The sign-in in effect now."""
        if (self.env.get(TOKEN_VARIABLE) or "").strip():
            if self._sign_in is None or self._sign_in.source != "environment":
                self._sign_in = read_sign_in(self.env)
            return self._sign_in
        try:
            status = os.stat(auth_path(self.env))
            stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
        except OSError:
            stamp = (0, 0, 0)
        if self._sign_in is None or stamp != self._stamp:
            self._sign_in = read_sign_in(self.env)
            self._stamp = stamp
        return self._sign_in

"""The bearer token of ``hermes serve --transport http``: one secret in a file only the user
can read, ``$HERMES_HOME/serve-token``.

The file is made at first use (``hermes serve --transport http`` or ``hermes serve token``)
with ``secrets.token_urlsafe(32)``: written to a temporary file opened ``O_EXCL`` with mode
0600 (so it is never readable by anyone else, whatever the umask), then linked into place, so
a reader never sees a half-written token and two first uses agree on one token. Rotating
replaces it the same way. A token file that another account could read, or that belongs to
another account, is refused rather than trusted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from hermes_core._errors import HermesError
from hermes_core._private_files import PRIVATE_FILE_MODE, make_private_dir

__all__ = ["TOKEN_BYTES", "ServeTokenError", "TokenFile", "read_or_create_token", "rotate_token"]

TOKEN_BYTES: Final = 32
"""Random bytes in a token (``secrets.token_urlsafe``: 43 characters)."""


class ServeTokenError(HermesError):
    """The token file cannot be used: unreadable, empty, or open to other accounts."""


def read_or_create_token(path: Path) -> str:
    """The token in ``path``, made first when there is none."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    _make_parent(path)
    candidate = _write_private_copy(path, secrets.token_urlsafe(TOKEN_BYTES))
    try:
        os.link(candidate, path)
    except FileExistsError:
        pass  # another first use won: its token is the one
    finally:
        candidate.unlink()
    return _read(path)


def rotate_token(path: Path) -> str:
    """Replace the token in ``path`` with a new one (the old one stops working at once, also
    for a running ``hermes serve``) and return it."""
    _make_parent(path)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    candidate = _write_private_copy(path, token)
    try:
        os.replace(candidate, path)
    except OSError:
        candidate.unlink()
        raise
    return token


class TokenFile:
    """The token ``hermes serve`` checks requests against, read again whenever the file
    changes (a ``--rotate`` takes effect at the next request). ``None`` while it cannot be
    used: then every request is refused."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int, int] | None = None
        self._token: str | None = None

    def current(self) -> str | None:
        """The token now, or ``None`` when the file is missing or unusable."""
        try:
            info = os.stat(self.path)
        except OSError:
            self._seen, self._token = None, None
            return None
        seen = (info.st_ino, info.st_mtime_ns, info.st_size, info.st_mode)
        if seen != self._seen:
            try:
                self._token = _read(self.path)
            except (OSError, ServeTokenError):
                self._token = None
            self._seen = seen
        return self._token


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.geteuid():
            raise ServeTokenError(
                f"{path} belongs to another account (uid {info.st_uid}); remove it and run "
                "`hermes serve token --rotate`"
            )
        if info.st_mode & 0o077:
            raise ServeTokenError(
                f"{path} can be read by other accounts (mode {stat.S_IMODE(info.st_mode):04o}); "
                "run `hermes serve token --rotate` to replace it with a private one"
            )
        token = handle.read(4096).decode("utf-8", "replace").strip()
    if not token:
        raise ServeTokenError(f"{path} is empty; run `hermes serve token --rotate`")
    return token


def _make_parent(path: Path) -> None:
    # A missing $HERMES_HOME is made private; an existing one is left as the user has it.
    make_private_dir(path.parent)


def _write_private_copy(path: Path, token: str) -> Path:
    """``token`` in a new 0600 file beside ``path``."""
    candidate = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(candidate, flags, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(f"{token}\n".encode())
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            candidate.unlink()
        raise
    return candidate

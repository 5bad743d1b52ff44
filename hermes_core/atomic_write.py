"""Replacing a file so that a crash leaves either the old text or the new one, never a mix."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from hermes_core.paths import make_private_dir


def write_atomically(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text``: a temporary file in the same directory, fsync, rename.

    The file gets the permission bits ``mode``; without it, it keeps its own (a new one is
    private to the user, and so are the directories made for it). A symbolic link is followed,
    so a config kept in a dotfiles repository stays a link. On any failure the old file is
    untouched and the temporary file is removed.
    """
    _replace(path, lambda stream: stream.write(text.encode("utf-8")), mode, durable=True)


def write_bytes_atomically(
    path: Path, chunks: Iterable[bytes | memoryview], *, durable: bool = True
) -> None:
    """Replace ``path`` with the concatenated ``chunks``, as :func:`write_atomically` does.
    ``durable=False`` skips the fsyncs: for a cache, whose reader checks every file it opens,
    a crash may lose the new file but never leaves a half-written one under its name."""

    def write(stream: IO[bytes]) -> None:
        for chunk in chunks:
            stream.write(chunk)

    _replace(path, write, None, durable=durable)


def _replace(
    path: Path, write: Callable[[IO[bytes]], Any], mode: int | None, *, durable: bool
) -> None:
    target = path.resolve() if path.is_symlink() else path
    make_private_dir(target.parent)
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o600
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    if not durable:
        return
    # Make the rename itself durable; not every platform can open a directory.
    with contextlib.suppress(OSError):
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

"""Replacing a file so that a crash leaves either the old text or the new one, never a mix.

A writer killed between creating its temporary file and renaming it leaves the file behind; the
next write of the same target removes it (:func:`remove_stale_temporaries`), never the file of a
writer still running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from hermes_core._private_files import make_private_dir

if sys.platform != "win32":
    import fcntl

log = logging.getLogger(__name__)


def write_atomically(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text``: a temporary file in the same directory, fsync, rename.

    The file gets the permission bits ``mode``; without it, it keeps its own (a new one is
    private to the user, and so are the directories made for it). A symbolic link is followed,
    so a config kept in a dotfiles repository stays a link. On any failure the old file is
    untouched and the temporary file is removed.
    """
    _replace(path, lambda stream: stream.write(text.encode("utf-8")), mode, durable=True)


@contextlib.contextmanager
def held_exclusively(lock: Path, wait: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the file ``lock`` for the block (made private, with its
    directory, when missing): how the processes of one user take turns at reading what a store
    holds and writing it back changed, so that neither writes over what the other just wrote.
    The kernel drops the lock when the process dies. Without ``fcntl`` (Windows) the block runs
    without it. With ``wait``, another process holding it past ``wait`` seconds (one stopped,
    or hung) is a :class:`TimeoutError` naming ``lock``, not a wait for ever."""
    if sys.platform == "win32":
        yield
        return
    make_private_dir(lock.parent)
    handle = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        _lock(handle, lock, wait)
        try:
            yield
        finally:
            # Unlocked, not only closed: a child forked in the block (a plugin's thread) holds
            # the descriptor too, and the lock with it until it exits.
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def _lock(handle: int, lock: Path, wait: float | None) -> None:
    if wait is None:
        fcntl.flock(handle, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{lock} is locked by another process (still after {wait:g} s): try again; "
                    "if it stays locked, stop the process that holds it (a stopped or stuck "
                    "hermes)"
                ) from None
            time.sleep(0.05)


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
    remove_stale_temporaries(target)
    handle, temporary = _locked_temporary(target)
    # The descriptor, and with it the lock, is held until the rename: a temporary file
    # nobody holds is one whose writer died.
    stream = os.fdopen(handle, "wb")
    try:
        write(stream)
        stream.flush()
        if durable:
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        if sys.platform == "win32":
            stream.close()  # Windows renames no open file (and there is no lock to keep)
        os.replace(temporary, target)
    except BaseException:
        stream.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    stream.close()
    if not durable:
        return
    # Make the rename itself durable; not every platform can open a directory.
    with contextlib.suppress(OSError):
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def _temporary_affixes(target: Path) -> tuple[str, str]:
    return f".{target.name}.", ".tmp"


def _locked_temporary(target: Path) -> tuple[int, str]:
    """A new temporary file beside ``target``, open and locked (where ``fcntl`` exists)."""
    prefix, suffix = _temporary_affixes(target)
    while True:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=suffix)
        if sys.platform == "win32":
            return handle, temporary
        try:
            # Blocks only while another writer's clean-up holds it for a moment.
            fcntl.flock(handle, fcntl.LOCK_EX)
            if os.fstat(handle).st_nlink > 0:
                return handle, temporary
        except BaseException:
            os.close(handle)
            raise
        # That clean-up took it, unlocked, for a dead writer's file: take another name.
        os.close(handle)


def remove_stale_temporaries(target: Path) -> list[str]:
    """Remove the temporary files of ``target`` whose writer died before renaming them (a
    killed ``hermes config set``), and return their names.

    A writer holds a lock on its temporary file until the rename, and the kernel drops the lock
    when the process dies, however it dies: a temporary file that can be locked has no writer,
    and one that is locked belongs to a live writer and is never touched. Without ``fcntl``
    (Windows) nothing is removed.
    """
    if sys.platform == "win32":
        return []
    prefix, suffix = _temporary_affixes(target)
    try:
        entries = [
            entry.name
            for entry in os.scandir(target.parent)
            if entry.name.startswith(prefix) and entry.name.endswith(suffix)
        ]
    except OSError:
        return []
    removed = []
    for name in entries:
        path = os.path.join(target.parent, name)
        try:
            handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # renamed or removed meanwhile, or not a file of ours
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live writer holds it
            opened = os.fstat(handle)
            try:
                current = os.lstat(path)
            except FileNotFoundError:
                continue
            if (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino):
                os.unlink(path)
                removed.append(name)
        except OSError as exc:
            log.debug("cannot remove the stale temporary file %s: %s", path, exc)
        finally:
            os.close(handle)
    return removed

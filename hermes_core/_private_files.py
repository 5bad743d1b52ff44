"""Directories and files that only their owner may read: hermes' home, cache and log
directories, and in them what a script printed, a background process wrote or a database
holds. Each may hold
whatever a tool read (a key in a file, a token a command echoed), so another account on the
machine must not be able to list or open it. And the other way: code hermes runs from a folder
must be the user's alone to write (:func:`others_could_write`). The one place for these modes."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO, Final

from hermes_core._errors import ConfigError

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "create_private_file",
    "make_private_dir",
    "others_could_write",
    "own_private_dir",
    "private_database",
    "private_dir",
    "refuse_if_others_could_write",
]

PRIVATE_FILE_MODE: Final = 0o600
PRIVATE_DIR_MODE: Final = 0o700
"""The mode of every directory hermes makes for itself: its home, cache and log directories."""


def make_private_dir(directory: Path) -> None:
    """Create ``directory``, and each missing parent, readable by the user only
    (:data:`PRIVATE_DIR_MODE`). A directory that already exists keeps the mode its owner
    gave it: hermes never changes the permissions of a directory it did not make."""
    missing: list[Path] = []
    current = directory
    while not current.is_dir() and current.parent != current:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)


def private_dir(directory: Path) -> Path:
    """``directory``, created when missing (as :func:`make_private_dir` does) and made
    ``0700``, also when an earlier version made it readable by others: for a directory that
    only hermes writes (saved script output, background process logs); returns it."""
    make_private_dir(directory)
    if directory.stat().st_mode & 0o777 != PRIVATE_DIR_MODE:
        os.chmod(directory, PRIVATE_DIR_MODE)
    return directory


def own_private_dir(directory: Path) -> Path:
    """``directory``, a name of hermes' own in a folder every account may write (``/tmp``),
    made ``0700`` when missing; returns it. One that exists must be this user's alone: one that
    is a link, belongs to another account or lets others in is refused (a
    :class:`~hermes_core._errors.ConfigError` naming it and the fix), since another account
    may have made it first, to read what hermes writes there or to plant links that send its
    writes into the user's own files."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=PRIVATE_DIR_MODE)
    info = os.lstat(directory)
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        weakness = "is not a directory (a link, or a file)"
    elif euid is not None and info.st_uid != euid:
        weakness = f"belongs to another account (uid {info.st_uid})"
    elif euid is not None and stat.S_IMODE(info.st_mode) & 0o077:
        weakness = f"is open to other accounts (mode {stat.S_IMODE(info.st_mode):04o})"
    else:
        return directory
    raise ConfigError(
        f"{directory} {weakness}: another account may have made it; remove it "
        "(rm -r, after a look) and hermes makes it again, private",
        path=directory,
    )


def private_database(path: Path) -> Path:
    """``path``, a SQLite database, made ready to open readable by the user only; returns it.

    Its directory is made as :func:`make_private_dir` does, the file created ``0600`` when
    missing (made ``0600`` when it exists), and the ``-wal``, ``-shm`` and ``-journal`` files
    an earlier run left beside it made ``0600``: SQLite creates those with the mode the
    database has then, and the ``-wal`` holds the latest writes (the data itself)."""
    make_private_dir(path.parent)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)
    finally:
        os.close(descriptor)
    for suffix in ("-wal", "-shm", "-journal"):
        beside = path.with_name(path.name + suffix)
        try:
            if beside.stat().st_mode & 0o777 != PRIVATE_FILE_MODE:
                os.chmod(beside, PRIVATE_FILE_MODE)
        except FileNotFoundError:
            continue
    return path


def create_private_file(path: Path) -> IO[bytes]:
    """``path`` opened for writing (emptied when it exists), ``0600`` from its first byte."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)  # a file that existed keeps its mode otherwise
        return os.fdopen(descriptor, "wb")
    except BaseException:
        os.close(descriptor)
        raise


def others_could_write(path: Path) -> str | None:
    """Why another local account could change ``path`` (a file, or a folder of code and all it
    holds), or ``None``: it, a file or folder in it, or a folder above it that others may write
    (a sticky folder such as ``/tmp`` aside: others may add entries there, never replace the
    user's), or that belongs to an account other than the user and root. Links are followed,
    as reading and importing do: each link met on the way (its owner could point it elsewhere)
    and the folders above it count, and the folders above where it leads."""
    mine = {os.geteuid(), 0}
    path = Path(os.path.abspath(path))
    paths = _reached(path)
    for root, directories, files in os.walk(path, followlinks=True):
        for name in sorted(directories + files):
            found = Path(root, name)
            paths.extend(_reached(found) if found.is_symlink() else [found])
    for each in dict.fromkeys(paths):
        try:
            entry = each.lstat()
            # Followed only for a link: every other file is its own target (one call, not two).
            info = each.stat() if stat.S_ISLNK(entry.st_mode) else entry
        except OSError:
            continue  # gone or unreadable: the read or import that follows says so
        # A link's own owner may point it elsewhere, even in a sticky folder.
        strangers = {info.st_uid, entry.st_uid} - mine
        if strangers:
            return f"{each} belongs to another account (uid {min(strangers)})"
        sticky = stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX
        if info.st_mode & stat.S_IWOTH and not sticky:
            return (
                f"{each} is writable by other accounts (mode {stat.S_IMODE(info.st_mode):04o}): "
                f"run chmod o-w {each}"
            )
    return None


_MAX_LINKS: Final = 40
"""As many links as Linux follows reaching one path."""


def _reached(path: Path) -> list[Path]:
    """The absolute ``path``, the folders above it, and, for each link followed on the way to
    what it names, the link and the folders above it, then the real path and its folders:
    another account that could replace any of them could change what is read."""
    paths = [*reversed(path.parents), path]
    for link in _links_on_the_way(path):
        paths.extend([*reversed(link.parents), link])
    real = Path(os.path.realpath(path))
    if real != path:
        paths.extend([*reversed(real.parents), real])
    return paths


def _links_on_the_way(path: Path) -> list[Path]:
    """Each symbolic link met reaching the absolute ``path``, in order, as the link's own path
    (what :func:`os.path.realpath` follows without saying)."""
    links: list[Path] = []
    at = Path(path.anchor)
    left = list(path.parts[1:])
    while left and len(links) < _MAX_LINKS:
        part = left.pop(0)
        if part == "..":
            at = at.parent
            continue
        step = at / part
        try:
            target = Path(os.readlink(step))
        except OSError:  # not a link, or not there
            at = step
            continue
        links.append(step)
        if target.is_absolute():
            at = Path(target.anchor)
        left[:0] = target.parts[1:] if target.is_absolute() else target.parts
    return links


def refuse_if_others_could_write(path: Path) -> None:
    """A :class:`~hermes_core._errors.ConfigError` naming ``path``, why and the fix when another
    local account could change it (:func:`others_could_write`): for the files hermes reads
    the commands it starts, or their variables, from (``config.yaml``, ``.env``)."""
    weakness = others_could_write(path)
    if weakness is not None:
        raise ConfigError(f"not read: {weakness}", path=path)

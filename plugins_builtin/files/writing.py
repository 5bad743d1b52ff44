"""How ``write_file`` and ``patch`` put bytes on the disk: through a temporary file renamed
over the target, keeping its mode, owner and group, or in place where a rename cannot keep
what the file is (hard links, an owner the writer cannot give)."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path


def atomic_write(target: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory, then rename it over ``target``.

    An existing file keeps its mode, owner and group; a new one gets ``0o666`` less the
    umask, as any program creating a file would. The rename makes a new inode: a file with
    other hard links, or whose owner or group the writer cannot give the new inode, is written
    in place instead, so every link keeps seeing the edit and the file its owner (that write
    is not atomic; the space it grows by is taken first, so a full disk fails it before a
    byte changes).
    """
    try:
        status: os.stat_result | None = target.stat()
    except FileNotFoundError:
        status = None
    if status is not None and status.st_nlink > 1 and stat.S_ISREG(status.st_mode):
        _write_in_place(target, data)
        return
    fd, temp_name = _create_temporary(target)
    try:
        if status is not None and not _same_owner(fd, status):
            os.close(fd)
            Path(temp_name).unlink()
            _write_in_place(target, data)
            return
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if status is not None:
            os.chmod(temp_name, status.st_mode & 0o7777)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _write_in_place(target: Path, data: bytes) -> None:
    with target.open("r+b") as handle:
        try:
            _make_room(handle.fileno(), len(data))
        except OSError as exc:  # said with the file's name, as a failed open is
            raise OSError(exc.errno, exc.strerror, str(target)) from None
        handle.write(data)
        handle.truncate()


def _make_room(fd: int, size: int) -> None:
    """Take the disk space of ``size`` bytes for the file open at ``fd`` before a byte of it
    changes: a full disk (or a file size limit) then fails the write with the file as it was,
    not half of the new text over the old. Where the file system cannot reserve space (or the
    system has no ``posix_fallocate``), the write goes on as before."""
    before = os.fstat(fd).st_size
    if size <= before or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return
        os.ftruncate(fd, before)  # what a partial reservation added (zeros) goes again
        raise


def _same_owner(fd: int, status: os.stat_result) -> bool:
    """Give the file open at ``fd`` the owner and group of ``status``; ``False`` when the
    writer may not (another user's file, a group the writer is not in)."""
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (status.st_uid, status.st_gid):
        return True
    try:
        os.fchown(fd, status.st_uid, status.st_gid)
    except PermissionError:
        return False
    return True


def _create_temporary(target: Path) -> tuple[int, str]:
    """A new file next to ``target`` created with mode ``0o666``, which the kernel reduces by
    the umask (``mkstemp`` would make it ``0o600``; reading the umask means setting it, which
    races with other threads)."""
    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {target}")

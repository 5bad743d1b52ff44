"""Where the media tools read and write: a file the model names stays inside the session's
working directory; what a tool makes goes there (``path``) or under
``$HERMES_HOME/media/<kind>/``, private to the user."""

from __future__ import annotations

import os
import stat
import time
import uuid
from pathlib import Path

from hermes_core._plugin_support import image_type, shortened
from hermes_core.plugin import Environment, Session

__all__ = ["MediaRefused", "beside", "image_type", "inside_session", "output_path", "placed"]


class MediaRefused(Exception):
    """A request the tool will not carry out; the message tells the model why."""


def inside_session(session: Session, raw: str) -> Path:
    """``raw`` resolved against the session's directory (symbolic links followed); refused
    when it lands outside it."""
    if not raw or "\x00" in raw:
        raise MediaRefused("the path is empty or contains a NUL character")
    root = session.cwd.resolve()
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if resolved != root and resolved.is_relative_to(root):
        return resolved
    if resolved == root:
        raise MediaRefused(f"{raw} is the working directory itself; name a file in it")
    raise MediaRefused(f"{raw} is outside the working directory {root}; media tools stay inside it")


def output_path(
    session: Session, env: Environment, kind: str, suffix: str, raw: str | None
) -> Path:
    """Where a tool writes what it made: ``raw`` inside the session's directory when given
    (its parent must exist, and the file must not: a tool that makes media never replaces a
    file), else a new name under ``media/<kind>/`` of the home's
    :attr:`~hermes_core.Environment.data_home` (private)."""
    if raw:
        target = inside_session(session, raw)
        try:
            if not target.parent.is_dir():
                raise MediaRefused(f"{raw}: the directory {target.parent} does not exist")
            if target.is_dir():
                raise MediaRefused(f"{raw} is a directory; give a file name")
        except OSError as exc:  # a name too long for the file system
            raise MediaRefused(f"{shortened(raw, 77)} cannot be used: {exc.strerror}") from None
        if os.path.lexists(target):
            raise MediaRefused(_exists(raw))
        return target
    from hermes_core._plugin_support import private_dir

    directory = private_dir(env.data_home / "media" / kind)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return directory / f"{stamp}-{uuid.uuid4().hex[:8]}.{suffix}"


def _exists(raw: str) -> str:
    return f"{raw} already exists; give the name of a new file (the media tools never replace one)"


def beside(target: Path) -> Path:
    """A new name next to ``target``, with its extension, for a file made before it is
    :func:`placed` at ``target``."""
    return target.with_name(f".{target.stem}-{uuid.uuid4().hex[:8]}.part{target.suffix}")


def placed(made: Path, target: Path, raw: str) -> None:
    """Give the file ``made`` (:func:`beside` ``target``) the name ``target`` only if no file
    has it: one written there since :func:`output_path` checked is kept, and ``made`` removed
    (a :class:`MediaRefused`)."""
    try:
        os.link(made, target)  # fails where a file is: never replaces it, unlike a rename
    except FileExistsError:
        raise MediaRefused(_exists(raw)) from None
    except OSError:  # a file system without hard links (FAT, some network shares)
        _copied(made, target, raw)
    finally:
        made.unlink(missing_ok=True)


def _copied(made: Path, target: Path, raw: str) -> None:
    """``made`` copied to a new file ``target``, made only where no file is (``O_EXCL``: a
    check, then a rename, replaced a file written between the two), with the same permission
    bits and on the disk before it is said saved; a copy that fails is removed (a
    :class:`MediaRefused` saying why)."""
    import shutil

    mode = stat.S_IMODE(made.stat().st_mode)
    try:
        handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise MediaRefused(_exists(raw)) from None
    try:
        with os.fdopen(handle, "wb") as stream, made.open("rb") as source:
            os.fchmod(stream.fileno(), mode)  # as a link keeps them, whatever the umask
            shutil.copyfileobj(source, stream)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException as exc:
        target.unlink(missing_ok=True)  # this call's own new file, never another's
        if isinstance(exc, OSError):  # a full disk, a file size limit, a share gone away
            why = exc.strerror or str(exc)
            raise MediaRefused(
                f"could not write {raw}: {why}; nothing was saved: ask the user to free "
                "space there, or give another path"
            ) from None
        raise

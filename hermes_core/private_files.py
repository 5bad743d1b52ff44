"""Files in the cache that only their owner may read: what a script printed, what a background
process wrote. Each may hold whatever a tool read (a key in a file, a token a command echoed),
so another account on the machine must not be able to open it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Final

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "create_private_file", "private_dir"]

PRIVATE_FILE_MODE: Final = 0o600
PRIVATE_DIR_MODE: Final = 0o700


def private_dir(directory: Path) -> Path:
    """``directory``, created when missing (its parents with the default mode) and made
    ``0700``, also when an earlier version made it readable by others; returns it."""
    directory.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    if directory.stat().st_mode & 0o777 != PRIVATE_DIR_MODE:
        os.chmod(directory, PRIVATE_DIR_MODE)
    return directory


def create_private_file(path: Path) -> IO[bytes]:
    """``path`` opened for writing (emptied when it exists), ``0600`` from its first byte."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)  # a file that existed keeps its mode otherwise
        return os.fdopen(descriptor, "wb")
    except BaseException:
        os.close(descriptor)
        raise

"""Writing a cache file so that a crash or a concurrent reader never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["replacing", "write_atomically"]


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary stream whose content replaces ``path`` when the block ends without error: it
    is written to a temporary file in the same directory, flushed to disk and renamed over
    ``path``. On an error the old file is untouched and the temporary file removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), as :func:`replacing` does."""
    with replacing(path) as stream:
        stream.write(text.encode("utf-8"))

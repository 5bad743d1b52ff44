"""The frame every cache file of hermes shares, so a file of one kind and version, whole and
unchanged, is told from anything else found in the cache directory.

A framed file starts with eight magic bytes, its format version, the length of its JSON header
and its own total length (``<8sIIQ``), then a CRC-32 of everything from the header to the end.
A kind may keep fields of its own between the frame and the header (outside the checksum: the
catalog cache's hash-check flag); the header is a JSON object, and what follows it is the
kind's own. The tool catalog cache and the bundled bm25 index use it; a search backend can
keep its own files the same way.

:func:`cache_dir_blocked` is the one answer, for every reader and writer of cache files, to a
cache directory that cannot be one (``HERMES_CACHE_DIR`` naming a regular file).
"""

from __future__ import annotations

import json
import logging
import stat
import struct
import zlib
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CACHE_FRAME_SIZE",
    "CacheFileError",
    "cache_dir_blocked",
    "cache_frame",
    "read_cache_frame",
]

log = logging.getLogger(__name__)

_PREFIX: Final = struct.Struct("<8sIIQ")
_CHECKSUM: Final = struct.Struct("<I")
CACHE_FRAME_SIZE: Final = _PREFIX.size + _CHECKSUM.size
"""Bytes of the frame: what a file must hold at least before anything else is read."""


class CacheFileError(Exception):
    """Why a cache file cannot be used, in words that complete "ignoring FILE: ..."."""


def cache_frame(magic: bytes, version: int, header_length: int, total: int, checksum: int) -> bytes:
    """The frame of a file: ``magic`` (8 bytes), ``version``, its header's length, the file's
    ``total`` length and the CRC-32 ``checksum`` of everything from the header on."""
    return _PREFIX.pack(magic, version, header_length, total) + _CHECKSUM.pack(checksum)


def read_cache_frame(
    data: Any, *, magic: bytes, version: int, kind: str, header_at: int = CACHE_FRAME_SIZE
) -> tuple[dict[str, Any], int, int]:
    """``(header, header_length, total)`` of the framed file in ``data`` (a buffer: an
    ``mmap`` or ``bytes``) whose JSON header starts at ``header_at``, after checking, in this
    order: its magic bytes (``kind`` names what it should be), its format version, its length,
    its checksum and its header. Raises :class:`CacheFileError` saying what is wrong."""
    if len(data) < max(CACHE_FRAME_SIZE, header_at):
        raise CacheFileError("it is truncated")
    found, found_version, header_length, total = _PREFIX.unpack_from(data, 0)
    if found != magic:
        raise CacheFileError(f"it is not a {kind}")
    if found_version != version:
        raise CacheFileError(f"it is of format version {found_version}, not {version}")
    if total != len(data):
        raise CacheFileError("it is truncated" if total > len(data) else "it has trailing bytes")
    if header_at + header_length > total:
        raise CacheFileError("it is truncated")
    (checksum,) = _CHECKSUM.unpack_from(data, _PREFIX.size)
    view = memoryview(data)
    try:
        if zlib.crc32(view[header_at:]) != checksum:
            raise CacheFileError("it is corrupt (its checksum does not match)")
        try:
            header = json.loads(bytes(view[header_at : header_at + header_length]))
        except (ValueError, UnicodeDecodeError) as error:
            raise CacheFileError(f"its header is unreadable ({error})") from error
    finally:
        view.release()
    if not isinstance(header, dict):
        raise CacheFileError("its header is unreadable")
    return header, header_length, total


_WARNED: set[Path] = set()
"""The paths :func:`cache_dir_blocked` has warned about in this process (one warning each)."""


def cache_dir_blocked(directory: Path) -> bool:
    """Whether no cache file can be kept in ``directory`` because it, or a folder above it,
    exists and is not a directory (``HERMES_CACHE_DIR`` naming a regular file, say).

    Asked by a reader or writer of cache files when opening or saving failed: when so, it
    says nothing of its own (its error would read like a damaged cache, or "File exists"),
    since the first time a process meets that path one warning names it, says that it is not a
    directory and that nothing is lost. Nothing is written or removed there.
    """
    blocked = _not_a_directory(directory)
    if blocked is None:
        return False
    if blocked not in _WARNED:
        _WARNED.add(blocked)
        log.warning(
            "%s is not a directory, so hermes keeps no cache files under it this run; nothing "
            "is lost (the file is left as it is, and what they would hold is made again): "
            "move the file, or set HERMES_CACHE_DIR to a directory",
            blocked,
        )
    return True


def _not_a_directory(directory: Path) -> Path | None:
    """The nearest of ``directory`` and the folders above it that exists, when it is not a
    directory; ``None`` when it is one (or cannot be looked at)."""
    for path in (directory, *directory.parents):
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
        return None if stat.S_ISDIR(mode) else path
    return None

"""The catalog cache: a catalog file's checked entries in one file of the cache directory, so a
later start registers the catalog without parsing or checking it again, and makes a tool only
when it is asked for (:class:`~hermes_core.search._catalog.CatalogBlock`).

One file per catalog file and ``server`` override, in ``<cache dir>/catalogs/``, named after a
hash of the resolved path and the override. Its layout:

    magic (8 bytes) | format version (u32) | header length (u32) | file length (u64)
    | CRC-32 of the header and sections (u32) | hash-check flag (u32) | header (JSON) | names
    | group ids | offsets | entries

``names`` are the tool names joined by newlines (a tool name has none); ``group ids`` (int32)
give each tool's index in the header's ``groups``; ``entries`` hold each tool's
``[description, input_schema]`` as JSON, tool ``i`` at ``offsets[i]:offsets[i + 1]`` (int64).

Staleness: the header records the catalog file's size, ``mtime_ns``, ``ctime_ns``, inode and
device as they were when it was read, and the file is used only while all five are unchanged,
rather than hashing the catalog (117 MB for 330,000 tools) at every start. A write changes
``ctime`` (which no program can set back), so an edit that keeps the size and restores the
mtime is caught too. What stat data cannot show is a second write within the timestamp
granularity of the read the cache was made from; a cache made from a file changed that close to
the read (:data:`RACY_NS`) has its hash-check flag set, and the catalog file is hashed (SHA-256)
and compared before such a cache is used. Once a check passes late enough that any later write
would show in stat, the flag is cleared (four bytes written in place, outside the checksum).

A file that is truncated, fails its checksum, is of another format version or whose header or
sections do not hold together is ignored with one warning and replaced, never trusted; files are
written to a temporary name and renamed (:func:`~hermes_core._atomic_write.write_bytes_atomically`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import struct
import time
import weakref
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from pathlib import Path
from typing import Any, Final

from hermes_core._atomic_write import write_bytes_atomically
from hermes_core._cache_files import (
    CACHE_FRAME_SIZE,
    cache_dir_blocked,
    cache_frame,
    read_cache_frame,
)
from hermes_core._cache_files import CacheFileError as _Unusable

__all__ = [
    "CACHE_FOLDER",
    "FORMAT_VERSION",
    "RACY_NS",
    "CachedCatalog",
    "WrittenEntries",
    "cache_path",
    "content_hash",
    "decode_entry",
    "entry_encoder",
    "load_cached",
    "save_cached",
]

logger = logging.getLogger(__name__)

CACHE_FOLDER: Final = "catalogs"
"""The folder of the cache directory catalog files are kept in."""
FORMAT_VERSION: Final = 4
"""The layout of the file, and the checks its contents passed; a file of another version is
ignored. (2: an entry naming another server than ``tools.catalogs[].server`` is refused, so a
file cached under 1 may hold one; 3: an entry whose schema is over the size cap is left out,
so a file cached under 2 may hold one; 4: a description over the size cap is shortened, so a
file cached under 3 may hold one whole.)"""
RACY_NS: Final = 2_000_000_000
"""A catalog changed less than this before it was read (the coarsest timestamp granularity of
common filesystems, FAT's 2 s) may change again unseen by stat: its cache is checked by hash."""

MAGIC: Final = b"HRMSCTLG"
_FLAG = struct.Struct("<I")
_FLAG_AT = CACHE_FRAME_SIZE
"""The hash-check flag, between the frame and the header: outside the checksum, so clearing it
rewrites four bytes in place."""
_START = _FLAG_AT + _FLAG.size
_SUFFIX = ".catalog"
_SECTIONS = ("names", "group_ids", "offsets", "entries")
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class CachedCatalog:
    """A catalog as the cache holds it: names, each tool's group id (into ``groups``), each
    group's size, and the JSON of each tool's ``[description, input_schema]``
    (``entries[offsets[i]:offsets[i+1]]``), mapped from ``path``; ``sha256`` is the catalog
    file's."""

    path: Path
    names: list[str]
    group_ids: Sequence[int]
    groups: list[str]
    group_sizes: list[int]
    offsets: Sequence[int]
    entries: memoryview
    sha256: str

    def entry(self, position: int) -> tuple[str, Mapping[str, Any]]:
        """The description and input schema of the tool at ``position``."""
        start, end = self.offsets[position], self.offsets[position + 1]
        return decode_entry(bytes(self.entries[start:end]))


def cache_path(directory: Path, catalog: Path, server: str | None) -> Path:
    """Where the cache of ``catalog`` read with ``server`` is kept in ``directory``."""
    name = hashlib.sha256(f"{catalog.resolve()}\x00{server or ''}".encode()).hexdigest()[:40]
    return directory / CACHE_FOLDER / f"{name}{_SUFFIX}"


def content_hash(catalog: Path) -> str:
    """The SHA-256 of the catalog file's bytes."""
    digest = hashlib.sha256()
    with open(catalog, "rb") as file:
        while chunk := file.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _identity(status: os.stat_result) -> list[int]:
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def load_cached(
    directory: Path, catalog: Path, server: str | None, status: os.stat_result
) -> CachedCatalog | None:
    """The cached entries of ``catalog`` (whose stat is ``status``), or ``None`` when there are
    none for this file as it is now, or (with one warning) when the cache file is not one this
    version wrote whole."""
    path = cache_path(directory, catalog, server)
    try:
        with open(path, "rb") as file:
            if os.fstat(file.fileno()).st_size < _START:
                raise _Unusable("it is truncated")
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if not cache_dir_blocked(directory):
            logger.warning("cannot read the catalog cache %s: %s; reading %s", path, error, catalog)
        return None
    except _Unusable as problem:
        logger.warning("ignoring the catalog cache %s: %s; reading %s", path, problem, catalog)
        return None
    try:
        header, view, check = _parse(mapped)
        if header.get("source") != [str(catalog.resolve()), server or "", *_identity(status)]:
            return None  # the catalog changed since: read it again
        if check and not _same_content(path, catalog, status, header.get("sha256")):
            return None
        return _cached(path, header, view)
    except _Unusable as problem:
        logger.warning("ignoring the catalog cache %s: %s; reading %s", path, problem, catalog)
        return None
    except OSError:
        return None  # the catalog went away while it was hashed: read it (and say why)


def _same_content(path: Path, catalog: Path, status: os.stat_result, sha256: object) -> bool:
    """Whether ``catalog`` (whose stat was ``status``) still holds the bytes the cache at
    ``path`` was made from; when it does and it last changed long enough ago, the cache's
    hash-check flag is cleared."""
    started = time.time_ns()
    if not _unchanged_since(catalog, status, sha256):
        return False
    # A write after `started` falls in a later timestamp tick than the last change: stat sees it.
    if started > max(status.st_mtime_ns, status.st_ctime_ns) + RACY_NS:
        with contextlib.suppress(OSError), open(path, "r+b") as file:
            file.seek(_FLAG_AT)
            file.write(_FLAG.pack(0))
    return True


def _unchanged_since(catalog: Path, status: os.stat_result, sha256: object) -> bool:
    """Whether ``catalog`` has the stat data ``status`` and the hash ``sha256`` now."""
    return _identity(os.stat(catalog)) == _identity(status) and content_hash(catalog) == sha256


def _parse(mapped: mmap.mmap) -> tuple[dict[str, Any], memoryview, bool]:
    """The header of ``mapped``, a view of the sections and whether the catalog is to be
    hashed first, every check of the layout passed; raises :class:`_Unusable`."""
    header, header_length, _ = read_cache_frame(
        mapped, magic=MAGIC, version=FORMAT_VERSION, kind="catalog cache file", header_at=_START
    )
    (check,) = _FLAG.unpack_from(mapped, _FLAG_AT)
    return header, memoryview(mapped)[_START + header_length :], bool(check)


def _cached(path: Path, header: Mapping[str, Any], data: memoryview) -> CachedCatalog:
    sections = header.get("sections")
    groups = header.get("groups")
    count = header.get("count")
    sha256 = header.get("sha256")
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        raise _Unusable("its header is unreadable (groups)")
    if not isinstance(count, int) or count < 0 or not isinstance(sha256, str):
        raise _Unusable("its header is unreadable (count)")
    if not isinstance(sections, dict) or sorted(sections) != sorted(_SECTIONS):
        raise _Unusable("its header is unreadable (sections)")
    parts: dict[str, memoryview] = {}
    for name in _SECTIONS:
        span = sections[name]
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(type(value) is int and value >= 0 for value in span)
            or span[0] + span[1] > len(data)
        ):
            raise _Unusable(f"its header is unreadable ({name})")
        parts[name] = data[span[0] : span[0] + span[1]]
    try:
        names = bytes(parts["names"]).decode("ascii").split("\n") if count else []
        group_ids = parts["group_ids"].cast("i")
        offsets = parts["offsets"].cast("q")
    except (UnicodeDecodeError, TypeError) as error:
        raise _Unusable(f"its sections are unreadable ({error})") from error
    if len(names) != count or len(group_ids) != count or len(offsets) != count + 1:
        raise _Unusable("its sections do not hold the same number of tools")
    # Counted in C once: the range check and each group's size (what the listing and the
    # assembly read first) in one pass over the ids.
    counted = Counter(group_ids.tolist())
    if counted and (min(counted) < 0 or max(counted) >= len(groups)):
        raise _Unusable("its group ids are out of range")
    if offsets[0] != 0 or offsets[count] != len(parts["entries"]):
        raise _Unusable("its entry offsets do not match its entries")
    sizes = [counted[group] for group in range(len(groups))]
    return CachedCatalog(path, names, group_ids, groups, sizes, offsets, parts["entries"], sha256)


def decode_entry(data: bytes | str) -> tuple[str, Mapping[str, Any]]:
    """The description and input schema of one entry :func:`entry_encoder` wrote."""
    description, schema = json.loads(data)
    return description, schema


def entry_encoder() -> Callable[[object], str]:
    """What ``json.dumps(value, separators=(",", ":"))`` gives (ASCII, so lengths are bytes),
    by one C encoder made once: ``JSONEncoder.encode`` makes a new one a call, which is half
    the cost of encoding a small entry, and a catalog has hundreds of thousands of them. Parsed
    JSON has no cycles, so the encoder keeps no record of the containers it is inside."""
    make = getattr(json.encoder, "c_make_encoder", None)
    plain = json.JSONEncoder(separators=(",", ":"))
    if make is None:  # a Python without json's C accelerator
        return plain.encode
    chunks = make(
        None,
        plain.default,
        json.encoder.encode_basestring_ascii,
        None,
        ":",
        ",",
        False,
        False,
        True,
    )
    return lambda value: "".join(chunks(value, 0))


def save_cached(
    directory: Path,
    catalog: Path,
    server: str | None,
    status: os.stat_result,
    read_at_ns: int,
    sha256: str,
    names: Sequence[str],
    group_ids: Sequence[int],
    groups: Sequence[str],
    entries: Sequence[str],
) -> WrittenEntries | None:
    """Write the checked entries of ``catalog`` (as it was when read: ``status``, whose read
    began at ``read_at_ns``) atomically, each given as the JSON of its ``[description,
    input_schema]`` (:func:`entry_encoder`'s); ``None`` (with a warning) when the directory
    cannot take it. The entries are written one by one, never joined in memory; the file
    written then answers them (:class:`WrittenEntries`), so the caller need not keep them."""
    path = cache_path(directory, catalog, server)
    offsets = array("q", accumulate(map(len, entries), initial=0))
    blobs = {
        "names": "\n".join(names).encode("ascii"),
        "group_ids": array("i", group_ids).tobytes(),
        "offsets": offsets.tobytes(),
    }
    sizes = {name: len(blob) for name, blob in blobs.items()}
    sizes["entries"] = offsets[-1]
    sections: dict[str, list[int]] = {}
    position = 0
    for name in _SECTIONS:
        sections[name] = [position, sizes[name]]
        position += sizes[name]
    changed = max(status.st_mtime_ns, status.st_ctime_ns)
    check = changed + RACY_NS > read_at_ns
    if check and time.time_ns() > changed + RACY_NS:
        # Read too soon after its last change, but checking it now settles it: a later write
        # would show in stat.
        with contextlib.suppress(OSError):
            check = not _unchanged_since(catalog, status, sha256)
    header = json.dumps(
        {
            "source": [str(catalog.resolve()), server or "", *_identity(status)],
            "sha256": sha256,
            "count": len(names),
            "groups": list(groups),
            "sections": sections,
        }
    ).encode()
    checksum = zlib.crc32(header)
    for name in _SECTIONS[:-1]:
        checksum = zlib.crc32(blobs[name], checksum)
    for entry in entries:
        checksum = zlib.crc32(entry.encode("ascii"), checksum)
    total = _START + len(header) + position
    frame = cache_frame(MAGIC, FORMAT_VERSION, len(header), total, checksum)
    try:
        write_bytes_atomically(
            path,
            chain(
                [
                    frame,
                    _FLAG.pack(int(check)),
                    header,
                    *(blobs[name] for name in _SECTIONS[:-1]),
                ],
                # One entry at a time: a list of them would be the whole section again.
                (entry.encode("ascii") for entry in entries),
            ),
            durable=False,
        )
    except OSError as error:
        if not cache_dir_blocked(path.parent):
            logger.warning("cannot save the catalog cache in %s: %s", path.parent, error)
        return None
    start = _START + len(header) + sections["entries"][0]
    return WrittenEntries.open(path, frame, total, start, offsets)


class WrittenEntries:
    """The entries of the catalog cache file this process has just written, each read from
    the file when it is asked for (``os.pread``: none of them is mapped or kept in memory; a
    catalog of 330,000 tools with real schemas has 400 MB of them). The file stays open, so a
    later replacement of the cache file (another process caching a changed catalog) changes
    nothing here."""

    def __init__(self, path: Path, descriptor: int, start: int, offsets: Sequence[int]) -> None:
        self.path = path
        self._descriptor = descriptor
        self._start = start
        self._offsets = offsets
        weakref.finalize(self, os.close, descriptor)

    @classmethod
    def open(
        cls, path: Path, frame: bytes, total: int, start: int, offsets: Sequence[int]
    ) -> WrittenEntries | None:
        """The entries of ``path`` if it is still the file written with ``frame`` (its magic,
        version, lengths and checksum) and ``total`` bytes; else ``None``."""
        if not hasattr(os, "pread"):  # Windows: the caller keeps its entries
            return None
        try:
            descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        try:
            same = os.fstat(descriptor).st_size == total
            same = same and os.pread(descriptor, len(frame), 0) == frame
        except OSError:
            same = False
        if not same:
            os.close(descriptor)
            return None
        return cls(path, descriptor, start, offsets)

    def entry(self, position: int) -> tuple[str, Mapping[str, Any]]:
        """The description and input schema of the tool at ``position``."""
        begin, end = self._offsets[position], self._offsets[position + 1]
        data = os.pread(self._descriptor, end - begin, self._start + begin)
        if len(data) != end - begin:
            raise OSError(f"the catalog cache {self.path} was cut short while in use")
        return decode_entry(data)

"""The persisted index: a built index's arrays in one file of the cache directory, mapped into
memory instead of indexing the same catalog again.

A file is named after its key: a hash of the indexed documents (every field, in registry
order), of the field weights and of the engine's tokenizer (:func:`engine_fingerprint`: the
source of the modules that turn documents into arrays, and the stemmer's version), so a change
of any of them is another file. Its layout:

    magic (8 bytes) | format version (u32) | header length (u32) | file length (u64)
    | CRC-32 of all that follows (u32) | header (JSON: key, groups, arrays) | arrays

each array at a 64-byte boundary. Files are written to a temporary name and renamed, so a
reader sees a whole file or none. A file that is truncated, fails its checksum, is of another
format version or holds another key is ignored with one warning (the index is rebuilt and the
file rewritten), never trusted; :class:`IndexStore` keeps the most recently used
:data:`KEEP_FILES` files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import Stemmer

from hermes_core._plugin_support import (
    CACHE_FRAME_SIZE,
    cache_dir_blocked,
    cache_frame,
    make_private_dir,
    read_cache_frame,
)
from hermes_core._plugin_support import CacheFileError as _Unusable
from hermes_core.search import KeyedDocuments, ToolDocument

__all__ = [
    "FORMAT_VERSION",
    "KEEP_FILES",
    "IndexStore",
    "StoredIndex",
    "content_key",
    "engine_fingerprint",
]

logger = logging.getLogger(__name__)

FORMAT_VERSION: Final = 1
"""The layout of the file; a file of another version is ignored."""
KEEP_FILES: Final = 8
"""How many index files a cache directory keeps (the most recently used)."""

MAGIC: Final = b"HRMSBM25"
_START = CACHE_FRAME_SIZE
_ALIGN = 64
_SUFFIX = ".bm25"
_DTYPES = frozenset({"uint8", "uint16", "int32", "int64"})
_FINGERPRINTED = ("tokenize.py", "lexicon.py", "fields.py", "build.py", "store.py")
"""The modules whose source decides what arrays a catalog gives."""


@cache
def engine_fingerprint() -> str:
    """A hash of what turns documents into arrays: the source of :data:`_FINGERPRINTED` and
    the stemmer's version. An edit of the tokenizer therefore never meets an old file."""
    digest = hashlib.sha256(f"format {FORMAT_VERSION}\n".encode())
    here = Path(__file__).resolve().parent
    for name in _FINGERPRINTED:
        digest.update(name.encode() + b"\n" + (here / name).read_bytes())
    # PyStemmer's own version(), not importlib.metadata's, which scans every installed
    # distribution (13 ms of a warm CLI search).
    digest.update(str(Stemmer.version()).encode())
    return digest.hexdigest()


def content_key(documents: Sequence[ToolDocument], field_weights: Mapping[str, float]) -> str:
    """The key of the index of ``documents`` (in this order) with these field weights: a hash
    of every string of every document, field by field, with every string's length and every
    tuple's size, so that no two catalogs give the same bytes; of
    :class:`~hermes_core.KeyedDocuments`, a hash of their key (no document is made)."""
    digest = hashlib.sha256(engine_fingerprint().encode())
    digest.update(repr(sorted(field_weights.items())).encode())
    if isinstance(documents, KeyedDocuments):  # the host vouches for them by their key
        digest.update(b"keyed documents\x00" + documents.key.encode())
        return digest.hexdigest()
    for start in range(0, len(documents), _KEY_CHUNK):
        chunk = documents[start : start + _KEY_CHUNK]
        names = [document.name for document in chunk]
        descriptions = [document.description for document in chunk]
        groups = [document.group for document in chunk]
        parameters = [document.parameter_names for document in chunk]
        described = [document.parameter_descriptions for document in chunk]
        fields: list[Sequence[str]] = [names, descriptions, groups]
        fields += [list(chain.from_iterable(parameters)), list(chain.from_iterable(described))]
        for strings in fields:
            digest.update("\x00".join(strings).encode("utf-8", "surrogatepass"))
            digest.update(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)).data)
        for tuples in (parameters, described):
            digest.update(np.fromiter(map(len, tuples), dtype=np.int64, count=len(tuples)).data)
    return digest.hexdigest()


_KEY_CHUNK: Final = 65536


@dataclass(frozen=True)
class StoredIndex:
    """The arrays of a stored index (read-only, mapped from ``path``) and its group names."""

    path: Path
    groups: list[str]
    arrays: dict[str, npt.NDArray[Any]]


class IndexStore:
    """Index files in ``directory`` (created on the first save)."""

    def __init__(self, directory: Path, keep: int = KEEP_FILES) -> None:
        self.directory = directory
        self.keep = keep

    def path_for(self, key: str) -> Path:
        """Where the index of ``key`` is kept."""
        return self.directory / f"{key[:40]}{_SUFFIX}"

    def load(self, key: str) -> StoredIndex | None:
        """The index saved under ``key``; ``None`` when there is none, or (with one warning)
        when the file there is not one this version wrote for this key."""
        path = self.path_for(key)
        try:
            with open(path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size < _START:
                    raise _Unusable("it is truncated")
                mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            if not cache_dir_blocked(self.directory):
                logger.warning(
                    "cannot read the bm25 index cache %s: %s; rebuilding it", path, error
                )
            return None
        except _Unusable as problem:
            logger.warning("ignoring the bm25 index cache %s: %s; rebuilding it", path, problem)
            return None
        try:
            stored = _parse(path, mapped, key)
        except _Unusable as problem:
            logger.warning("ignoring the bm25 index cache %s: %s; rebuilding it", path, problem)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept by the next clean-up
        return stored

    def save(
        self, key: str, arrays: Mapping[str, npt.NDArray[Any]], groups: Sequence[str]
    ) -> Path | None:
        """Write ``arrays`` under ``key``, atomically; ``None`` (with a warning) when the
        directory cannot take it. Older files beyond :attr:`keep` are removed."""
        path = self.path_for(key)
        layout: dict[str, list[Any]] = {}
        offset = 0
        for name, array in arrays.items():
            offset = -(-offset // _ALIGN) * _ALIGN
            layout[name] = [str(array.dtype), list(array.shape), offset]
            offset += array.nbytes
        header = json.dumps({"key": key, "groups": list(groups), "arrays": layout}).encode()
        base = -(-(_START + len(header)) // _ALIGN) * _ALIGN
        total = base + offset
        try:
            make_private_dir(self.directory)
            descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
            try:
                with os.fdopen(descriptor, "wb") as file:
                    checksum = 0
                    chunks: list[bytes | memoryview] = [
                        header,
                        bytes(base - _START - len(header)),
                    ]
                    position = 0
                    for name, array in arrays.items():
                        start = layout[name][2]
                        chunks.append(bytes(start - position))
                        chunks.append(np.ascontiguousarray(array).data.cast("B"))
                        position = start + array.nbytes
                    for chunk in chunks:
                        checksum = zlib.crc32(chunk, checksum)
                    file.write(cache_frame(MAGIC, FORMAT_VERSION, len(header), total, checksum))
                    for chunk in chunks:
                        file.write(chunk)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as error:
            if not cache_dir_blocked(self.directory):
                logger.warning("cannot save the bm25 index cache in %s: %s", self.directory, error)
            return None
        self._clean_up(path)
        return path

    def _clean_up(self, kept: Path) -> None:
        try:
            files = sorted(
                (entry.stat().st_mtime, entry.path)
                for entry in os.scandir(self.directory)
                if entry.name.endswith(_SUFFIX) and entry.path != str(kept)
            )
            for _, name in files[: max(len(files) - (self.keep - 1), 0)]:
                os.unlink(name)
        except OSError:  # another process cleaning up at the same time
            pass


def _parse(path: Path, mapped: mmap.mmap, key: str) -> StoredIndex:
    """The index in ``mapped``, every check passed; raises :class:`_Unusable`."""
    header, header_length, total = read_cache_frame(
        mapped, magic=MAGIC, version=FORMAT_VERSION, kind="bm25 index file"
    )
    if header.get("key") != key:
        raise _Unusable("it holds another catalog's index")
    groups = header.get("groups")
    layout = header.get("arrays")
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise _Unusable("its header is unreadable (groups)")
    if not isinstance(layout, dict):
        raise _Unusable("its header is unreadable (arrays)")
    base = -(-(_START + header_length) // _ALIGN) * _ALIGN
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, entry in layout.items():
        try:
            dtype_name, shape, offset = entry
            dtype = np.dtype(dtype_name)
            shape = tuple(int(extent) for extent in shape)
            offset = int(offset)
        except (TypeError, ValueError) as error:
            raise _Unusable(f"its header is unreadable ({name})") from error
        items = int(np.prod(shape, dtype=np.int64))
        if dtype_name not in _DTYPES or min(shape, default=0) < 0 or offset < 0:
            raise _Unusable(f"its header is unreadable ({name})")
        if base + offset + items * dtype.itemsize > total:
            raise _Unusable("it is truncated")
        if items:
            array = np.frombuffer(mapped, dtype=dtype, count=items, offset=base + offset)
        else:
            array = np.zeros(0, dtype=dtype)
        arrays[name] = array.reshape(shape)
    return StoredIndex(path, groups, arrays)

"""Document vectors cached on disk by content hash, so only new or changed tools are embedded.

A vector's key is the sha256 of the encoder's key (model, weights, text cut) and the exact text
embedded: a tool whose embedded text did not change is never embedded again, whatever its name
or place in the catalog. One file per encoder key, ``embeddings-<key>.npz`` in the plugin's
cache directory, holds every vector the process has seen (two arrays: ``keys``, n x 32 bytes,
and ``vectors``, n x dimension float32). It is rewritten atomically when new vectors were added,
so a reader sees the old file or the new one. A file that cannot be read or has the wrong shape
is ignored (with a warning) and rewritten at the next save.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hermes_search_hybrid.files import replacing

__all__ = ["EmbeddingStore", "content_key"]

logger = logging.getLogger("hermes_search_hybrid")

Vectors = npt.NDArray[np.float32]
_KEY_BYTES = 32


def content_key(encoder_key: str, text: str) -> bytes:
    """The cache key of ``text`` as embedded by the encoder ``encoder_key``."""
    return hashlib.sha256(f"{encoder_key}\n{text}".encode()).digest()


class EmbeddingStore:
    """Vectors by content key: those read from ``path`` when the store was made, plus those
    added since. Each backend has its own store; two backends (or processes) saving to one file
    keep each other's vectors."""

    def __init__(self, path: Path, dimension: int) -> None:
        self.path = path
        self.dimension = dimension
        self._vectors: dict[bytes, Vectors] = {}
        self._unsaved = 0
        self._lock = threading.Lock()
        self._read()

    def _read(self) -> None:
        self._vectors = self._load(report=True)

    def _load(self, *, report: bool = False) -> dict[bytes, Vectors]:
        """The vectors in :attr:`path`; none when it is missing, unreadable or malformed (then
        with a warning when ``report``)."""
        try:
            # np.load given a path leaves the file open when it is not an archive.
            with self.path.open("rb") as stream, np.load(stream, allow_pickle=False) as data:
                keys = data["keys"]
                vectors = data["vectors"]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            if report:
                logger.warning(
                    "ignoring the damaged embedding cache %s (%s): it will be rebuilt",
                    self.path,
                    exc,
                )
            return {}
        if (
            keys.dtype != np.uint8
            or keys.ndim != 2
            or keys.shape[1] != _KEY_BYTES
            or vectors.dtype != np.float32
            or vectors.shape != (keys.shape[0], self.dimension)
        ):
            if report:
                logger.warning(
                    "ignoring the embedding cache %s: its arrays have the wrong shape "
                    "(keys %s %s, vectors %s %s): it will be rebuilt",
                    self.path,
                    keys.dtype,
                    keys.shape,
                    vectors.dtype,
                    vectors.shape,
                )
            return {}
        return {bytes(key): vector for key, vector in zip(keys, vectors, strict=True)}

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, keys: Sequence[bytes]) -> Vectors:
        """The vectors cached under ``keys``, one row each (``KeyError`` for a missing one)."""
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[key] for key in keys])

    def missing(self, keys: Iterable[bytes]) -> list[bytes]:
        """The keys of ``keys`` that have no vector, each once, in order."""
        return [key for key in dict.fromkeys(keys) if key not in self._vectors]

    def put(self, keys: Sequence[bytes], vectors: Vectors) -> None:
        """Remember ``vectors[i]`` under ``keys[i]`` (on disk at the next :meth:`save`)."""
        with self._lock:
            for key, vector in zip(keys, vectors, strict=True):
                if key not in self._vectors:
                    self._unsaved += 1
                self._vectors[key] = vector

    def save(self) -> None:
        """Write every vector to :attr:`path` when some were added since the last save, keeping
        those another process wrote there in the meantime."""
        with self._lock:
            if not self._unsaved:
                return
            for key, vector in self._load().items():
                self._vectors.setdefault(key, vector)
            keys = np.frombuffer(b"".join(self._vectors), dtype=np.uint8).reshape(-1, _KEY_BYTES)
            vectors = np.stack(list(self._vectors.values())).astype(np.float32, copy=False)
            try:
                with replacing(self.path) as stream:
                    np.savez(stream, keys=keys, vectors=vectors)
            except OSError as exc:
                logger.warning("cannot write the embedding cache %s: %s", self.path, exc)
                return
            self._unsaved = 0

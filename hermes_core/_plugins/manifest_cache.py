"""Parsed manifests kept between processes: ``$HERMES_CACHE_DIR/plugin-manifests.json``.

Every ``hermes`` command discovers the plugins again, and parsing their ``plugin.yaml`` files
with the pure-Python, limited YAML loader was the largest single step of a plugin listing
(about 1.5 ms a manifest, 19 bundled ones). The parsed data of a manifest is kept under the
sha256 of its text, so an entry is only ever used for the very text it was parsed from; the
data then goes through the same validation as a fresh parse. A file that is missing, too large,
not this format or unreadable is ignored (and replaced at the end of the discovery); writing
it is atomic and its failure is ignored: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

__all__ = ["CACHE_FILE", "ManifestCache", "manifest_cache", "persistent_cache"]

log = logging.getLogger(__name__)

CACHE_FILE: Final = "plugin-manifests.json"
_FORMAT: Final = 1
_MAX_BYTES: Final = 4 << 20
_MAX_ENTRIES: Final = 512
_CURRENT: ContextVar[ManifestCache | None] = ContextVar("hermes_manifest_cache", default=None)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json_exact(data: Any) -> bool:
    """Whether ``data`` is made of what JSON keeps exactly (a manifest loader's output is)."""
    if data is None or isinstance(data, bool | str):
        return True
    if isinstance(data, list):
        return all(_json_exact(item) for item in data)
    if isinstance(data, dict):
        return all(isinstance(k, str) and _json_exact(v) for k, v in data.items())
    return False


class ManifestCache:
    """The parsed manifests of one cache file, read on first use and saved once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, Any] | None = None
        self._used: set[str] = set()
        self._added = False

    def _read(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            try:
                with self.path.open("rb") as stream:
                    raw = stream.read(_MAX_BYTES + 1)
                if len(raw) <= _MAX_BYTES:
                    document = json.loads(raw)
                    if isinstance(document, dict) and document.get("format") == _FORMAT:
                        entries = document.get("entries")
                        if isinstance(entries, dict):
                            self._entries = entries
            except FileNotFoundError:
                pass
            except (OSError, ValueError, RecursionError) as exc:
                log.debug("ignoring %s: %s", self.path, exc)
        return self._entries

    def get(self, text: str) -> tuple[bool, Any]:
        """``(True, data)`` when the manifest ``text`` was parsed before, else ``(False,
        None)``."""
        key = _key(text)
        entries = self._read()
        if key not in entries:
            return False, None
        self._used.add(key)
        return True, entries[key]

    def keep(self, text: str, data: Any) -> None:
        """Keep ``data``, parsed from ``text``, when it is not kept yet and JSON holds it
        exactly."""
        key = _key(text)
        entries = self._read()
        self._used.add(key)
        if key not in entries and _json_exact(data):
            entries[key] = data
            self._added = True

    def save(self) -> None:
        """Write the file when something was added: the entries used now first, then the
        others up to the limit."""
        if not self._added:
            return
        from hermes_core._atomic_write import write_bytes_atomically

        entries = self._read()
        kept = [key for key in entries if key in self._used]
        kept += [key for key in entries if key not in self._used][: _MAX_ENTRIES - len(kept)]
        document = {"format": _FORMAT, "entries": {key: entries[key] for key in kept}}
        try:
            write_bytes_atomically(self.path, [json.dumps(document).encode()], durable=False)
        except OSError as exc:
            log.debug("could not write %s: %s", self.path, exc)
        self._added = False


@contextmanager
def manifest_cache(cache_dir: Path) -> Iterator[ManifestCache]:
    """Within the block, manifests parsed in this context are kept in ``cache_dir``'s file,
    saved when the block ends."""
    cache = ManifestCache(cache_dir / CACHE_FILE)
    token = _CURRENT.set(cache)
    try:
        yield cache
    finally:
        _CURRENT.reset(token)
        cache.save()


def persistent_cache() -> ManifestCache | None:
    """The cache of the discovery running in this context, if any."""
    return _CURRENT.get()

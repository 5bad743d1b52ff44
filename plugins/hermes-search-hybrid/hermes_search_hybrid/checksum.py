"""The model's files are the upstream ones: a sha256 check, done once per file version.

The plugin's wheel carries the files published by the model's authors, the Hugging Face
repository ``sentence-transformers/all-MiniLM-L6-v2`` at revision
``1110a243fdf4706b3f48f1d95db1a4f5529b4d41`` (README.md, "The model's files"), and before it
uses a file it compares it with the size and sha256 pinned in ``upstream.json`` beside this
module (the build checks them too; see the README for where the values were found). Hashing
the 90 MB of weights takes about half a second, so the result is remembered in the cache
directory, keyed by the file's path, size and modification time: a changed file is hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from hermes_search_hybrid.files import write_atomically

__all__ = [
    "TOKENIZER_FILE",
    "TOKENIZER_SHA256",
    "UPSTREAM_SHA256",
    "UPSTREAM_SIZE",
    "WEIGHTS_FILE",
    "ModelChecksumError",
    "sha256_of",
    "verify_weights",
]

_UPSTREAM: dict[str, Any] = json.loads(
    (Path(__file__).with_name("upstream.json")).read_text(encoding="utf-8")
)
UPSTREAM_REPOSITORY: str = _UPSTREAM["model"]
UPSTREAM_REVISION: str = _UPSTREAM["revision"]
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
UPSTREAM_SHA256: str = _UPSTREAM["files"][WEIGHTS_FILE]["sha256"]
UPSTREAM_SIZE: int = _UPSTREAM["files"][WEIGHTS_FILE]["size"]
TOKENIZER_SHA256: str = _UPSTREAM["files"][TOKENIZER_FILE]["sha256"]

_CHUNK = 1 << 20


class ModelChecksumError(RuntimeError):
    """A model file is not the upstream file; names the file and both digests."""


def sha256_of(path: Path) -> str:
    """The hex sha256 of the file at ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(path: Path) -> dict[str, int | str]:
    status = path.stat()
    return {"path": str(path.resolve()), "size": status.st_size, "mtime_ns": status.st_mtime_ns}


def _remembered(record_file: Path) -> list[dict[str, object]]:
    try:
        records = json.loads(record_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []  # no record yet, or a damaged one: hash again
    return [item for item in records if isinstance(item, dict)] if isinstance(records, list) else []


def verify_weights(weights: Path, record_file: Path, expected: str = UPSTREAM_SHA256) -> bool:
    """Check that ``weights`` (or another model file) has the sha256 ``expected``; raise
    :class:`ModelChecksumError` when it has not. ``record_file`` remembers files already found
    good (by path, size and modification time), so the file is hashed only when it is new or
    changed. Returns whether the file was hashed (``False``: a remembered verification was
    used)."""
    try:
        stamp = _stamp(weights)
    except OSError as exc:
        raise ModelChecksumError(f"cannot read the model file {weights}: {exc}") from exc
    records = _remembered(record_file)
    if {**stamp, "sha256": expected} in records:
        return False
    actual = sha256_of(weights)
    if actual != expected:
        raise ModelChecksumError(
            f"refusing to load {weights}: its sha256 is {actual}, but the upstream file "
            f"({UPSTREAM_REPOSITORY} at revision {UPSTREAM_REVISION}) has {expected}. "
            "The file was modified or is not the release this plugin was checked against: "
            "reinstall the plugin (pip install --force-reinstall hermes-core-search-hybrid)."
        )
    others = [item for item in records if item.get("path") != stamp["path"]]
    with contextlib.suppress(OSError):  # an unwritable cache only costs a new check next time
        write_atomically(record_file, json.dumps([*others, {**stamp, "sha256": actual}]))
    return True

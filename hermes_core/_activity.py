"""The activity log: one JSON line per finished tool call, with secret-looking values redacted.

Writing happens in batches on a background thread, so a call pays only for appending a small
dict to a queue; :meth:`ActivityLog.flush` writes everything queued at once. What a call is
logged with is a bounded preview (:func:`preview`): a 63 MB argument costs what its first
4,096 characters cost. The file rotates by size (:data:`MAX_LOG_BYTES`, :data:`LOG_BACKUPS`).
What counts as a secret is :mod:`hermes_core._redaction`'s.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from hermes_core._private_files import make_private_dir
from hermes_core._redaction import MAX_DEPTH, REDACTED, TOO_DEEP, hides_value, redact_text
from hermes_core._specs import ActivityEvent

if sys.platform != "win32":  # no flock there: each process appends unlocked
    import fcntl

log = logging.getLogger(__name__)

ACTIVITY_LOG_NAME: Final = "activity.jsonl"

PREVIEW_CHARACTERS: Final = 4096
"""Characters of one string the activity log keeps; a longer one is cut and says its length."""
PREVIEW_ITEMS: Final = 100
"""Entries of one list or mapping the activity log keeps; a marker says how many more."""
PREVIEW_TOTAL: Final = 32_768
"""Characters of text one logged value keeps in all; text past it is only counted."""
PREVIEW_MARGIN: Final = 1024
"""Characters past a cut that are redacted with the kept text (then dropped), so that a
secret starting before the cut is recognised whole and never kept in part."""


def event_record(event: ActivityEvent, timestamp: float) -> dict[str, Any]:
    """The JSON object written to the activity log for ``event``."""
    return {
        "time": timestamp,
        "name": event.name,
        "status": event.status,
        "duration_ms": event.duration_ms,
        "session_id": event.session_id,
        "parent_id": event.parent_id,
        "source": event.source,
        "message": event.message,
        "arguments": event.arguments,
    }


def _record_line(record: dict[str, Any]) -> str:
    """``record`` as one JSON line; what is not JSON data as its redacted ``repr``, and a
    minimal record when even that fails (a 5000-digit integer has no ``repr``)."""
    try:
        return json.dumps(record, default=_redacted_repr, ensure_ascii=False)
    except Exception:
        pass
    try:
        arguments = _redacted_repr(record.get("arguments"))
        return json.dumps(
            {**record, "arguments": arguments}, default=_redacted_repr, ensure_ascii=False
        )
    except Exception as exc:
        minimal = {key: _plain(record.get(key)) for key in _MINIMAL_KEYS}
        minimal["arguments"] = f"[not serializable: {type(exc).__name__}]"
        return json.dumps(minimal, ensure_ascii=False)


def preview(value: Any) -> Any:
    """``value`` as the activity log records it: :func:`~hermes_core._redaction.redact` of a
    bounded copy.

    Text longer than :data:`PREVIEW_CHARACTERS` keeps its start and says its length
    (``… [cut: 66,060,288 characters in all]``), lists and mappings keep their first
    :data:`PREVIEW_ITEMS` entries, and all the text kept is at most :data:`PREVIEW_TOTAL`
    characters: the cost is that of the preview, never of the value. The cut never keeps part
    of a secret (:func:`_cut_text`).
    """
    if value is None:  # an error message of a call that succeeded: the common case
        return None
    return _preview(value, 0, [PREVIEW_TOTAL])


def _preview(value: Any, depth: int, budget: list[int]) -> Any:
    if isinstance(value, str):
        return _preview_text(value, budget)
    if value is None or isinstance(value, int | float):
        return value
    if isinstance(value, Mapping):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        kept: dict[Any, Any] = {}
        pairs: Iterable[tuple[Any, Any]] = value.items()
        if len(value) > PREVIEW_ITEMS:
            pairs = itertools.islice(pairs, PREVIEW_ITEMS)
        for key, item in pairs:
            # Names are kept as they are (redact() never changed them), unless very long.
            if isinstance(key, str) and len(key) > PREVIEW_CHARACTERS:
                key = _preview_text(key, budget)
            kept[key] = REDACTED if hides_value(key, item) else _preview(item, depth + 1, budget)
        if len(value) > PREVIEW_ITEMS:
            kept["…"] = f"[{len(value) - PREVIEW_ITEMS:,} more entries cut]"
        return kept
    if isinstance(value, list | tuple | set | frozenset):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        items: Iterable[Any] = value
        if len(value) > PREVIEW_ITEMS:
            items = itertools.islice(value, PREVIEW_ITEMS)
        listed = [_preview(item, depth + 1, budget) for item in items]
        if len(value) > PREVIEW_ITEMS:
            listed.append(f"[{len(value) - PREVIEW_ITEMS:,} more items cut]")
        return listed
    if isinstance(value, bytes | bytearray) and len(value) > PREVIEW_CHARACTERS:
        return _preview_text(repr(bytes(value[:PREVIEW_CHARACTERS])), budget) + (
            f"… [cut: {len(value):,} bytes in all]"
        )
    return value


def _preview_text(text: str, budget: list[int]) -> str:
    size = len(text)
    if size <= PREVIEW_CHARACTERS and size <= budget[0]:
        budget[0] -= size
        return redact_text(text)
    keep = max(0, min(PREVIEW_CHARACTERS, budget[0]))
    kept = _cut_text(text, keep)
    budget[0] -= len(kept)
    return f"{kept}… [cut: {len(text):,} characters in all]"


def _cut_text(text: str, keep: int) -> str:
    """The redacted start of ``text``, at most about ``keep`` characters, holding no part of a
    secret that the cut would split.

    The start is redacted twice: alone, and with :data:`PREVIEW_MARGIN` characters more, which
    show a secret the cut splits whole (or by enough of its shape to be recognised). Where the
    two differ, the margin saw something the cut hid: only what they share is kept, followed by
    :data:`REDACTED`."""
    if keep <= 0:
        return ""
    alone = redact_text(text[:keep])
    wider = redact_text(text[: keep + PREVIEW_MARGIN])
    if wider.startswith(alone):
        return alone
    pairs = enumerate(zip(alone, wider, strict=False))
    shared = next((index for index, (a, b) in pairs if a != b), min(len(alone), len(wider)))
    return alone[:shared] + REDACTED


def _redacted_repr(value: Any) -> str:
    return redact_text(repr(value))


_MINIMAL_KEYS: Final = (
    "time",
    "name",
    "status",
    "duration_ms",
    "session_id",
    "parent_id",
    "source",
    "message",
)


def _plain(value: Any) -> str | float | None:
    if value is None or isinstance(value, float):
        return value
    try:
        return str(value)
    except Exception:
        return f"[unprintable {type(value).__name__}]"


MAX_LOG_BYTES: Final = 10 * 1024 * 1024
"""The size past which the activity log rotates: ``activity.jsonl`` becomes
``activity.jsonl.1`` (and ``.1`` becomes ``.2``...)."""
LOG_BACKUPS: Final = 5
"""Rotated files kept beside the log; the oldest goes. With :data:`MAX_LOG_BYTES`, the log
takes at most about 60 MiB."""


class ActivityLog:
    """A JSON-lines file of activity events, written in batches by one background thread.

    ``write`` only appends to an in-memory queue (no wake-up, no lock): the writer thread drains
    it every ``interval`` seconds, and :meth:`flush` drains it at once. A record that cannot be
    serialized is written with its arguments replaced by their ``repr``. A batch that would
    take the file past ``max_bytes`` rotates it first, keeping ``backups`` older files.
    """

    def __init__(
        self,
        path: Path,
        *,
        interval: float = 0.2,
        max_bytes: int = MAX_LOG_BYTES,
        backups: int = LOG_BACKUPS,
    ) -> None:
        self.path = path
        self.interval = interval
        self.max_bytes = max_bytes
        self.backups = backups
        self._queue: deque[dict[str, Any]] = deque()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def write(self, event: ActivityEvent) -> None:
        """Queue ``event`` for writing."""
        if self._closed:
            return
        self._queue.append(event_record(event, time.time()))
        if self._thread is None:
            self._start()

    def _start(self) -> None:
        with self._write_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="hermes-activity-log", daemon=True
                )
                self._thread.start()

    def flush(self) -> None:
        """Write everything queued so far, now."""
        with self._write_lock:
            self._drain()

    def close(self) -> None:
        """Write what is queued and stop the writer thread; later writes are dropped."""
        self._closed = True
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=10.0)
        self.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if self._queue:
                try:
                    self.flush()
                except Exception:  # the writer must outlive any one bad batch
                    log.exception("writing the activity log %s failed", self.path)

    def _drain(self) -> None:
        queue = self._queue
        batch = []
        while queue:
            batch.append(queue.popleft())
        if batch:
            self._append(batch)

    def _append(self, batch: list[dict[str, Any]]) -> None:
        # A lone surrogate cannot be UTF-8: it is written as its JSON escape (\\ud800), which
        # reads back as the same string, instead of failing the whole batch.
        data = "".join(_record_line(record) + "\n" for record in batch).encode(
            "utf-8", "backslashreplace"
        )
        try:
            descriptor = self._locked()
            try:
                size = os.fstat(descriptor).st_size
                if size and size + len(data) > self.max_bytes:
                    self._rotate()
                    os.close(descriptor)
                    descriptor = -1
                    descriptor = self._locked()
                with os.fdopen(descriptor, "ab") as handle:
                    descriptor = -1
                    handle.write(data)
            finally:
                if descriptor >= 0:
                    os.close(descriptor)
        except OSError as exc:
            log.warning("cannot write the activity log %s: %s", self.path, exc)

    def _locked(self) -> int:
        """The log opened for appending and locked: several hermes processes may share it, and
        the lock makes "full? rotate, write" one step for each. A file another process rotated
        while this one waited is let go for the new one."""
        descriptor = self._open()
        if sys.platform == "win32":
            return descriptor
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        for _ in range(2):
            if self._is_current(descriptor):
                break
            os.close(descriptor)
            descriptor = self._open()
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        return descriptor

    def _open(self) -> int:
        try:
            return os.open(self.path, _APPEND_FLAGS, _FILE_MODE)
        except FileNotFoundError:
            make_private_dir(self.path.parent)
            return os.open(self.path, _APPEND_FLAGS, _FILE_MODE)

    def _is_current(self, descriptor: int) -> bool:
        """Whether ``descriptor`` is still the file at :attr:`path` (another process may have
        rotated it while this one waited for the lock)."""
        try:
            here, there = os.fstat(descriptor), os.stat(self.path)
        except OSError:
            return False
        return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)

    def _rotate(self) -> None:
        """``activity.jsonl.N-1`` -> ``.N`` ... ``activity.jsonl`` -> ``.1``; the oldest goes."""
        if self.backups <= 0:
            self.path.unlink(missing_ok=True)
            return
        name = self.path.name
        for index in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{name}.{index}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{name}.{index + 1}"))
        os.replace(self.path, self.path.with_name(f"{name}.1"))


_APPEND_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT
_FILE_MODE: Final = 0o600
"""The log holds what tools were called with: only its owner may read it."""

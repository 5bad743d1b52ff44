"""The activity log: one JSON line per finished tool call, with secret-looking values redacted.

Writing happens in batches on a background thread, so a call pays only for appending a small
dict to a queue; :meth:`ActivityLog.flush` writes everything queued at once.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from hermes_core.specs import ActivityEvent

log = logging.getLogger(__name__)

REDACTED: Final = "[redacted]"
ACTIVITY_LOG_NAME: Final = "activity.jsonl"

_SECRET_KEY: Final = re.compile(
    r"(api[_-]?key|access[_-]?key|token|secret|passw(or)?d|credential|auth(?!ors?(?![a-z]))|cookie"
    r"|private[_-]?key|session[_-]?key)",
    re.IGNORECASE,
)
_SECRET_VALUE: Final = re.compile(
    r"(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|(?i:bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,})"
)
_SECRET_ASSIGNMENT: Final = re.compile(
    r"(?i)(\b[A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|credential|auth(?!ors?(?![a-z])))"
    r"[A-Za-z0-9_]*\s*=\s*)"
    r"(\"[^\"]*\"|'[^']*'|[^\s;&|'\"]+)"
)
"""``export OPENAI_API_KEY=abcd``, ``PGPASSWORD=x psql``, ``--password=x``, ``?token=x``."""
_MYSQL_PASSWORD: Final = re.compile(r"(\bmysql(?:dump|admin)?\b[^\n;|&]*?\s-p)([^\s;|&]+)")
_URL_CREDENTIALS: Final = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):([^/\s@]+)@")
_CURL_USER: Final = re.compile(r"((?:^|\s)(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"']+):([^\s\"']+)")


def redact(value: Any) -> Any:
    """A copy of ``value`` where secret-named keys and secret-looking strings are replaced.

    A key is secret-named when it contains ``key``-like words (``api_key``, ``token``,
    ``password``, ``secret``, ``auth``...); a string is secret-looking when it holds a known
    credential shape (``sk-...``, ``ghp_...``, ``AKIA...``, ``Bearer ...``, a private key block),
    or assigns one (``PGPASSWORD=x``, ``mysql -px``, ``https://user:pass@``, ``curl -u u:p``).
    A string holding a JSON object or array is parsed and redacted as data.
    """
    if isinstance(value, str):
        return _redact_text(value)
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if isinstance(key, str) and _SECRET_KEY.search(key) and item not in (None, "")
            else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


def _redact_text(text: str) -> str:
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            cleaned = redact(parsed)
            if cleaned != parsed:
                return json.dumps(cleaned, ensure_ascii=False)
    if len(text) >= 16:
        text = _SECRET_VALUE.sub(REDACTED, text)
    if "=" in text:
        text = _SECRET_ASSIGNMENT.sub(rf"\1{REDACTED}", text)
    if "-p" in text:
        text = _MYSQL_PASSWORD.sub(rf"\1{REDACTED}", text)
    if "@" in text:
        text = _URL_CREDENTIALS.sub(rf"\1:{REDACTED}@", text)
    if "-u" in text:
        text = _CURL_USER.sub(rf"\1:{REDACTED}", text)
    return text


def event_record(event: ActivityEvent, timestamp: float) -> dict[str, Any]:
    """The JSON object written to the activity log for ``event``."""
    return {
        "time": timestamp,
        "name": event.name,
        "status": event.status,
        "duration_ms": event.duration_ms,
        "session_id": event.session_id,
        "source": event.source,
        "message": event.message,
        "arguments": event.arguments,
    }


def _record_line(record: dict[str, Any]) -> str:
    """``record`` as one JSON line; its arguments as text when they are not JSON data, and a
    minimal record when even that fails (a 5000-digit integer has no ``repr``)."""
    try:
        return json.dumps(record, default=repr, ensure_ascii=False)
    except Exception:
        pass
    try:
        return json.dumps(
            {**record, "arguments": repr(record.get("arguments"))}, default=repr, ensure_ascii=False
        )
    except Exception as exc:
        minimal = {key: _plain(record.get(key)) for key in _MINIMAL_KEYS}
        minimal["arguments"] = f"[not serializable: {type(exc).__name__}]"
        return json.dumps(minimal, ensure_ascii=False)


_MINIMAL_KEYS: Final = ("time", "name", "status", "duration_ms", "session_id", "source", "message")


def _plain(value: Any) -> str | float | None:
    if value is None or isinstance(value, float):
        return value
    try:
        return str(value)
    except Exception:
        return f"[unprintable {type(value).__name__}]"


class ActivityLog:
    """A JSON-lines file of activity events, written in batches by one background thread.

    ``write`` only appends to an in-memory queue (no wake-up, no lock): the writer thread drains
    it every ``interval`` seconds, and :meth:`flush` drains it at once. A record that cannot be
    serialized is written with its arguments replaced by their ``repr``.
    """

    def __init__(self, path: Path, *, interval: float = 0.2) -> None:
        self.path = path
        self.interval = interval
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
            try:
                descriptor = os.open(self.path, _APPEND_FLAGS, _FILE_MODE)
            except FileNotFoundError:
                _make_private_dir(self.path.parent)
                descriptor = os.open(self.path, _APPEND_FLAGS, _FILE_MODE)
            with os.fdopen(descriptor, "ab") as handle:
                handle.write(data)
        except OSError as exc:
            log.warning("cannot write the activity log %s: %s", self.path, exc)


_APPEND_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT
_FILE_MODE: Final = 0o600
"""The log holds what tools were called with: only its owner may read it."""
_DIR_MODE: Final = 0o700


def _make_private_dir(directory: Path) -> None:
    """Create ``directory`` readable by its owner only; missing parents get the default mode,
    and a directory that already exists keeps the mode its owner gave it."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    directory.mkdir(mode=_DIR_MODE, exist_ok=True)

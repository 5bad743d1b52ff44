"""The activity log: one JSON line per finished tool call, with secret-looking values redacted.

Writing happens in batches on a background thread, so a call pays only for appending a small
dict to a queue; :meth:`ActivityLog.flush` writes everything queued at once. What a call is
logged with is a bounded preview (:func:`preview`): a 63 MB argument costs what its first
4,096 characters cost. The file rotates by size (:data:`MAX_LOG_BYTES`, :data:`LOG_BACKUPS`).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core.private_files import make_private_dir
from hermes_core.specs import ActivityEvent

if sys.platform != "win32":  # no flock there: each process appends unlocked
    import fcntl

if TYPE_CHECKING:
    import regex

log = logging.getLogger(__name__)

REDACTED: Final = "[redacted]"
ACTIVITY_LOG_NAME: Final = "activity.jsonl"

_SECRET_KEY: Final = re.compile(
    r"(api[_-]?key|access[_-]?key|token|secret|passw(or)?d|passphrase|credential"
    r"|auth(?!ors?(?![a-z]))|cookie|private[_-]?key|session[_-]?key)",
    re.IGNORECASE,
)
"""A key naming a secret: ``api_key``, ``github_token``, ``Authorization``, not ``author``."""


def _alternation(*alternatives: str) -> str:
    """A regex matching any of ``alternatives`` (each starts with a plain character) that is not
    right after a letter or a digit (``task-...`` holds no ``sk-`` key), written to start with a
    character class of their first characters.

    Why: ``re`` jumps straight to the next position where a leading class matches, while an
    alternation is tried at every position of the text: on a long file the class makes the
    pattern twice as fast.
    """
    rests: dict[str, list[str]] = {}
    for alternative in alternatives:
        rests.setdefault(alternative[0], []).append(alternative[1:])
    branches = "|".join(f"(?<={first})(?:{'|'.join(rest)})" for first, rest in rests.items())
    return f"[{''.join(rests)}](?<![A-Za-z0-9].)(?:{branches})"


_SECRET_VALUE: Final = re.compile(
    _alternation(
        "sk-[A-Za-z0-9_-]{16,}",
        "sk_(?:live|test)_[A-Za-z0-9]{10,}",
        "rk_(?:live|test)_[A-Za-z0-9]{10,}",
        "whsec_[A-Za-z0-9]{20,}",
        "gh[pousr]_[A-Za-z0-9]{20,}",
        "github_pat_[A-Za-z0-9_]{20,}",
        "glpat-[A-Za-z0-9_-]{20,}",
        "hf_[A-Za-z0-9]{30,}",
        "npm_[A-Za-z0-9]{36}",
        "pypi-AgE[A-Za-z0-9_-]{50,}",
        "xox[abprs]-[A-Za-z0-9-]{10,}",
        "AKIA[0-9A-Z]{16}",
        "AIza[0-9A-Za-z_-]{30,}",
        r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
        r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "xapp-[0-9]-[A-Za-z0-9-]{10,}",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        r"B(?i:earer|asic)\s+[A-Za-z0-9._~+/=-]{12,}",
        r"b(?i:earer|asic)\s+[A-Za-z0-9._~+/=-]{12,}",
    )
)
"""Credentials recognisable by their shape: OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``,
``sk_test_``, ``rk_live_`` and ``whsec_``, GitHub, GitLab ``glpat-``, Hugging Face ``hf_``, npm,
PyPI, Slack ``xox?-`` and ``xapp-``, AWS ``AKIA``, Google ``AIza``, Vault ``hvs.``, SendGrid
``SG.``, Shopify ``shpat_``, JWTs, and ``Bearer``/``Basic``
credentials."""

_PRIVATE_KEY_BLOCK: Final = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
)
"""A whole private key block, BEGIN line to END line (to the end of the text when cut off)."""

# The rules that find a secret by the name given to it. The three written with ``regex`` start
# at the ``=`` or ``:`` and look back for the name (``re`` has no variable-length lookbehind):
# starting at the rarer punctuation keeps them fast on long text.

_SECRET_WORDS: Final = ("key", "token", "secret", "pass", "credential", "auth", "cookie", "bearer")
"""Every rule of a secret's name needs one of these words (in any case) in the text."""

_NAME_END: Final = (
    r"(?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|session[_-]?key|token|secret"
    r"|passw(?:or)?d|passphrase|credentials?|authorization|auth|cookie|bearer)"
)
"""How the name of a secret ends, in ``NAME: value`` and ``--NAME value`` (``max_tokens``,
``--token-file`` and ``author`` do not end so)."""

_VALUE: Final = r"(\"[^\"]*\"|'[^']*'|[^\s;&|'\"]+)"
"""A value in a command: quoted, or up to a space, a quote or a shell operator."""

_SECRET_ASSIGNMENT: Final = (
    r"(?i)(?<=(?:key|token|secret|pass|passw(?:or)?d|passphrase|credentials?|auth)[ \t]*)(=[ \t]*)"
    + _VALUE
)
"""``export OPENAI_API_KEY=abcd``, ``PGPASSWORD=x psql``, ``--password=x``, ``?token=x``,
``DB_PASS=x``, ``api_key = "x"``: a name ending with a secret word, ``=``, the value."""

_SECRET_LINE: Final = (
    r"(?im)(?<=^[ \t]*(?:-[ \t]+)?[\"']?[A-Za-z0-9_.-]*" + _NAME_END + r"[\"']?[ \t]*)"
    r"(:[ \t]+)([^\s#][^\n]*)"
)
"""A YAML-style line that begins with a secret's name (``  db_password: value``,
``- token: value``): the rest of the line goes, spaces and all."""

_SECRET_HEADER: Final = (
    r"(?i)(?<=" + _NAME_END + r"[\"']?[ \t]*)(:[ \t]*)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|(?:(?:bearer|basic|token|digest)[ \t]+)?[^\s\"',;})]+)"
)
"""``X-Api-Key: value``, ``Authorization: Bearer value``, ``"password": "value"`` in text."""

_SECRET_FLAG: Final = re.compile(
    r"(?i)(-(?<!\S-)-?(?:[A-Za-z0-9]+[_-])*?" + _NAME_END + r"[ \t]+)(?![-<>|;&])" + _VALUE
)
"""``--api-key value``, ``--with-token value``, ``--password value``: a flag (after a space or at
the start) whose name ends with a secret word, then its value. ``-p value`` is not one:
``mkdir -p``, ``ssh -p 22`` and ``git add -p`` mean something else; see
:data:`_PASSWORD_OPTIONS`."""


def _password_option(command: str, option: str) -> re.Pattern[str]:
    """``option`` and its value, within 200 characters after ``command`` (unbounded, a text of
    many ``mysql`` words took quadratic time)."""
    return re.compile(rf"(\b(?:{command})\b[^\n;|&]{{0,200}}?\s{option})" + _VALUE)


_PASSWORD_OPTIONS: Final = (
    ("mysql", _password_option(r"mysql(?:dump|admin|sh)?", "-p")),
    ("7z", _password_option(r"7z[ar]?", "-p")),
    ("sshpass", _password_option("sshpass", r"-p[ \t]*")),
    (
        "login",
        _password_option(
            r"(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login",
            r"-p[ \t]*",
        ),
    ),
    ("twine", _password_option(r"twine[ \t]+(?:upload|register)", r"-p[ \t]*")),
    ("az", _password_option(r"az[ \t]+login", r"-p[ \t]*")),
    ("redis-cli", _password_option("redis-cli", r"-a[ \t]*")),
    ("ldap", _password_option("ldap[a-z]+", r"-w[ \t]*")),
    ("zip", _password_option("(?:un)?zip", r"-P[ \t]*")),
)
"""``(word, pattern)``: short options that give a password to these commands only, each tried
when its word is in the text: ``mysql -pSECRET`` (attached; ``mysql -p db`` asks for it),
``7z a -pSECRET``, ``sshpass -p SECRET``, ``docker login -p SECRET`` (podman, nerdctl, buildah,
skopeo, oras, ``helm registry login``), ``twine upload -p``, ``az login -p``, ``redis-cli -a``,
``ldapsearch -w``, ``zip -P``. Elsewhere ``-p`` is a port (``docker run -p 8080:80``,
``ssh -p 22``), ``mkdir -p`` or ``git add -p``."""

_PASSWORD_OPTION_GATE: Final = re.compile(r"-(?<=\s-)[pPaw]")
"""What each of :data:`_PASSWORD_OPTIONS` needs, searched once before any is tried (starting at
the ``-``, rarer than a space, makes it 20 times faster on source code)."""

_OPENSSL_PASS: Final = re.compile(r"(-pass(?:in|out)?[ \t]+pass:)" + _VALUE)
"""``openssl ... -pass pass:SECRET`` (``env:NAME`` and ``file:PATH`` name no secret)."""

_CREDENTIAL_URLS: Final = (
    (
        "hooks.slack.com/",
        re.compile(r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_@./-]+"),
    ),
    ("/api/webhooks/", re.compile(r"(discord(?:app)?\.com/api/webhooks/)[A-Za-z0-9_@./-]+")),
    (".webhook.office.com/", re.compile(r"(\.webhook\.office\.com/webhookb2/)[A-Za-z0-9_@./-]+")),
    ("api.telegram.org/", re.compile(r"(api\.telegram\.org/(?:file/)?bot)[0-9]+:[A-Za-z0-9_-]+")),
)
"""``(marker, pattern)``: URLs whose path is the credential, each tried when its marker is in
the text: Slack and Discord webhooks, Microsoft Teams incoming webhooks, and a Telegram bot's
token in the Bot API's URL (its method, ``/sendMessage``, stays)."""

_URL_SIGNATURE: Final = re.compile(
    r"(?i)([?&](?:sig|signature|x-amz-signature|x-goog-signature)=)[^&\s'\"#]+"
)
"""The signature of a pre-signed URL (Azure SAS ``sig=``, S3 ``X-Amz-Signature=``, GCS), which
grants access to whoever holds the URL."""

_URL_CREDENTIALS: Final = re.compile(r"(://[^/\s:@]*):([^/\s@]+)@")
_CURL_USER: Final = re.compile(r"(-(?<!\S-)(?:u|-user)(?:\s+|=)?[\"']?[^\s:\"']+):([^\s\"']+)")

PREVIEW_CHARACTERS: Final = 4096
"""Characters of one string the activity log keeps; a longer one is cut and says its length."""
PREVIEW_ITEMS: Final = 100
"""Entries of one list or mapping the activity log keeps; a marker says how many more."""
PREVIEW_TOTAL: Final = 32_768
"""Characters of text one logged value keeps in all; text past it is only counted."""
PREVIEW_MARGIN: Final = 1024
"""Characters past a cut that are redacted with the kept text (then dropped), so that a
secret starting before the cut is recognised whole and never kept in part."""

MAX_DEPTH: Final = 64
"""Data nested deeper than this is shown as :data:`TOO_DEEP` (it cannot be a real argument,
and redacting it must not overflow the stack)."""
TOO_DEEP: Final = "[nested too deeply]"


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` where secret-named keys and secret-looking strings are replaced.

    A key is secret-named when it contains ``key``-like words (``api_key``, ``token``,
    ``password``, ``secret``, ``auth``...); a string is secret-looking when it holds a known
    credential shape (``sk-...``, ``ghp_...``, ``glpat-...``, a JWT, ``Bearer ...``, a whole
    private key block), or gives one to a secret name (``PGPASSWORD=x``, ``--api-key x``,
    ``X-Api-Key: x``, a YAML line ``password: x``, ``mysql -px``, ``docker login -p x``,
    ``https://user:pass@``, ``curl -u u:p``), or is a URL whose path or signature is the
    credential (Slack, Discord and Teams webhooks, Telegram bot URLs, ``?sig=``). A string
    holding a JSON object or array is parsed and redacted as data. Data nested deeper than
    :data:`MAX_DEPTH` becomes :data:`TOO_DEEP`: it cannot overflow the stack.
    """
    if isinstance(value, str):
        return _redact_text(value)
    if value is None or isinstance(value, int | float):  # before the slower ``Mapping`` check
        return value
    if isinstance(value, Mapping):
        if _depth >= MAX_DEPTH:
            return TOO_DEEP
        return {
            key: REDACTED
            if _is_secret_key(key) and not _is_blank(item)
            else redact(item, _depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        if _depth >= MAX_DEPTH:
            return TOO_DEEP
        return [redact(item, _depth + 1) for item in value]
    return value


@functools.lru_cache(maxsize=1024)
def _is_secret_key(key: object) -> bool:
    # Cached: tools are called with the same few argument names over and over.
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value)


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    """``pattern`` (one whose look-behind varies in width, which ``re`` refuses) compiled with
    the ``regex`` package, imported only once a text names a secret: its import and these
    compilations cost 25 ms, which every command that logs would otherwise pay at start."""
    import regex

    return regex.compile(pattern)


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
    # Cheap membership tests first: most arguments hold none of these, and each regex walks the
    # whole text.
    if len(text) >= 16:
        if "PRIVATE KEY" in text:
            text = _PRIVATE_KEY_BLOCK.sub(REDACTED, text)
        text = _SECRET_VALUE.sub(REDACTED, text)
    assigns, names, flags = "=" in text, ":" in text, "-" in text
    if (assigns or names or flags) and _names_a_secret(text):
        if assigns:
            text = _compiled(_SECRET_ASSIGNMENT).sub(_keep_name, text)
        if names:
            text = _compiled(_SECRET_LINE).sub(_keep_name, text)
            text = _compiled(_SECRET_HEADER).sub(_keep_name, text)
        if flags:
            text = _SECRET_FLAG.sub(_keep_name, text)
    if flags and _PASSWORD_OPTION_GATE.search(text) is not None:
        for word, pattern in _PASSWORD_OPTIONS:
            if word in text:
                text = pattern.sub(_keep_name, text)
        if "pass:" in text:
            text = _OPENSSL_PASS.sub(_keep_name, text)
    if "-u" in text:
        text = _CURL_USER.sub(_keep_user, text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(_keep_url_user, text)
        if assigns and ("ig=" in text or "ature=" in text or "IG=" in text or "ATURE=" in text):
            text = _URL_SIGNATURE.sub(_keep_name, text)
    if "hook" in text or "telegram" in text:
        for marker, pattern in _CREDENTIAL_URLS:
            if marker in text:
                text = pattern.sub(_keep_name, text)
    return text


# Functions, not ``\1`` templates: ``re`` parses a template on every call, matched or not,
# which costs more than the search on short text.


def _keep_name(match: re.Match[str] | regex.Match[str]) -> str:
    return match.group(1) + REDACTED


def _keep_user(match: re.Match[str]) -> str:
    return f"{match.group(1)}:{REDACTED}"


def _keep_url_user(match: re.Match[str]) -> str:
    return f"{match.group(1)}:{REDACTED}@"


def _names_a_secret(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_WORDS)


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
    """``value`` as the activity log records it: :func:`redact` of a bounded copy.

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
            secret = _is_secret_key(key) and not _is_blank(item)
            kept[key] = REDACTED if secret else _preview(item, depth + 1, budget)
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
        return _redact_text(text)
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
    alone = _redact_text(text[:keep])
    wider = _redact_text(text[: keep + PREVIEW_MARGIN])
    if wider.startswith(alone):
        return alone
    pairs = enumerate(zip(alone, wider, strict=False))
    shared = next((index for index, (a, b) in pairs if a != b), min(len(alone), len(wider)))
    return alone[:shared] + REDACTED


def _redacted_repr(value: Any) -> str:
    return _redact_text(repr(value))


_MINIMAL_KEYS: Final = ("time", "name", "status", "duration_ms", "session_id", "source", "message")


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

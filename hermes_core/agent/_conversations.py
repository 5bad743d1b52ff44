"""The conversations of a transcript store as a person manages them (``hermes sessions``):
each one's facts read cheaply, one found by its id or a unique prefix of it, its subagents',
and deletion that never takes a transcript another process is writing.

Only files named as a session id (:data:`SESSION_NAME`) are conversations: anything else put
in the folder is neither listed nor deleted. A transcript that is no regular file (a FIFO, a
link to a device) is never opened. A transcript that is a symbolic link is read through it,
and deleting it removes the link, never what it leads to.

Listing reads a file of at most :data:`COUNTED_BYTES` once, whole: its first header, the first
message the person wrote, its latest header and title and its messages counted (as ``/resume``
counts them) all come from those bytes. It reads no larger file whole: the first header and
message come from its start, the latest header and title from its end
(:meth:`Transcript.header`, :func:`~hermes_core.agent._titles.title_of`), and its messages are
not counted.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hermes_core.agent._titles import quoted, title_in, title_of
from hermes_core.agent._transcripts import (
    Transcript,
    TranscriptError,
    TranscriptStore,
    counts_as_message,
    latest_record,
)

if sys.platform != "win32":
    import fcntl

SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
"""How a session id is written (hermes' are 32 hexadecimal digits)."""
COUNTED_BYTES = 8 * 1024 * 1024
"""The largest transcript whose messages a listing counts (a larger one is not read whole)."""
_HEAD_BYTES = 1024 * 1024
_CHUNK = 65536


class ConversationError(ValueError):
    """No such conversation, or one that cannot be deleted now (another process writes it)."""


@dataclass(frozen=True)
class Recorded:
    """One conversation as a listing shows it."""

    id: str
    path: Path
    started: float | None
    """Its first header's time."""
    changed: float
    """When its transcript was last written (the file's modification time)."""
    size: int
    model: str | None
    """The model it last ran with (its latest header's)."""
    cwd: str | None
    parent: str | None
    messages: int | None
    """The messages that count (:func:`counts_as_message`), ``None`` when not counted (a
    file larger than :data:`COUNTED_BYTES`, or a damaged one)."""
    first_message: str
    damaged: str | None = None
    """Why its contents cannot be read back (the line that is no message), else ``None``."""
    subagents: int = 0
    job: str | None = None
    """The cron job it is a run of (its latest header's ``job``), else ``None``."""
    title: str | None = None
    """Its latest title (:mod:`hermes_core.agent._titles`), looked for in the file's last
    :data:`COUNTED_BYTES`; ``None`` when it has none there."""


def stored(store: TranscriptStore) -> list[Transcript]:
    """The transcripts of ``store`` that are conversations (named as a session id, a regular
    file or a link to one), the one appended to last first."""
    found = []
    for transcript in store.recent():
        if not SESSION_NAME.match(transcript.path.stem):
            continue
        try:
            if stat.S_ISREG(transcript.path.stat().st_mode):
                found.append(transcript)
        except OSError:  # removed since it was listed, or a link leading nowhere
            continue
    return found


def recorded(transcript: Transcript) -> Recorded:
    """``transcript``'s facts, read cheaply (see the module's notes)."""
    status = transcript.path.stat()
    messages: int | None = None
    damaged = None
    if status.st_size <= COUNTED_BYTES:
        # Read once: its start, its end and its count from the same bytes.
        data = transcript.read()
        first_header, first_message = _head_of(data)
        ends = io.BytesIO(data)
        header = latest_record(ends, None) or first_header
        title = title_in(ends)
        try:
            found = transcript.contents(data)[0]
        except TranscriptError as error:
            damaged = str(error)
        else:
            messages = sum(1 for message in found if counts_as_message(message.content))
            first_message = next((m.content for m in found if m.role == "user"), "")
    else:
        first_header, first_message = _head(transcript.path)
        try:
            # A conversation taken up again has a later one; one so far from the end is not
            # looked for (the first, from the start, stands in).
            header = transcript.header(within=COUNTED_BYTES) or first_header
            title = title_of(transcript, COUNTED_BYTES)
        except OSError:
            header, title = first_header, None
    started = first_header.get("time")
    return Recorded(
        id=transcript.path.stem,
        path=transcript.path,
        started=float(started) if isinstance(started, int | float) else None,
        changed=status.st_mtime,
        size=status.st_size,
        model=_text(header.get("model")),
        cwd=_text(header.get("cwd")),
        parent=_text(header.get("parent")),
        job=_text(header.get("job")),
        messages=messages,
        first_message=first_message,
        damaged=damaged,
        title=title,
    )


def latest_header(transcript: Transcript) -> dict[str, Any]:
    """``transcript``'s latest header, read from its ends only: the last one in its last
    :data:`COUNTED_BYTES` (:meth:`Transcript.header`), else its first (one so far from the
    end of a larger file is not looked for). :class:`OSError` when it cannot be read."""
    return transcript.header(within=COUNTED_BYTES) or _head(transcript.path)[0]


def conversations(store: TranscriptStore, here: Path | None = None) -> list[Recorded]:
    """The conversations of ``store`` (no subagent's whose parent is there: each says how many
    subagents it had), of the working directory ``here`` only when given, the one appended to
    last first. A transcript that cannot be read any more (removed meanwhile) is left out."""
    every = []
    for transcript in stored(store):
        try:
            every.append(recorded(transcript))
        except OSError:
            continue
    children: dict[str, int] = {}
    for found in every:
        if found.parent:
            children[found.parent] = children.get(found.parent, 0) + 1
    ids = {found.id for found in every}
    resolved = None if here is None else here.resolve()
    return [
        _with_subagents(found, children.get(found.id, 0))
        for found in every
        # A subagent's whose parent is gone is one of its own: else no listing shows it, and
        # no prune ever takes it.
        if (not found.parent or found.parent not in ids)
        and (resolved is None or _of(found, resolved))
    ]


def children_of(store: TranscriptStore, session: str) -> list[Recorded]:
    """The conversations of ``session``'s own subagents (not theirs), the first started first;
    one that cannot be read any more is left out."""
    found = []
    for transcript in stored(store):
        if transcript.path.stem == session:
            continue
        try:
            if latest_header(transcript).get("parent") == session:
                found.append(recorded(transcript))
        except OSError:
            continue
    return sorted(found, key=lambda child: (child.started or child.changed, child.id))


def _with_subagents(found: Recorded, count: int) -> Recorded:
    return replace(found, subagents=count) if count else found


def _of(found: Recorded, here: Path) -> bool:
    return found.cwd is not None and Path(found.cwd).resolve() == here


@dataclass(frozen=True)
class Naming:
    """What SESSION names among a store's transcripts, in the order it is taken (the one rule
    of ``--resume`` and ``hermes sessions``): the conversation whose id it is, else those whose
    latest title it is, else those whose id starts with it (an exact title is what the person
    typed whole, a prefix only a part)."""

    exact: Transcript | None
    titled: list[Transcript]
    """The conversations titled SESSION (none when one's id is SESSION), latest first."""
    prefixed: list[Transcript]
    """Those whose id starts with SESSION (none when one's id is SESSION)."""


def naming(store: TranscriptStore, session: str, among: Sequence[Transcript]) -> Naming:
    """What ``session`` names among ``among`` (an id, a start of one) and the conversations of
    ``store`` (a title): see :class:`Naming`."""
    exact = next((t for t in among if t.path.stem == session), None)
    if exact is not None:
        return Naming(exact, [], [])
    prefixed = [t for t in among if t.path.stem.startswith(session)]
    return Naming(None, titled(store, session.strip()), prefixed)


def named(store: TranscriptStore, session: str) -> tuple[Transcript, list[Transcript]]:
    """The conversation ``session`` names (:class:`Naming`: its id, its title, a unique start
    of its id) and, when taken by its title, the others whose id starts with ``session`` (to
    be said); :class:`ConversationError` when none or several do (a title several share is
    never a guess), or ``session`` is blank (the start of every id: ``hermes sessions delete
    "$ID"`` with ``ID`` unset)."""
    if not session.strip():
        raise ConversationError(
            "SESSION is empty: give a conversation's id, the start of one or its title "
            "(hermes sessions list shows them)"
        )
    found = naming(store, session, stored(store))
    if found.exact is not None:
        return found.exact, []
    if len(found.titled) == 1:
        [taken] = found.titled
        return taken, [t for t in found.prefixed if t.path != taken.path]
    if found.titled:
        raise ConversationError(
            f"{len(found.titled)} conversations are titled {quoted(session.strip())} "
            f"({_ids(found.titled)}): give the id of the one meant"
        )
    if len(found.prefixed) == 1:
        return found.prefixed[0], []
    if found.prefixed:
        raise ConversationError(
            f"{session} is the start of {len(found.prefixed)} conversations "
            f"({_ids(found.prefixed)}): give more of the id"
        )
    raise ConversationError(
        f"no conversation {session} (an id, its start or a title) in {store.directory}: "
        "hermes sessions list --all shows their ids and titles"
    )


def _ids(transcripts: Sequence[Transcript]) -> str:
    listed = ", ".join(t.path.stem for t in transcripts[:5])
    return listed if len(transcripts) <= 5 else f"{listed}, ..."


def titled(store: TranscriptStore, title: str) -> list[Transcript]:
    """The conversations whose latest title is exactly ``title``, the one appended to last
    first (a transcript that cannot be read is left out)."""
    found = []
    for transcript in stored(store):
        try:
            if title_of(transcript, COUNTED_BYTES) == title:
                found.append(transcript)
        except OSError:
            continue
    return found


def subagents(store: TranscriptStore, sessions: Sequence[str]) -> list[Transcript]:
    """The transcripts of the subagents of ``sessions``, and of theirs, at any depth. The
    headers of ``sessions``' own transcripts are not read: one another process holds would
    keep this waiting before :func:`delete` could say so."""
    parents: dict[str, list[Transcript]] = {}
    for transcript in stored(store):
        if transcript.path.stem in sessions:
            continue
        try:
            parent = latest_header(transcript).get("parent")
        except OSError:
            continue
        if isinstance(parent, str) and parent:
            parents.setdefault(parent, []).append(transcript)
    found: list[Transcript] = []
    seen = set(sessions)
    waiting = list(sessions)
    while waiting:
        for child in parents.get(waiting.pop(), []):
            if child.path.stem not in seen:
                seen.add(child.path.stem)
                found.append(child)
                waiting.append(child.path.stem)
    return found


def delete(transcripts: Sequence[Transcript]) -> int:
    """Remove ``transcripts`` (a link: the link itself), all or none: each is locked as its
    writers lock it first, and :class:`ConversationError` names one another process holds
    (it is writing it right now). The bytes freed."""
    held: list[tuple[Transcript, int | None, int]] = []
    try:
        for transcript in transcripts:
            held.append(_locked(transcript))
        freed = 0
        for transcript, _, size in held:
            try:
                transcript.path.unlink()
            except FileNotFoundError:  # removed meanwhile (another delete)
                continue
            freed += size
        return freed
    finally:
        for _, descriptor, _ in held:
            if descriptor is not None:
                os.close(descriptor)


def _locked(transcript: Transcript) -> tuple[Transcript, int | None, int]:
    """``transcript`` with its open descriptor, locked (``None`` for a link, never opened:
    what it leads to is not this store's), and its size."""
    path = transcript.path
    try:
        # Not following a link, and not waiting on a FIFO put in its place meanwhile.
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return transcript, None, 0
        raise
    try:
        if sys.platform != "win32":
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise ConversationError(
            f"another process is writing or reading {path.stem} right now ({path}): "
            "end that conversation first, or try again in a moment"
        ) from None
    return transcript, descriptor, os.fstat(descriptor).st_size


def _head(path: Path) -> tuple[dict[str, Any], str]:
    """The first header and the first message of the person within the file's start."""
    with path.open("rb") as file:
        return _head_of(file.read(_HEAD_BYTES))


def _head_of(data: bytes) -> tuple[dict[str, Any], str]:
    """:func:`_head` of a file's bytes read (its first :data:`_HEAD_BYTES`)."""
    header: dict[str, Any] = {}
    start = 0
    while (end := data.find(b"\n", start, _HEAD_BYTES)) >= 0:
        line, start = data[start:end], end + 1
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") == "session" and not header:
            header = record
        elif record.get("role") == "user" and isinstance(record.get("content"), str):
            return header, record["content"]
    return header, ""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None

"""Transcripts: every message of a conversation, one JSON line each, under
``$HERMES_HOME/sessions/<session id>.jsonl`` (the store ``session_search`` reads).

Secrets are redacted as in the activity log (:mod:`hermes_core._redaction`): a key pasted in a
prompt or printed by a tool does not reach the disk. The directory is ``0700`` and each file
``0600``; lines are appended as the conversation goes, so a crash loses at most the message
being written.

Two processes may append to one transcript (a conversation taken up twice at once): each line
is written whole under an exclusive lock of the file (``flock``; none on Windows), and the
writer that finds the last line without its newline under the lock knows it was cut by a crash
(no writer holds the lock) and removes it before it appends. A writer that opened the file
before ``hermes sessions delete`` removed it (holding the lock) finds, once it has the lock,
that the file has no name left (no link, and its path names no file or another: some
filesystems say no link for every file): it writes nothing there (it would be lost with the
file), and opens it again as one deleted before it came. Reading never changes the file
and takes a shared lock (:func:`transcript_read_lock`): readers do not wait for each other,
and no writer removes a cut line under a reader half-way through it (the reader would read on
into the next line at the same offset). A last line without its newline is left out (it may be
one another process is writing right now).
"""

from __future__ import annotations

import errno
import io
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeGuard, TypeVar

from hermes_core._private_files import PRIVATE_FILE_MODE, private_dir
from hermes_core._redaction import redact, redact_text
from hermes_core.agent._history_records import KeptMessages, read_records
from hermes_core.agent._history_records import TranscriptError as TranscriptError  # named from here
from hermes_core.agent._sendable_history import (
    results_with_their_calls,
    unfinished_calls_answered,
)
from hermes_core.agent._wire import Message, ModelToolCall, ReasoningDetail, ThinkingBlock

if TYPE_CHECKING:
    from hermes_core._paths import Environment

if sys.platform != "win32":  # no flock there: each process appends unlocked
    import fcntl

_CHUNK = 65536


@contextmanager
def transcript_read_lock(file: BinaryIO) -> Iterator[None]:
    """Hold a shared lock of the open transcript ``file`` while it is read (see the module's
    notes; none on Windows, where no writer takes one)."""
    if sys.platform != "win32":
        fcntl.flock(file.fileno(), fcntl.LOCK_SH)
    try:
        yield
    finally:
        if sys.platform != "win32":
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def counts_as_message(content: object) -> TypeGuard[str]:
    """Whether a transcript message with ``content`` counts in a conversation's size: one with
    text (the person's, the model's, a tool's result), not a model message holding only tool
    calls. The one rule of the listing ``hermes chat --resume`` shows and of the sessions
    ``session_search`` answers with."""
    return isinstance(content, str) and bool(content.strip())


def _redacted_arguments(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):  # the model's text: not JSON, or nested too deep
        return redact_text(arguments)
    return json.dumps(redact(parsed), ensure_ascii=False)


_Signed = TypeVar("_Signed", ThinkingBlock, ReasoningDetail)


def _kept(entries: tuple[_Signed, ...]) -> tuple[_Signed, ...]:
    """A message's thinking kept (its vendor's blocks, or OpenRouter's entries of it): all, or
    none when one holds what redaction would change. A changed one no longer matches its
    signature (the vendor refuses it), and a conversation taken up again without them goes on
    without thinking for a request."""
    # Most messages have none: every transcript line passes here.
    if entries and any(redact_text(entry.text) != entry.text for entry in entries):
        return ()
    return entries


def redacted_message(message: Message) -> Message:
    """``message`` with its text and tool-call arguments redacted, its thinking blocks kept
    unless one would be (:func:`_kept`)."""
    return Message(
        role=message.role,
        content=redact_text(message.content),
        tool_calls=tuple(
            ModelToolCall(call.id, call.name, _redacted_arguments(call.arguments))
            for call in message.tool_calls
        ),
        tool_call_id=message.tool_call_id,
        name=message.name,
        is_error=message.is_error,
        thinking=_kept(message.thinking),
        reasoning_details=_kept(message.reasoning_details),
    )


class Transcript:
    """The transcript file of one session, appended message by message."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._header: dict[str, Any] | None = None  # the last one this object wrote

    def _append(self, record: dict[str, Any], *, creates: bool = True) -> None:
        # Once this object wrote a header, the file is opened without creating it: one deleted
        # meanwhile (hermes sessions delete while a chat goes on) is written again whole, its
        # header first, never as lines without one. Without a header, ``creates`` says whether
        # the record may begin a file (a title's may not: FileNotFoundError, a rename's).
        if self._header is None:
            self._write(_line(record), create=creates)
            return
        try:
            self._write(_line(record), create=False)
        except FileNotFoundError:
            header = {**self._header, "time": time.time()}
            private_dir(self.path.parent)
            self._write(_line(header) + _line(record), create=True)

    def _write(self, data: bytes, *, create: bool) -> None:
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        while not self._written(os.open(self.path, flags, PRIVATE_FILE_MODE), data):
            if not create:
                raise FileNotFoundError(
                    errno.ENOENT, "deleted while this was being written to it", str(self.path)
                )

    def _written(self, descriptor: int, data: bytes) -> bool:
        """Append ``data`` to the open ``descriptor`` under its lock (closing it); ``False``,
        nothing written, when the file was deleted before the lock was had: ``hermes sessions
        delete`` removes it holding the lock, and what this wrote would be lost with it."""
        try:
            if sys.platform != "win32":
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            try:
                status = os.fstat(descriptor)
                if status.st_nlink == 0 and _unnamed(self.path, status):
                    return False
                _drop_cut_line(descriptor, status.st_size)
                os.write(descriptor, data)
                return True
            finally:
                # Unlocked, not only closed: a child forked meanwhile (a plugin's thread) holds
                # the descriptor too, and the lock with it until it exits.
                if sys.platform != "win32":
                    fcntl.flock(descriptor, fcntl.LOCK_UN)
        finally:
            os.close(descriptor)

    def start(
        self,
        session_id: str,
        *,
        model: str,
        parent: str | None = None,
        cwd: str | None = None,
        effort: str | None = None,
        job: str | None = None,
    ) -> None:
        """Write the header line: the session, its model and reasoning effort (``None``: the
        model's default), its parent session, if any, its working directory (what ``hermes
        chat --continue`` looks for) and the cron job it is a run of, if any (which ``--continue``
        passes over). A conversation taken up again, or switching its model or
        effort, writes another when it goes on: the header read is the latest."""
        header = {
            "type": "session",
            "id": session_id,
            "model": model,
            "reasoning_effort": effort,
            "parent": parent,
            "cwd": cwd,
            "time": time.time(),
        }
        if job is not None:  # only then: the headers of conversations stay as they were
            header["job"] = job
        self._write(_line(header), create=True)
        self._header = header

    def header(self, within: int | None = None) -> dict[str, Any]:
        """The latest header line's fields: the model, the working directory the conversation
        last ran with (each process that took it up again wrote one); empty when there is
        none (with ``within``: none in the file's last ``within`` bytes). Read from the end
        of the file, so the header of a conversation taken up again is found without reading
        its start."""
        # Read, not mapped: a writer removing a line a crash cut shrinks the file, and a mapped
        # page past its new end would kill this process (SIGBUS).
        with self.path.open("rb") as file, transcript_read_lock(file):
            return latest_record(file, within)

    def history(self) -> list[Message]:
        """The messages a conversation taken up again starts from (``session/load``, ``hermes
        chat --resume``): the second of :meth:`contents`."""
        return self.contents()[1]

    def add(self, message: Message) -> None:
        """Append ``message``, redacted."""
        self._append(
            {"type": "message", "time": time.time(), **redacted_message(message).to_json()}
        )

    def compacted(self, replaced: int, summary: Message, kept: Sequence[Message]) -> None:
        """Append a compaction record: the conversation's first ``replaced`` messages gave way
        to ``summary``, followed by ``kept`` (copied whole, redacted: a conversation taken up
        again starts from them, whatever the lines before hold). Earlier lines stay as they
        are: ``session_search`` still finds the messages replaced."""
        self._append(
            {
                "type": "compaction",
                "time": time.time(),
                "replaced": replaced,
                "summary": redacted_message(summary).to_json(),
                "kept": [redacted_message(message).to_json() for message in kept],
            }
        )

    def undone(self, user_messages: int) -> None:
        """Append an undo record (``/undo``, ``/retry``): the conversation goes back to before
        its ``user_messages``-th user message from the end (:func:`before_user_message`), in
        the messages read and in the history taken up again. Earlier lines stay as they are:
        ``session_search`` still finds the messages taken back."""
        self._append({"type": "undo", "time": time.time(), "user_messages": user_messages})

    def titled(self, title: str | None) -> None:
        """Append a title record: the latest one names the conversation (``None``: it has
        none, :mod:`hermes_core.agent._titles`)."""
        self._append({"type": "title", "time": time.time(), "title": title}, creates=False)

    def messages(self) -> list[Message]:
        """The messages written so far (redacted as stored): the first of :meth:`contents`."""
        return self.contents()[0]

    def read(self) -> bytes:
        """The file's bytes, read whole under the readers' lock (:func:`transcript_read_lock`),
        for :meth:`contents` and whatever else is read from them (a listing reads one once)."""
        with self.path.open("rb") as file, transcript_read_lock(file):
            return file.read()

    def contents(self, data: bytes | None = None) -> tuple[list[Message], list[Message]]:
        """Every message written so far (redacted as stored: what the person saw) but those an
        undo record took back, and the history a conversation taken up again starts from: the
        latest compaction's summary and the messages it kept, then those written after it
        (without one, every message), less those taken back, a
        result without its call left out (:func:`results_with_their_calls`), each call left
        unanswered answered as failed (:func:`unfinished_calls_answered`). The file
        is only read: a last line without its newline is left out (another process is writing
        it, or a crash cut it: the next writer removes it, under the lock, see the module's
        notes). Any other line that is no message or compaction raises
        :class:`TranscriptError` naming the file and the line. ``data``: the file's bytes
        already read (:meth:`read`)."""
        found, history = KeptMessages(), KeptMessages()
        if data is None:
            data = self.read()
        # Split at newlines only: a message's text may hold U+2028 or U+0085 as they are; the
        # last part is empty, or a line without its newline.
        lines = (line for line in io.BytesIO(data) if line.endswith(b"\n"))
        read_records(lines, self.path, history, found)
        return found.messages, unfinished_calls_answered(results_with_their_calls(history.messages))


def _line(record: dict[str, Any]) -> bytes:
    # A lone surrogate (a model may write "\\ud800" in its arguments) cannot be UTF-8: it is
    # written as its JSON escape, which reads back as the same string, as the activity log
    # does, never a failure of the turn.
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")


def latest_record(file: BinaryIO, within: int | None, kind: str = "session") -> dict[str, Any]:
    """The last record of ``kind`` of ``file`` (in its last ``within`` bytes: a header, a
    title), looked for a chunk at a time from its end (each line starts with its ``type``)."""
    marker = f'\n{{"type": "{kind}"'.encode()
    end = size = file.seek(0, os.SEEK_END)
    later = b""  # the start of the chunk after this one: a marker may cross the boundary
    while end > 0 and (within is None or size - end < within):
        start = max(0, end - _CHUNK)
        file.seek(start)
        chunk = file.read(end - start)
        if len(chunk) < end - start:
            later = b""  # the file shrank meanwhile: what came after is gone
        lead = b"\n" if start == 0 else b""  # the first line has no newline before it
        data = lead + chunk + later
        search_end = len(data)
        while (found := data.rfind(marker, 0, search_end)) >= 0:
            if record := _record_at(file, start - len(lead) + found + 1, kind):
                return record
            search_end = found  # a line cut short, or a message's text: an earlier one
        later = chunk[: len(marker) - 1]
        end = start
    return {}


def _record_at(file: BinaryIO, start: int, kind: str) -> dict[str, Any]:
    file.seek(start)
    parts: list[bytes] = []
    while not parts or b"\n" not in parts[-1]:
        block = file.read(_CHUNK)
        if not block:
            return {}  # being written, or cut by a crash
        parts.append(block)
    line = b"".join(parts).split(b"\n", 1)[0]
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) and record.get("type") == kind else {}


def _drop_cut_line(descriptor: int, end: int) -> None:
    """Cut the file of ``end`` bytes back to its last newline when its last line has none
    (held under the writers' lock: a crash cut it, no writer is writing it)."""
    # Every append pays this check: the size comes with the link count's fstat, and one
    # positioned read takes the last byte (see docs/performance.md).
    if end == 0 or _read_at(descriptor, 1, end - 1) == b"\n":
        return
    while end > 0:  # rare: only then is the file read back, a chunk at a time, from its end
        start = max(0, end - _CHUNK)
        newline = _read_at(descriptor, end - start, start).rfind(b"\n")
        if newline >= 0:
            os.ftruncate(descriptor, start + newline + 1)
            return
        end = start
    os.ftruncate(descriptor, 0)


def _unnamed(path: Path, status: os.stat_result) -> bool:
    """Whether the file of ``status``, which says it has no link, is no longer ``path``: some
    filesystems (FUSE ones) say 0 links for every file, and a writer believing them would open
    it again for ever; only then is the name looked up (a deleted file's count is 0 too)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return True
    return (named.st_dev, named.st_ino) != (status.st_dev, status.st_ino)


def _read_at(descriptor: int, size: int, offset: int) -> bytes:
    if sys.platform == "win32":  # no pread there
        os.lseek(descriptor, offset, os.SEEK_SET)
        return os.read(descriptor, size)
    return os.pread(descriptor, size, offset)


class TranscriptStore:
    """The transcripts of one home: ``<home>/sessions``. ``refusal``, when set, says why they
    are not read back (a home inside the project while its gate is closed: see
    :func:`~hermes_core._project_trust.project_refusal`); they are still written."""

    def __init__(
        self, directory: Path, refusal: str | None = None, gated: Path | None = None
    ) -> None:
        self.directory = directory
        self.refusal = refusal
        self.gated = gated
        """Where the transcripts written while the project gate was closed are, now that it
        is open (:attr:`~hermes_core._paths.Environment.gated_data_home`), else ``None``."""

    @classmethod
    def of_home(cls, env: Environment) -> TranscriptStore:
        """The store of ``env``'s home, ``sessions`` in its
        :attr:`~hermes_core._paths.Environment.data_home` (for a home inside the project while
        the gate is closed, the user's own folder for it, outside the project). Its ``refusal``
        is set when that folder is the project's all the same (the user's home directory
        unknown): written there still, read back only past the gate."""
        from hermes_core._project_trust import project_refusal

        directory = env.data_home / "sessions"
        earlier = env.gated_data_home
        gated = None if earlier is None else earlier / "sessions"
        return cls(directory, project_refusal(env, directory, "the transcripts folder"), gated)

    def elsewhere(self, session_id: str | None = None) -> str:
        """``""``, or a clause saying that the transcripts written while the project gate was
        closed (``session_id``'s, or any) are in :attr:`gated`, to be moved into this store to
        be taken up: the end of a message that found none here."""
        if self.gated is None:
            return ""
        pattern = "*.jsonl" if session_id is None else f"{session_id}.jsonl"
        if not any(self.gated.glob(pattern)):
            return ""
        if session_id is None:
            what, are, them = "the conversations", "are", "them"
        else:
            what, are, them = "this conversation", "is", "it"
        return (
            f"; {what} written while the project gate was closed {are} in {self.gated}: "
            f"move {them} to {self.directory} to take {them} up"
        )

    def open(self, session_id: str) -> Transcript:
        """The transcript of ``session_id`` (the directory made private on first use)."""
        return Transcript(private_dir(self.directory) / f"{session_id}.jsonl")

    def recent(self) -> list[Transcript]:
        """Every transcript, the one appended to last first."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.glob("*.jsonl"):
            try:
                found.append((path.stat().st_mtime, path))
            except OSError:  # removed since it was listed
                continue
        return [Transcript(path) for _, path in sorted(found, reverse=True)]

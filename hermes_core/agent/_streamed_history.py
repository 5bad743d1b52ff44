"""A transcript's history read record by record (``hermes sessions show``): what
:meth:`~hermes_core.agent._transcripts.Transcript.history` gives, in memory that stays flat
whatever the file's size.

Two passes over the file's lines. The first reads each line (one at a time, none kept) by the
rule :meth:`Transcript.contents` reads them by (:func:`read_records`: a line that is no message
raises :class:`TranscriptError` before anything is given) and keeps only where each message of
the history is: its line's offset, and for one a compaction record holds, its place in it. The
second
reads those lines again, a message at a time, and gives them paired as a history sent again is
(:func:`each_with_its_call`, :func:`each_call_answered`). The first also keeps the latest
header and title, so that the file is read twice in all.

Only the file's bytes up to its last newline when it is first read are read, both times: a
writer only appends past them, and one removing a line a crash cut cuts only past them (see
:mod:`hermes_core.agent._transcripts`), so the second pass needs no lock, and a reader paused
by a slow terminal keeps no writer waiting.

A conversation taken up again (``hermes chat --resume``, ``hermes run --resume``:
:func:`resumption`) is read the same way: the history it goes on from is read a message at a
time into its list, and of every message written only how many count and the last exchange
are kept, so that a transcript compacted many times is never held whole. ``session/load``
(:func:`resumption_and_written`) also reads every message written again, one at a time, to
tell them to the editor.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from hermes_core.agent._history_records import OWN_LINE, SUMMARY, read_records
from hermes_core.agent._sendable_history import each_call_answered, each_with_its_call
from hermes_core.agent._titles import record_title
from hermes_core.agent._transcripts import Transcript, counts_as_message, transcript_read_lock
from hermes_core.agent._wire import Message

_CHUNK = 65536


@dataclass(frozen=True)
class StreamedHistory:
    """A transcript's history to be read a message at a time, and what the first pass saw."""

    header: dict[str, Any]
    """Its latest header's fields (:meth:`Transcript.header`), empty when it has none."""
    title: str | None
    """Its latest title (:func:`~hermes_core.agent._titles.title_of`), ``None`` for none."""
    messages: Iterator[Message]
    """The history (:meth:`Transcript.history`), the file open until the last is given."""


@dataclass(frozen=True)
class Resumption:
    """What a conversation taken up again needs of its transcript, read without holding it
    whole (:func:`resumption`)."""

    history: list[Message]
    """The messages it goes on from (:meth:`Transcript.history`)."""
    counted: int
    """How many of the messages written (less those taken back) count
    (:func:`~hermes_core.agent._transcripts.counts_as_message`)."""
    last_exchange: list[Message]
    """The messages written from the person's last one on (empty when there is none)."""


def resumption(transcript: Transcript) -> Resumption:
    """``transcript``'s :class:`Resumption`: the file read twice, a line at a time, and only
    the history and the last exchange kept. :class:`TranscriptError` for a line that is no
    message, :class:`OSError`."""
    with transcript.path.open("rb") as file:
        return _resumed(file, *_first_pass(file, transcript))


def resumption_and_written(
    transcript: Transcript,
) -> tuple[Resumption, Generator[Message, None, None]]:
    """``transcript``'s :class:`Resumption`, and every message written but those taken back
    (what :meth:`Transcript.contents` gives first) read again a message at a time, the file
    open until the last is given (``session/load`` tells them to the client).
    :class:`TranscriptError` for a line that is no message and :class:`OSError` are raised by
    this call, before any message is given."""
    file = transcript.path.open("rb")
    try:
        history, found = _first_pass(file, transcript)
        resumed = _resumed(file, history, found)
    except BaseException:
        file.close()
        raise
    return resumed, _given(file, _read(file, found))


def _first_pass(file: BinaryIO, transcript: Transcript) -> tuple[_Places, _Places]:
    """Where the history's messages are, and where every message written is."""
    with transcript_read_lock(file):
        end = _complete_end(file)
    history, found = _Places(), _Places()
    file.seek(0)
    read_records(_lines(file, end), transcript.path, history, found)
    return history, found


def _resumed(file: BinaryIO, history: _Places, found: _Places) -> Resumption:
    messages = list(each_call_answered(each_with_its_call(_read(file, history))))
    start = found.users.rfind(1)
    last = [] if start < 0 else list(_read(file, found, start))
    return Resumption(messages, found.counted.count(1), last)


def streamed_history(transcript: Transcript) -> StreamedHistory:
    """``transcript``'s history, to be read a message at a time. :class:`TranscriptError` for
    a line that is no message and :class:`OSError` are raised by this call, before any
    message is given."""
    file = transcript.path.open("rb")
    try:
        with transcript_read_lock(file):
            end = _complete_end(file)
        places = _places(file, end, transcript)
    except BaseException:
        file.close()
        raise
    messages = each_call_answered(each_with_its_call(_read(file, places)))
    return StreamedHistory(places.header, places.title, _given(file, messages))


class _Places:
    """Where each message of the history is (a history's
    :class:`~hermes_core.agent._history_records.Kept`): its line's offset, and ``OWN_LINE``,
    ``SUMMARY`` or its place in a compaction's ``kept``; whether it is the person's."""

    def __init__(self) -> None:
        self.offsets = array("q")
        self.parts = array("q")
        self.users = bytearray()
        self.counted = bytearray()
        self.header: dict[str, Any] = {}
        self.title: str | None = None

    def append(self, offset: int, part: int, message: Message) -> None:
        self.offsets.append(offset)
        self.parts.append(part)
        self.users.append(message.role == "user")
        self.counted.append(counts_as_message(message.content))

    def cut(self, length: int) -> None:
        del self.offsets[length:], self.parts[length:], self.users[length:]
        del self.counted[length:]

    def other(self, record: dict[str, Any]) -> None:
        """A record that is no message: the latest header and title are kept."""
        if record.get("type") == "session":
            self.header = record
        elif record.get("type") == "title":
            self.title = record_title(record)


def _places(file: BinaryIO, end: int, transcript: Transcript) -> _Places:
    places = _Places()
    file.seek(0)
    read_records(_lines(file, end), transcript.path, places, other=places.other)
    return places


def _lines(file: BinaryIO, end: int) -> Iterator[bytes]:
    """``file``'s lines up to ``end`` (past its last newline), one at a time."""
    offset = 0
    while offset < end:
        line = file.readline()
        offset += len(line)
        yield line


def _given(file: BinaryIO, messages: Iterator[Message]) -> Generator[Message, None, None]:
    """``messages`` (read from ``file``), ``file`` closed once they are given or dropped."""
    try:
        yield from messages
    finally:
        file.close()


def _read(file: BinaryIO, places: _Places, start: int = 0) -> Iterator[Message]:
    """The messages of ``places`` from its ``start``-th on, read again."""
    compaction: tuple[int, dict[str, Any]] = (-1, {})  # read once for all the messages it holds
    for offset, part in zip(places.offsets[start:], places.parts[start:], strict=True):
        if part == OWN_LINE:
            yield Message.from_json(_record_at(file, offset))
            continue
        if compaction[0] != offset:
            compaction = (offset, _record_at(file, offset))
        record = compaction[1]
        yield Message.from_json(record["summary"] if part == SUMMARY else record["kept"][part])


def _record_at(file: BinaryIO, offset: int) -> dict[str, Any]:
    file.seek(offset)
    record: dict[str, Any] = json.loads(file.readline().decode("utf-8", "surrogateescape"))
    return record


def _complete_end(file: BinaryIO) -> int:
    """The offset just past ``file``'s last newline (0 when it has none)."""
    end = file.seek(0, os.SEEK_END)
    while end > 0:
        start = max(0, end - _CHUNK)
        file.seek(start)
        newline = file.read(end - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0

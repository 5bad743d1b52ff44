"""The one rule of what a transcript's records make of its history, read line by line
(:func:`read_records`): each line a JSON object, a ``message`` added, a ``compaction`` putting
its summary and the messages it kept in place of the history before it, an ``undo`` taking
back the messages from the person's ``user_messages``-th message from the end
(:func:`~hermes_core.agent._sendable_history.kept_before_user_message`), and any other line
that is no message raising :class:`TranscriptError` naming the file and the line.

Where the history is kept is the reader's: :meth:`Transcript.contents
<hermes_core.agent._transcripts.Transcript.contents>` keeps the messages
(:class:`KeptMessages`), ``hermes sessions show`` only where each one is, to read it again
when it is shown (:mod:`hermes_core.agent._streamed_history`), so that its memory stays flat.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from hermes_core.agent._sendable_history import kept_before_user_message
from hermes_core.agent._wire import Message

__all__ = ["OWN_LINE", "SUMMARY", "Kept", "KeptMessages", "TranscriptError", "read_records"]

OWN_LINE: Final = -1
"""The ``part`` of a history's message that is a line of its own (not one a compaction holds)."""
SUMMARY: Final = -2
"""The ``part`` of a compaction's summary (else the place of a message in its ``kept``)."""


class TranscriptError(ValueError):
    """A transcript line that is no message (a hand's edit, a damaged disk)."""


class Kept(Protocol):
    """Where a history is kept as its records are read (:func:`read_records`)."""

    @property
    def users(self) -> Sequence[bool | int]:
        """Which of the messages kept are the person's, in order."""

    def append(self, offset: int, part: int, message: Message) -> None:
        """Keep ``message``, of the line at ``offset`` (``part``: :data:`OWN_LINE`,
        :data:`SUMMARY` or its place in the compaction's ``kept``)."""

    def cut(self, length: int) -> None:
        """Keep only the first ``length`` messages."""


class KeptMessages:
    """A history kept as its messages (:class:`Kept`)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.users = bytearray()

    def append(self, offset: int, part: int, message: Message) -> None:
        self.messages.append(message)
        self.users.append(message.role == "user")

    def cut(self, length: int) -> None:
        del self.messages[length:], self.users[length:]


def read_records(
    lines: Iterable[bytes],
    path: Path,
    history: Kept,
    found: Kept | None = None,
    other: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Read the transcript ``path``'s complete ``lines`` (each with its newline) into
    ``history`` (the history taken up again: the latest compaction's summary and the messages
    it kept, then those written after it) and ``found`` (every message written: compactions
    leave it alone); undo records cut both. ``other`` is given every other record (a header,
    a title). :class:`TranscriptError` for a line that is no message."""
    offset = 0
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line.decode("utf-8", "surrogateescape"))
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            kind = record.get("type")
            if kind == "message":
                message = Message.from_json(record)
                history.append(offset, OWN_LINE, message)
                if found is not None:
                    found.append(offset, OWN_LINE, message)
            elif kind == "compaction":
                kept = [Message.from_json(message) for message in record["kept"]]
                history.cut(0)
                history.append(offset, SUMMARY, Message.from_json(record["summary"]))
                for index, message in enumerate(kept):
                    history.append(offset, index, message)
            elif kind == "undo":
                for taken in (found, history):
                    if taken is not None:
                        count = record["user_messages"]
                        taken.cut(kept_before_user_message(taken.users, count))
            elif other is not None:
                other(record)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise TranscriptError(
                f"the transcript {path}, line {number}, is no message: {exc}"
            ) from None
        offset += len(line)

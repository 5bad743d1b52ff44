"""Transcripts: every message of a conversation, one JSON line each, under
``$HERMES_HOME/sessions/<session id>.jsonl`` (the store ``session_search`` reads).

Secrets are redacted as in the activity log (:mod:`hermes_core._redaction`): a key pasted in a
prompt or printed by a tool does not reach the disk. The directory is ``0700`` and each file
``0600``; lines are appended as the conversation goes, so a crash loses at most the message
being written.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core._private_files import PRIVATE_FILE_MODE, private_dir
from hermes_core._redaction import redact, redact_text
from hermes_core.agent._wire import Message, ModelToolCall


def _redacted_arguments(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return redact_text(arguments)
    return json.dumps(redact(parsed), ensure_ascii=False)


def redacted_message(message: Message) -> Message:
    """``message`` with its text and tool-call arguments redacted."""
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
    )


class TranscriptError(ValueError):
    """A transcript line that is no message (a hand's edit, a damaged disk)."""


class Transcript:
    """The transcript file of one session, appended message by message."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _append(self, record: dict[str, Any]) -> None:
        # A lone surrogate (a model may write "\\ud800" in its arguments) cannot be UTF-8: it is
        # written as its JSON escape, which reads back as the same string, as the activity log
        # does, never a failure of the turn.
        line = json.dumps(record, ensure_ascii=False) + "\n"
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE_MODE)
        try:
            os.write(descriptor, line.encode("utf-8", "backslashreplace"))
        finally:
            os.close(descriptor)

    def start(
        self, session_id: str, *, model: str, parent: str | None = None, cwd: str | None = None
    ) -> None:
        """Write the header line: the session, its model, its parent session, if any, and its
        working directory (what ``hermes chat --continue`` looks for). A conversation taken up
        again writes another when it goes on: the header read is the first."""
        self._append(
            {
                "type": "session",
                "id": session_id,
                "model": model,
                "parent": parent,
                "cwd": cwd,
                "time": time.time(),
            }
        )

    def header(self) -> dict[str, Any]:
        """The first header line's fields (empty when the first line is none)."""
        with self.path.open(encoding="utf-8", errors="surrogateescape") as lines:
            first = lines.readline()
        try:
            record = json.loads(first)
        except ValueError:
            return {}
        return record if isinstance(record, dict) and record.get("type") == "session" else {}

    def history(self) -> list[Message]:
        """The messages a conversation taken up again starts from (``session/load``, ``hermes
        chat --resume``): :meth:`messages` with :func:`unfinished_calls_answered`. A last line
        cut short is removed from the file first, so the next line appended starts a line of
        its own (else the two would read as one damaged line)."""
        with self.path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            if size:
                file.seek(size - 1)
            cut = bool(size) and file.read(1) != b"\n"
        if cut:  # rare: only then is the whole file read here, to find the last line's start
            os.truncate(self.path, self.path.read_bytes().rfind(b"\n") + 1)
        return unfinished_calls_answered(self.messages())

    def add(self, message: Message) -> None:
        """Append ``message``, redacted."""
        self._append(
            {"type": "message", "time": time.time(), **redacted_message(message).to_json()}
        )

    def messages(self) -> list[Message]:
        """The messages written so far (redacted as stored). A last line without its newline
        was cut by a crash while it was written: that message is lost, the rest is read. Any
        other line that is no message raises :class:`TranscriptError` naming the file and the
        line."""
        found: list[Message] = []
        with self.path.open(encoding="utf-8", errors="surrogateescape") as lines:
            for number, line in enumerate(lines, 1):
                try:
                    record = json.loads(line)
                    if isinstance(record, dict) and record.get("type") == "message":
                        found.append(Message.from_json(record))
                    elif not isinstance(record, dict):
                        raise ValueError("not a JSON object")
                except (ValueError, TypeError, KeyError, AttributeError) as exc:
                    if not line.endswith("\n"):
                        break  # the message being written when the process died
                    raise TranscriptError(
                        f"the transcript {self.path}, line {number}, is no message: {exc}"
                    ) from None
        return found


class TranscriptStore:
    """The transcripts of one home: ``<home>/sessions``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

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


def unfinished_calls_answered(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with a failed result for each tool call that has none, right after the
    results its assistant message has: the session ended in the middle of the call (the
    process was killed, the editor quit while it was asked or ran), and the model APIs refuse
    a history with a call left unanswered. The transcript itself is left as it is."""
    answered: list[Message] = []
    open_calls: list[ModelToolCall] = []
    for message in messages:
        if message.role == "tool":
            open_calls[:] = [call for call in open_calls if call.id != message.tool_call_id]
        else:
            answered.extend(_unfinished(call) for call in open_calls)
            open_calls.clear()
        answered.append(message)
        if message.role == "assistant":
            open_calls.extend(message.tool_calls)
    answered.extend(_unfinished(call) for call in open_calls)
    return answered


def _unfinished(call: ModelToolCall) -> Message:
    return Message(
        role="tool",
        content=f"{call.name} did not finish: the session ended before its result was kept "
        "(it may not have run, or run only in part).",
        tool_call_id=call.id,
        name=call.name,
        is_error=True,
    )

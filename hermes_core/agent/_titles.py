"""Conversation titles: the name a person gives a conversation (``/title NAME`` in ``hermes
chat``, ``hermes sessions rename``), which ``hermes sessions list`` and ``/resume`` show and
``--resume`` takes as well as an id.

A title is a record appended to the transcript (:meth:`Transcript.titled`), never a rewrite of
it: the latest one names the conversation, and it is looked for from the file's end
(:func:`title_of`); one whose title is ``null`` takes the title away (``--clear``). It is the
person's text, kept as their messages are: redacted (:func:`~hermes_core._redaction.redact_text`,
a key pasted in it does not reach the disk). It is one line of printable text of at most
:data:`TITLE_CHARACTERS` characters (:func:`checked_title`); one written by hand with control
characters is shown escaped. ``--resume``, ``hermes sessions show``, ``delete`` and ``rename``
take a title as well as an id (:class:`~hermes_core.agent._conversations.Naming`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from hermes_core._redaction import redact_text
from hermes_core.agent._transcripts import Transcript, latest_record, transcript_read_lock

if TYPE_CHECKING:
    from hermes_core.agent._conversation import Conversation

TITLE_CHARACTERS = 100
"""The longest title, in characters (a listing's column, a line of ``/resume``)."""


class TitleError(ValueError):
    """A title that is not one short line of printable text; the message says why."""


def checked_title(text: str) -> str:
    """``text`` as a title, its leading and trailing spaces dropped; :class:`TitleError` when
    it is empty, holds a line break or any other character that is not printable (a terminal
    would obey an escape sequence), or is longer than :data:`TITLE_CHARACTERS`."""
    title = text.strip()
    if not title:
        raise TitleError("a title needs some text: give one line of at most 100 characters")
    if not title.isprintable():
        raise TitleError(
            "a title is one line of printable text: no line break, tab or control character"
        )
    if len(title) > TITLE_CHARACTERS:
        raise TitleError(f"a title has at most {TITLE_CHARACTERS} characters, not {len(title)}")
    return title


def give_title(transcript: Transcript, title: str | None) -> str | None:
    """Append ``title`` (checked by :func:`checked_title`) to ``transcript``, redacted, or
    ``None``: a title record that takes the title away (``rename --clear``, ``/title
    --clear``); the title kept."""
    kept = None if title is None else redact_text(title)
    transcript.titled(kept)
    return kept


def title_conversation(conversation: Conversation, title: str | None) -> str | None:
    """Give ``conversation`` ``title`` (``/title NAME``; ``None``: ``/title --clear``) through
    its own transcript
    (:meth:`~hermes_core.agent.Conversation.transcript`: begun with its header when no message
    was sent yet, written again whole when deleted meanwhile), so that it never holds a record
    without one."""
    transcript = conversation.transcript()
    if transcript is None:
        raise TitleError("no transcripts are kept (agent transcripts are off): nowhere to keep it")
    return give_title(transcript, title)


def title_of(transcript: Transcript, within: int | None = None) -> str | None:
    """``transcript``'s latest title (in its last ``within`` bytes), ``None`` when it has
    none. :class:`OSError` when it cannot be read."""
    with transcript.path.open("rb") as file, transcript_read_lock(file):
        return title_in(file, within)


def title_in(file: BinaryIO, within: int | None = None) -> str | None:
    """The latest title of the transcript open as ``file`` (or its bytes read, in a
    :class:`~io.BytesIO`), in its last ``within`` bytes; ``None`` when it has none."""
    return record_title(latest_record(file, within, "title"))


def record_title(record: Mapping[str, Any]) -> str | None:
    """The title a title record gives: its text, ``None`` for none or a cleared one."""
    title = record.get("title")
    return title if isinstance(title, str) and title else None


def quoted(title: str | None) -> str:
    """``title`` as a line shows it: in quotes, a control character written by hand escaped;
    ``""`` for none."""
    from hermes_core._shown import printable

    return "" if title is None else f'"{printable(title)}"'

"""The history of ``hermes chat``'s messages, kept in ``$HERMES_HOME/chat_history`` so that Up
recalls those of earlier chats too, as a shell's history or Python's REPL does.

One message a line, each a JSON string (a message may hold any character); the newest last, at
most :data:`KEPT` of them. The file is private (``0600``, as everything the home keeps of the
user's words) and appended to as each message is sent, so a chat that ends abruptly loses
nothing. Appends and the cut take turns under an exclusive lock of ``.chat_history.lock``
beside it, so a chat cutting the file back loses no message another chat appends meanwhile; a
file that is a link stays one (the cut rewrites where it leads). It holds the messages as
typed, secrets included: nothing is redacted. None is read or written when
``HERMES_NO_CHAT_HISTORY`` is set; a home inside the project while its gate is closed keeps it
in the user's own folder for that home, as its transcripts (a planted file there would put the
repository's words on the person's edit line, one Enter from being sent; see docs/security.md)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from hermes_core._atomic_write import held_exclusively, write_atomically
from hermes_core._cli.line_editor import UNPRINTABLE
from hermes_core._paths import Environment

FILE = "chat_history"
OFF = "HERMES_NO_CHAT_HISTORY"
"""The flag that keeps the chat from reading or writing its history file."""
KEPT = 1000
"""The messages kept: the file is cut back to these when it holds twice as many."""


def history_file(env: Environment) -> Path | None:
    """Where ``env``'s chat keeps its history (in :attr:`~Environment.data_home`, as the
    transcripts: the user's own folder for a project's home while its gate is closed), or
    ``None`` when it keeps none (the flag is set, or that folder is the project's too: the
    user's home directory unknown)."""
    from hermes_core._project_trust import project_refusal

    path = env.data_home / FILE
    if env.flag(OFF) or project_refusal(env, path, "the chat history file") is not None:
        return None
    return path


class ChatHistory:
    """The messages sent, oldest first (:attr:`entries`); each added one is appended to
    ``path`` when there is one (else they last as long as the chat)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = []
        if path is not None and path.exists():
            with contextlib.suppress(OSError), held_exclusively(_lock(path)):
                self.entries = _read(path)

    def add(self, message: str) -> None:
        """Remember ``message`` (a repeat of the newest entry is not added twice)."""
        if not message.strip() or (self.entries and self.entries[-1] == message):
            return
        self.entries.append(message)
        if self.path is None:
            return
        try:
            with held_exclusively(_lock(self.path)):
                _append(self.path, json.dumps(message) + "\n")
        except OSError:
            self.path = None  # a full disk or a read-only home: the chat goes on without it


def _lock(path: Path) -> Path:
    """The file locked around each read, cut and append of the history file ``path``."""
    return path.with_name(f".{path.name}.lock")


def _read(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    entries: list[str] = []
    for line in lines:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            # The editor never sends a control character but a tab: one is planted or
            # damaged, and drawn by Up it would drive the terminal.
            if isinstance(entry, str) and UNPRINTABLE.search(entry) is None:
                entries.append(entry)
    if len(lines) > 2 * KEPT:
        from hermes_core._private_files import PRIVATE_FILE_MODE

        entries = entries[-KEPT:]
        text = "".join(json.dumps(entry) + "\n" for entry in entries)
        with contextlib.suppress(OSError):
            write_atomically(path, text, mode=PRIVATE_FILE_MODE)
    return entries[-KEPT:]


def _append(path: Path, line: str) -> None:
    from hermes_core._private_files import PRIVATE_FILE_MODE, make_private_dir

    make_private_dir(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_FILE_MODE)
        os.write(descriptor, line.encode("utf-8"))
    finally:
        os.close(descriptor)

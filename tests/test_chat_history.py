"""The chat's history file shared by chats running at once, with real files and real
processes: a chat cutting the file back (it holds over twice :data:`KEPT` lines) loses no
message another chat appends meanwhile, and a history file that is a link stays one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hermes_core._atomic_write import held_exclusively
from hermes_core._cli.chat_history import KEPT, ChatHistory

TRIM = (
    "import sys; from pathlib import Path; "
    "from hermes_core._cli.chat_history import ChatHistory; ChatHistory(Path(sys.argv[1]))"
)


def full(path: Path) -> None:
    path.write_text("".join(json.dumps(f"old {n}") + "\n" for n in range(2 * KEPT + 1)))


def waits_for_a_lock(pid: int) -> bool:
    return any(
        "-> FLOCK" in line and f" {pid} " in line
        for line in Path("/proc/locks").read_text().splitlines()
    )


def test_a_message_appended_while_another_chat_trims_the_file_is_kept(tmp_path: Path) -> None:
    history = tmp_path / "chat_history"
    full(history)
    with held_exclusively(tmp_path / ".chat_history.lock"):
        # Another chat appending: it opened the file and is about to write its message.
        appending = os.open(history, os.O_WRONLY | os.O_APPEND)
        trim = subprocess.Popen([sys.executable, "-c", TRIM, str(history)])
        while trim.poll() is None and not waits_for_a_lock(trim.pid):
            os.sched_yield()
        os.write(appending, (json.dumps("sent meanwhile") + "\n").encode())
        os.close(appending)
    assert trim.wait() == 0
    entries = ChatHistory(history).entries
    assert entries[-1] == "sent meanwhile"
    assert len(entries) == KEPT


def test_a_chat_appends_after_the_lock_another_holds(tmp_path: Path) -> None:
    history = tmp_path / "chat_history"
    history.write_text(json.dumps("first") + "\n")
    add = TRIM.replace(
        "ChatHistory(Path(sys.argv[1]))", "ChatHistory(Path(sys.argv[1])).add('second')"
    )
    with held_exclusively(tmp_path / ".chat_history.lock"):
        adding = subprocess.Popen([sys.executable, "-c", add, str(history)])
        while adding.poll() is None and not waits_for_a_lock(adding.pid):
            os.sched_yield()
        written = history.read_text()
    assert adding.wait() == 0
    assert written == json.dumps("first") + "\n"
    assert ChatHistory(history).entries == ["first", "second"]


def test_a_linked_history_file_stays_a_link_when_trimmed(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "chat_history"
    target.parent.mkdir()
    full(target)
    history = tmp_path / "chat_history"
    history.symlink_to(target)
    ChatHistory(history).add("new")
    assert history.is_symlink()
    assert len(target.read_text().splitlines()) == KEPT + 1
    assert ChatHistory(history).entries[-1] == "new"

"""Transcript files shared by processes: reading never changes a file (another process may be
appending to it: a last line without its newline may be one it is still writing), and writers
take turns under a lock, the one that finds a line cut by a crash removing it first. Real files
in a temporary directory; the other process's write is made by hand, under the same lock."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hermes_core.agent import Message, TranscriptStore

HEADER = {"type": "session", "id": "s1", "model": "fake-1", "parent": None, "time": 1.0}
ANSWER = {"type": "message", "time": 1.0, "role": "assistant", "content": "the answer"}


def _start(tmp_path: Path) -> Path:
    store = TranscriptStore(tmp_path / "sessions")
    transcript = store.open("s1")
    transcript.start("s1", model="fake-1", cwd=str(tmp_path))
    transcript.add(Message("user", "hi"))
    return transcript.path


def test_reading_a_line_another_process_is_writing_leaves_the_file_as_it_is(
    tmp_path: Path,
) -> None:
    path = _start(tmp_path)
    line = (json.dumps(ANSWER) + "\n").encode()
    with path.open("ab") as other:  # the other process, half-way through its line
        other.write(line[:20])
        other.flush()
        before = path.read_bytes()
        transcript = TranscriptStore(tmp_path / "sessions").open("s1")
        assert [m.content for m in transcript.history()] == ["hi"]
        assert transcript.header()["model"] == "fake-1"
        assert path.read_bytes() == before
        other.write(line[20:])
    assert [m.content for m in transcript.history()] == ["hi", "the answer"]


def test_a_writer_waits_for_the_line_another_one_is_writing(tmp_path: Path) -> None:
    path = _start(tmp_path)
    line = (json.dumps(ANSWER) + "\n").encode()
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.write(descriptor, line[:20])
        writer = threading.Thread(target=transcript.add, args=(Message("user", "next"),))
        writer.start()
        writer.join(0.3)
        assert writer.is_alive()  # not writing over, nor cutting, the line in progress
        os.write(descriptor, line[20:])
    finally:
        os.close(descriptor)  # and with it the lock
    writer.join(10)
    assert not writer.is_alive()
    assert [m.content for m in transcript.messages()] == ["hi", "the answer", "next"]


def test_a_writer_removes_a_line_cut_by_a_crash_before_it_appends(tmp_path: Path) -> None:
    path = _start(tmp_path)
    with path.open("ab") as crashed:
        crashed.write(b'{"type": "message", "role": "assistant", "cont')
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    transcript.add(Message("user", "after the crash"))
    assert [m.content for m in transcript.messages()] == ["hi", "after the crash"]
    assert path.read_bytes().endswith(b"\n")


READER = """
import sys, time
from pathlib import Path
from hermes_core.agent import TranscriptStore

transcript = TranscriptStore(Path(sys.argv[1])).open("s1")
until = time.monotonic() + float(sys.argv[2])
while time.monotonic() < until:
    assert transcript.header()["model"] == "fake-1"
print("read")
"""


def test_reading_the_header_while_a_writer_removes_a_cut_line_never_kills_the_reader(
    tmp_path: Path,
) -> None:
    # A writer that finds a line cut by a crash shrinks the file under the reader's feet: a
    # reader that mapped the file's old size would die of SIGBUS touching the page cut away.
    # Here a crash cuts a long line again and again, and the next write removes it.
    path = _start(tmp_path)
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(tmp_path / "sessions"), "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cut = b'{"type": "message", "content": "' + b"x" * 300_000
    while reader.poll() is None:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)  # the writer that crashed held the lock
            os.write(descriptor, cut)
        finally:
            os.close(descriptor)
        transcript.add(Message("user", "again"))
    out, err = reader.communicate()

    assert reader.returncode == 0, err
    assert out == "read\n"


def test_a_reader_waits_while_a_writer_removes_a_cut_line(tmp_path: Path) -> None:
    # Without waiting, a reader half-way through a long line cut by a crash goes on reading at
    # the same offset after the writer cut it away and appended its own line: it got a message
    # made of the two (seen in 7 of 201 reads racing such a writer), well-formed but false.
    path = _start(tmp_path)
    cut = b'{"type": "message", "role": "user", "content": "' + b"x" * 100_000
    with path.open("ab") as crashed:
        crashed.write(cut)
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    read: list[list[str | None]] = []
    descriptor = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # a writer, about to remove the cut line
        reader = threading.Thread(
            target=lambda: read.append([m.content for m in transcript.messages()])
        )
        reader.start()
        reader.join(0.3)
        assert reader.is_alive()  # not reading the file the writer is changing
        os.ftruncate(descriptor, len(path.read_bytes()) - len(cut))
        os.write(descriptor, (json.dumps({**ANSWER, "content": "y" * 100_000}) + "\n").encode())
    finally:
        os.close(descriptor)
    reader.join(10)
    assert read == [["hi", "y" * 100_000]]
    assert transcript.header()["model"] == "fake-1"


def test_a_message_holding_unicode_line_separators_reads_back_whole(tmp_path: Path) -> None:
    # JSON leaves U+2028, U+2029 and U+0085 as they are: only a newline ends a line.
    path = _start(tmp_path)
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    transcript.add(Message("assistant", "one\u2028two\u2029three\x85four"))
    assert [m.content for m in transcript.messages()] == ["hi", "one\u2028two\u2029three\x85four"]
    assert path.read_bytes().count(b"\n") == 3


FORKS_DURING_AN_APPEND = """
import os, sys, threading, time
from pathlib import Path
from hermes_core.agent import Message, TranscriptStore
import hermes_core.agent._transcripts as transcripts

real_write = os.write
children = []

def write_then_fork(descriptor, data):
    written = real_write(descriptor, data)
    if not children:  # a plugin's thread forks now: the child inherits the open transcript
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    return written

transcripts.os.write = write_then_fork
transcript = TranscriptStore(Path(sys.argv[1])).open("s1")
transcript.add(Message("user", "first"))
transcripts.os.write = real_write
second = threading.Thread(target=transcript.add, args=(Message("user", "second"),), daemon=True)
second.start()
second.join(10)
os.kill(children[0], 9)
print("waited" if second.is_alive() else "appended")
"""


def test_a_child_forked_during_an_append_does_not_keep_the_transcript_locked(
    tmp_path: Path,
) -> None:
    # A lock dropped only by closing the descriptor stays held by a child that inherited it.
    _start(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", FORKS_DURING_AN_APPEND, str(tmp_path / "sessions")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout == "appended\n", done.stderr
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    assert [m.content for m in transcript.messages()] == ["hi", "first", "second"]


def test_a_transcript_deleted_under_its_writer_starts_again_with_its_header(
    tmp_path: Path,
) -> None:
    # hermes sessions delete while a chat goes on: whatever the chat writes next (a message, a
    # compaction's or an undo's record) starts a whole transcript, one the listing and
    # --continue find, never a file of lines without a header.
    store = TranscriptStore(tmp_path / "sessions")
    transcript = store.open("s1")
    transcript.start("s1", model="fake-1", cwd=str(tmp_path))
    transcript.add(Message("user", "hi"))
    for write in (
        lambda: transcript.add(Message("user", "again")),
        lambda: transcript.undone(1),
        lambda: transcript.compacted(1, Message("user", "summary"), []),
    ):
        transcript.path.unlink()
        write()
        first = json.loads(transcript.path.read_text(encoding="utf-8").splitlines()[0])
        assert (first["type"], first["id"], first["model"]) == ("session", "s1", "fake-1")
        assert first["cwd"] == str(tmp_path)
        assert store.open("s1").header()["model"] == "fake-1"


def test_a_record_for_a_transcript_deleted_before_any_header_creates_no_file(
    tmp_path: Path,
) -> None:
    # hermes sessions rename of a conversation deleted after it was found: the title's record
    # (a Transcript that wrote no header) is refused, never a file holding only a title.
    path = _start(tmp_path)
    path.unlink()
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    with pytest.raises(FileNotFoundError):
        transcript.titled("a title")
    assert not path.exists()

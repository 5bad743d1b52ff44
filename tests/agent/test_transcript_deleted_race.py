"""A transcript deleted while another process waits to append to it: ``hermes sessions
delete`` holds the file's lock while it removes it, and a writer that opened the file before
waits on that lock. The deletion is played here by holding the lock as ``delete`` does
(:func:`hermes_core.agent._conversations.delete`), waiting until the real ``hermes`` process
is blocked on it (``/proc/locks`` lists it as waiting), then removing the file and letting go:
the step between the writer's open and its lock, made to happen every time."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from hermes_core.agent._transcripts import Transcript
from hermes_core.agent._wire import Message
from hermes_core.testing import FakeModelServer, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli
from tests.agent.test_cli_sessions import write

pytestmark = pytest.mark.subprocess


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def wait_blocked_on_lock(process: subprocess.Popen[bytes]) -> None:
    """Until ``process`` waits for a lock (a ``->`` line of ``/proc/locks`` with its id)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if fields[1] == "->" and fields[5] == str(process.pid):
                return
        assert process.poll() is None, "it ended without waiting for the lock"
        time.sleep(0.02)
    pytest.fail("it never waited for the transcript's lock")


def deleted_while_held(path: Path, process: subprocess.Popen[bytes]) -> None:
    """Hold ``path``'s lock as ``hermes sessions delete`` does, wait until ``process`` waits
    for it, remove the file, then let go."""
    with path.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        wait_blocked_on_lock(process)
        path.unlink()


def test_rename_of_a_conversation_deleted_meanwhile_says_so_and_makes_no_file(
    hermes_cli: InProcessCli,
) -> None:
    path = write(hermes_cli, "aaa111", "hello", "ok")
    rename = subprocess.Popen(
        hermes_cli.command("sessions", "rename", "aaa111", "Late"),
        cwd=hermes_cli.work,
        env=hermes_cli.variables(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deleted_while_held(path, rename)
    out, errors = rename.communicate(timeout=60)
    assert rename.returncode == 2, out.decode()
    assert "is now titled" not in out.decode()
    [line] = errors.decode().splitlines()
    assert "aaa111 is not renamed" in line, line
    assert not path.exists()


def test_a_chat_s_message_written_as_its_transcript_is_deleted_starts_it_again(
    hermes_cli: InProcessCli,
) -> None:
    """The chat opened the file to append before the deletion removed it: the message goes
    into a transcript written again whole, not into the removed file."""
    with FakeModelServer(turns=[FakeTurn(text="First answer."), FakeTurn(text="Second.")]) as fake:
        model = {"provider": "openai", "model": "fake-model", "base_url": fake.openai_base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        chat = subprocess.Popen(
            hermes_cli.command("chat"),
            cwd=hermes_cli.work,
            env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert chat.stdin is not None
        assert chat.stdout is not None
        chat.stdin.write(b"first\n")
        chat.stdin.flush()
        assert chat.stdout.readline() == b"First answer.\n"
        (path,) = (hermes_cli.home / "sessions").glob("*.jsonl")
        with path.open("rb") as held:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX)
            chat.stdin.write(b"go on\n")
            chat.stdin.flush()
            wait_blocked_on_lock(chat)
            path.unlink()
        _, errors = chat.communicate(timeout=60)
        assert chat.returncode == 0, errors.decode()

    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert records[0]["type"] == "session"
    assert [r["content"] for r in records if r["type"] == "message"] == ["go on", "Second."]


class FakeLinklessFilesystem:
    """``os.fstat`` as a filesystem that counts no links says it (some FUSE ones report
    ``st_nlink`` 0 for every file, which no filesystem here does): each file has 0 links.
    It stops a writer asking more than ``most`` times, so that a loop ends as a failure."""

    def __init__(self, most: int = 50) -> None:
        self._fstat = os.fstat
        self._most = most
        self.asked = 0

    def __call__(self, descriptor: int) -> os.stat_result:
        self.asked += 1
        if self.asked > self._most:
            raise AssertionError(f"fstat asked {self.asked} times: the writer loops")
        found = self._fstat(descriptor)
        fields = list(found)
        fields[stat.ST_NLINK] = 0
        return os.stat_result(fields)


def test_a_transcript_on_a_filesystem_that_counts_no_links_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions" / "aaa111.jsonl"
    path.parent.mkdir()
    transcript = Transcript(path)
    linkless = FakeLinklessFilesystem()
    monkeypatch.setattr(os, "fstat", linkless)
    transcript.start("aaa111", model="fake-1", parent=None, cwd=str(tmp_path))
    transcript.add(Message("user", "hello"))
    transcript.titled("Kept")
    monkeypatch.undo()

    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in records] == ["session", "message", "title"]
    assert linkless.asked == 3  # one look a line, none written twice

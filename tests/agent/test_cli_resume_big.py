"""``hermes chat --resume`` / ``hermes run --resume`` over a big transcript: a conversation
compacted many times resumes to a short history, and taking it up holds that history, not the
whole file. Real transcripts written by :class:`Transcript`; ``hermes chat`` as a real
subprocess (its peak memory, the kernel's usage of that child alone: ``wait4``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hermes_core.agent._streamed_history import resumption
from hermes_core.agent._transcripts import Transcript, counts_as_message
from hermes_core.agent._wire import Message, ModelToolCall
from hermes_core.testing._cli_in_process import InProcessCli
from tests.agent.test_cli_sessions import write

pytestmark = pytest.mark.subprocess

MiB = 1024 * 1024


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def compacted_often(path: Path, size: int) -> int:
    """Grow the transcript ``path`` to ``size`` bytes with exchanges, compacted every 40
    messages into a summary and the last exchange (as :class:`Transcript` writes them); the
    exchanges written."""
    transcript = Transcript(path)
    text = "a long tool output line " * 170
    count = 0
    while path.stat().st_size < size:
        transcript.add(Message("user", f"question {count} {text}"))
        transcript.add(Message("assistant", f"answer {count} {text}"))
        count += 1
        if count % 20 == 0:
            kept = [Message("user", f"question {count - 1} kept")]
            transcript.compacted(40, Message("user", f"summary up to {count}"), kept)
    transcript.add(Message("user", "the last question"))
    transcript.add(Message("assistant", "the last answer"))
    return count + 1


def resumed_peak(cli: InProcessCli, session: str) -> tuple[int, str]:
    """``hermes chat --resume SESSION`` as a real subprocess, its input at its end at once:
    its peak resident memory in bytes (``wait4``'s usage of that child alone) and its
    stderr."""
    with subprocess.Popen(
        cli.command("chat", "--resume", session),
        cwd=cli.work,
        env=cli.variables(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, stderr
    return usage.ru_maxrss * 1024, stderr


def test_resuming_a_big_compacted_transcript_keeps_memory_flat(
    hermes_cli: InProcessCli,
) -> None:
    hermes_cli.run("config", "set", "model.model", "fake-1")
    # never asked: the chat's input ends before a turn
    hermes_cli.run("config", "set", "model.base_url", "http://127.0.0.1:9/v1")
    write(hermes_cli, "aaa111", "the start", "ok")
    path = write(hermes_cli, "bbb222", "the start", "ok")
    exchanges = compacted_often(path, 48 * MiB)
    floor, _ = resumed_peak(hermes_cli, "aaa111")
    peak, stderr = resumed_peak(hermes_cli, "bbb222")
    assert peak - floor < 16 * MiB, f"{peak - floor} bytes more than a small one's"
    assert f", {2 * exchanges + 2} messages)" in stderr
    assert "you> the last question" in stderr
    assert "the last answer" in stderr


def test_resumption_is_the_history_and_count_of_reading_it_whole(tmp_path: Path) -> None:
    """Compactions, undo records, a result without its call and a call left unanswered: what
    resuming reads a line at a time is what :meth:`Transcript.contents` reads whole."""
    transcript = Transcript(tmp_path / "aaa111.jsonl")
    transcript.start("aaa111", model="fake-1")
    transcript.add(Message("user", "first"))
    transcript.add(Message("assistant", "", tool_calls=(ModelToolCall("c1", "terminal", "{}"),)))
    transcript.add(Message("tool", "done", tool_call_id="c1", name="terminal"))
    transcript.compacted(3, Message("user", "the summary"), [Message("user", "first")])
    transcript.add(Message("assistant", "after"))
    transcript.add(Message("tool", "stray", tool_call_id="c9", name="terminal"))
    transcript.add(Message("user", "taken back"))
    transcript.add(Message("assistant", "gone"))
    transcript.undone(1)
    transcript.add(Message("user", "last"))
    transcript.add(Message("assistant", "", tool_calls=(ModelToolCall("c5", "terminal", "{}"),)))
    stored, history = transcript.contents()
    found = resumption(transcript)
    assert found.history == history
    assert found.counted == sum(1 for m in stored if counts_as_message(m.content))
    assert found.last_exchange == stored[-2:]
    assert [m.content for m in found.history[:3]] == ["the summary", "first", "after"]

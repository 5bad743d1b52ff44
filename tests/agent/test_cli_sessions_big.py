"""``hermes sessions`` over big transcripts: ``list`` reads a transcript it counts once, and
``show`` streams one record by record, its memory flat whatever the transcript's size. Real
transcripts written by :class:`Transcript`; ``hermes`` run in this process (the bytes it reads,
from ``/proc/self/io``) and as a real subprocess (its peak memory, the kernel's usage
of that child alone: ``wait4``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hermes_core.agent._transcripts import Transcript
from hermes_core.agent._wire import Message, ModelToolCall
from hermes_core.testing._cli_in_process import InProcessCli
from tests.agent.test_cli_sessions import bytes_read, write

pytestmark = pytest.mark.subprocess

MiB = 1024 * 1024


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def grown(path: Path, size: int, text: str) -> int:
    """Append to the transcript ``path`` exchanges of ``text`` until it holds ``size`` bytes;
    the messages appended."""
    transcript = Transcript(path)
    count = 0
    while path.stat().st_size < size:
        transcript.add(Message("user" if count % 2 == 0 else "assistant", f"{count} {text}"))
        count += 1
    return count


def test_list_reads_a_transcript_it_counts_once(hermes_cli: InProcessCli) -> None:
    path = write(hermes_cli, "aaa111", "the start", "ok")
    added = grown(path, 7 * MiB, "words of an ordinary exchange " * 30)
    size = path.stat().st_size
    hermes_cli.run("sessions", "list", "--json")  # the command's own files read once before
    before = bytes_read()
    [found] = json.loads(hermes_cli.run("sessions", "list", "--json").stdout)
    read = bytes_read() - before
    assert found["messages"] == added + 2
    assert found["first_message"] == "the start"
    assert found["model"] == "fake-1"
    assert found["title"] is None
    assert read < size + 2 * MiB, f"{read} bytes read for a transcript of {size}"


def written_big(path: Path, size: int) -> int:
    """A transcript ``path`` of ``size`` bytes of exchanges (written as :class:`Transcript`
    writes them, without its redaction's time), its last one taken back by an undo record;
    the messages it shows."""
    header = {"type": "session", "id": path.stem, "model": "fake-1", "cwd": None, "time": 1.0}
    text = "a long tool output line " * 170
    count = 0
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps(header) + "\n")
        while file.tell() < size:
            role = "user" if count % 2 == 0 else "assistant"
            record = {"type": "message", "time": 1.0, "role": role, "content": f"{count} {text}"}
            file.write(json.dumps(record) + "\n")
            count += 1
        if count % 2:  # end with the model's answer
            file.write(json.dumps({**record, "role": "assistant", "content": "last"}) + "\n")
            count += 1
        file.write(json.dumps({"type": "undo", "time": 1.0, "user_messages": 1}) + "\n")
    return count - 2


def shown_peak(cli: InProcessCli, *args: str) -> tuple[int, int, list[str]]:
    """``hermes sessions show ARGS`` as a real subprocess: its peak resident memory in bytes
    (``wait4``'s usage of that child alone), the lines it printed, and its last 3."""
    with subprocess.Popen(
        cli.command("sessions", "show", *args),
        cwd=cli.work,
        env=cli.variables(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdout is not None
        lines, last = 0, []
        for line in process.stdout:  # read as it comes: the test keeps none of it
            lines += 1
            last = [*last[-2:], line.decode()]
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0
    return usage.ru_maxrss * 1024, lines, last


def test_show_streams_a_big_transcript_its_memory_flat(hermes_cli: InProcessCli) -> None:
    small = hermes_cli.home / "sessions" / "aaa111.jsonl"
    small.parent.mkdir(exist_ok=True)
    written_big(small, 64 * 1024)
    big = hermes_cli.home / "sessions" / "bbb222.jsonl"
    shown = written_big(big, 64 * MiB)
    for mode in ([], ["--json"]):
        floor, _, _ = shown_peak(hermes_cli, "aaa111", *mode)
        peak, lines, last = shown_peak(hermes_cli, "bbb222", *mode)
        assert peak - floor < 16 * MiB, f"{mode}: {peak - floor} bytes more than a small one's"
        if mode:
            assert lines == shown
            assert json.loads(last[-1])["role"] == "assistant"
            assert json.loads(last[-1])["content"].startswith(f"{shown - 1} ")
        else:
            assert last[-1].startswith(f"assistant> {shown - 1} ")


def test_show_json_streamed_is_the_history_a_resume_takes_up(hermes_cli: InProcessCli) -> None:
    """Compactions, undo records, a result without its call and calls left unanswered: the
    messages ``show --json`` streams are those :meth:`Transcript.history` reads whole."""
    path = write(hermes_cli, "aaa111", "first", "ok")
    transcript = Transcript(path)
    calls = (ModelToolCall("c1", "read_file", "{}"), ModelToolCall("c2", "terminal", "{}"))
    transcript.add(Message("user", "run two"))
    transcript.add(Message("assistant", "", tool_calls=calls))
    transcript.add(Message("tool", "one done", tool_call_id="c1", name="read_file"))
    transcript.add(Message("user", "second"))
    transcript.add(Message("assistant", "two"))
    transcript.compacted(6, Message("user", "the summary"), [Message("user", "second")])
    transcript.add(Message("assistant", "after the compaction"))
    transcript.add(Message("tool", "stray", tool_call_id="c9", name="terminal"))
    transcript.add(Message("user", "taken back"))
    transcript.add(Message("assistant", "gone"))
    transcript.undone(1)
    transcript.add(Message("user", "last"))
    last_call = (ModelToolCall("c5", "terminal", '{"command": "sleep 9"}'),)
    transcript.add(Message("assistant", "", tool_calls=last_call))
    shown = hermes_cli.run("sessions", "show", "aaa111", "--json").stdout.splitlines()
    expected = [message.to_json() for message in transcript.history()]
    assert [json.loads(line) for line in shown] == expected
    contents = [message.get("content") for message in expected]
    assert contents[:3] == ["the summary", "second", "after the compaction"]
    assert "gone" not in contents
    assert "stray" not in contents
    assert expected[-1]["is_error"] is True  # c5 answered as failed


def test_show_reads_a_transcript_twice_its_header_and_title_on_the_way(
    hermes_cli: InProcessCli,
) -> None:
    path = hermes_cli.home / "sessions" / "aaa111.jsonl"
    path.parent.mkdir(exist_ok=True)
    shown = written_big(path, 16 * MiB)
    size = path.stat().st_size
    hermes_cli.run("sessions", "show", "aaa111", "--json")  # the command's own files read once
    before = bytes_read()
    done = hermes_cli.run("sessions", "show", "aaa111")
    read = bytes_read() - before
    assert done.stdout.startswith("conversation aaa111 (model fake-1)\n")
    assert done.stdout.count("\nyou> ") == shown // 2
    assert read < 2 * size + 2 * MiB, f"{read} bytes read for a transcript of {size}"

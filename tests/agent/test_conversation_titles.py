"""Conversations with titles: ``/title`` in ``hermes chat``, ``hermes sessions rename``, the
title in ``sessions list``, ``show`` and ``/resume``'s listing, and ``--resume TITLE``. The real
command, piped and on a real pseudo-terminal, the fake model of ``agent_home.py``, and the
transcripts read back as files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pexpect
import pytest

from agent.agent_home import AgentHome
from agent.test_cli_run import spawn
from hermes_core.agent._transcripts import Transcript
from hermes_core.agent._wire import Message
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

PROMPT = "you> "
LONG = "word " * 400


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def write(home: AgentHome, session: str, text: str, *, age: float = 0.0) -> Path:
    """A conversation ``session`` of the working directory, one message of the person's and the
    model's answer, last changed ``age`` seconds ago."""
    path = home.cli.home / "sessions" / f"{session}.jsonl"
    path.parent.mkdir(exist_ok=True)
    transcript = Transcript(path)
    transcript.start(session, model="fake-1", cwd=str(home.cli.work))
    transcript.add(Message("user", text))
    transcript.add(Message("assistant", "ok"))
    if age:
        moment = time.time() - age
        os.utime(path, (moment, moment))
    return path


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_title_names_the_conversation_in_its_transcript_and_shows_it(home: AgentHome) -> None:
    home.setup({"text": "One."})
    done = home.cli.run("chat", input="/title\nfirst\n/title  Tax return 2026 \n/title\n")
    assert "hermes: this conversation has no title (/title NAME gives it one)" in done.stderr
    assert 'hermes: this conversation is now titled "Tax return 2026"' in done.stderr
    assert 'hermes: this conversation is titled "Tax return 2026"' in done.stderr
    [path] = (home.cli.home / "sessions").glob("*.jsonl")
    [title] = [record for record in records(path) if record["type"] == "title"]
    assert title["title"] == "Tax return 2026"
    listed = home.cli.run("sessions", "list").stdout
    assert listed.splitlines()[0].split()[-3:] == ["TITLE", "FIRST", "MESSAGE"]
    assert "Tax return 2026" in listed.splitlines()[1]
    [found] = json.loads(home.cli.run("sessions", "list", "--json").stdout)
    assert found["title"] == "Tax return 2026"
    shown = home.cli.run("sessions", "show", path.stem).stdout
    assert shown.splitlines()[0].startswith(f'conversation {path.stem} "Tax return 2026" (')


def test_a_title_given_before_the_first_message_names_the_conversation_that_follows(
    home: AgentHome,
) -> None:
    home.setup({"text": "One."})
    home.cli.run("chat", input="/title Early\nfirst\n")
    [path] = (home.cli.home / "sessions").glob("*.jsonl")
    kinds = [record["type"] for record in records(path)]
    assert kinds[:2] == ["session", "title"]  # the header first: a transcript is never without
    [found] = json.loads(home.cli.run("sessions", "list", "--json").stdout)
    assert (found["title"], found["messages"], found["model"]) == ("Early", 2, "fake-1")


def test_rename_appends_a_title_record_and_the_latest_wins(home: AgentHome) -> None:
    path = write(home, "aaa111", "hello there")
    before = path.read_bytes()
    done = home.cli.run("sessions", "rename", "aaa", "First name")
    assert done.stdout == 'aaa111 is now titled "First name"\n'
    home.cli.run("sessions", "rename", "aaa111", "Second name")
    assert path.read_bytes().startswith(before)  # appended, never rewritten
    assert [r["title"] for r in records(path) if r["type"] == "title"] == [
        "First name",
        "Second name",
    ]
    [found] = json.loads(home.cli.run("sessions", "list", "--json").stdout)
    assert found["title"] == "Second name"
    assert found["first_message"] == "hello there"


@pytest.mark.parametrize(
    ("title", "why"),
    [
        ("", "a title needs some text"),
        ("   ", "a title needs some text"),
        ("two\nlines", "a title is one line of printable text"),
        ("bell\x07", "a title is one line of printable text"),
        ("esc\x1b[31mred", "a title is one line of printable text"),
        ("x" * 101, "a title has at most 100 characters, not 101"),
    ],
)
def test_rename_refuses_a_title_that_is_not_one_short_printable_line(
    home: AgentHome, title: str, why: str
) -> None:
    path = write(home, "aaa111", "hello there")
    before = path.read_bytes()
    done = home.cli.run("sessions", "rename", "aaa111", title, ok=False)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert why in line, line
    assert path.read_bytes() == before


def test_title_in_chat_refuses_a_title_too_long_saying_why(home: AgentHome) -> None:
    home.setup({"text": "One."})
    done = home.cli.run("chat", input=f"first\n/title {'y' * 120}\n")
    assert "hermes: a title has at most 100 characters, not 120; nothing changed" in done.stderr
    [path] = (home.cli.home / "sessions").glob("*.jsonl")
    assert all(record["type"] != "title" for record in records(path))


def test_a_secret_in_a_title_is_redacted_as_in_messages(home: AgentHome) -> None:
    path = write(home, "aaa111", "hello there")
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0"
    done = home.cli.run("sessions", "rename", "aaa111", f"key {key}")
    assert key not in path.read_text(encoding="utf-8")
    assert key not in done.stdout
    assert "redacted" in done.stdout


def test_a_title_written_by_hand_with_control_characters_is_shown_escaped(
    home: AgentHome,
) -> None:
    path = write(home, "aaa111", "hello there")
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"type": "title", "time": 1.0, "title": "evil\x1b]52;c;eA==\x07"}))
        file.write("\n")
    child = pexpect.spawn(
        home.cli.command("sessions", "list")[0],
        home.cli.command("sessions", "list")[1:],
        env=home.cli.variables(),
        cwd=str(home.cli.work),
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 500),  # wide enough that the table cuts no title
    )
    child.expect(pexpect.EOF)
    child.close()
    assert "evil\\x1b]52;c;eA==\\x07" in str(child.before)
    assert "\x1b]52" not in str(child.before)


def test_resume_takes_a_title_the_newest_of_several_and_says_which(home: AgentHome) -> None:
    write(home, "aaa111", "old one", age=300)
    write(home, "bbb222", "new one", age=100)
    write(home, "ccc333", "other one")
    home.cli.run("sessions", "rename", "aaa111", "Shared")
    home.cli.run("sessions", "rename", "bbb222", "Shared")
    for session, age in (("aaa111", 300), ("bbb222", 100)):  # renaming changed them
        moment = time.time() - age
        os.utime(home.cli.home / "sessions" / f"{session}.jsonl", (moment, moment))
    home.setup({"echo": True})
    done = home.cli.run("chat", "--resume", "Shared", input="again\n")
    assert 'hermes: resuming bbb222 "Shared"' in done.stderr
    assert (
        'hermes: 2 conversations are titled "Shared": took the latest, bbb222 '
        "(--resume ID takes another: aaa111)"
    ) in done.stderr
    assert [m["content"] for m in home.requests()[-1]["messages"]] == ["new one", "ok", "again"]


def test_resume_prefers_an_exact_title_to_an_id_prefix_and_says_so(home: AgentHome) -> None:
    write(home, "abc111", "by its id")
    write(home, "ddd222", "by its title")
    home.cli.run("sessions", "rename", "ddd222", "abc")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--resume", "abc", input="again\n")
    assert 'hermes: resuming ddd222 "abc"' in done.stderr
    assert "hermes: abc is also the start of the id abc111 (--resume abc111 takes it)" in (
        done.stderr
    )
    assert [m["content"] for m in home.requests()[-1]["messages"]] == [
        "by its title",
        "ok",
        "again",
    ]
    # an exact id is never taken for a title
    home.cli.run("sessions", "rename", "abc111", "ddd222")
    home.setup({"echo": True})
    again = home.cli.run("chat", "--resume", "ddd222", input="more\n")
    assert "hermes: resuming ddd222" in again.stderr


def test_an_unknown_title_is_refused_listing_the_recent_ones_with_their_titles(
    home: AgentHome,
) -> None:
    write(home, "aaa111", "hello there")
    home.cli.run("sessions", "rename", "aaa111", "Groceries")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--resume", "Holiday plans", input="x\n", ok=False)
    assert done.returncode == 2
    assert "no conversation Holiday plans (an id, its start or a title)" in done.stderr
    assert '"Groceries"' in done.stderr


def test_resume_listing_shows_titles_and_title_is_refused_while_a_turn_runs(
    home: AgentHome,
) -> None:
    write(home, "aaa111", "hello there")
    home.cli.run("sessions", "rename", "aaa111", "Groceries")
    home.setup({"text": LONG}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("/resume")
    child.expect_exact('1. aaa111  "Groceries" (')
    child.expect_exact(PROMPT)
    child.sendline("talk")
    child.expect_exact("word word ")
    child.sendline("/title Busy")
    child.expect_exact("hermes: /title is not run while a turn runs (")
    child.expect_exact("type it again at the prompt (/stop stops the turn)")
    child.sendline("/stop")
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("/title Calm")
    child.expect_exact('hermes: this conversation is now titled "Calm"')
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    titles = [
        record.get("title")
        for path in (home.cli.home / "sessions").glob("*.jsonl")
        for record in records(path)
        if record["type"] == "title"
    ]
    assert sorted(str(title) for title in titles) == ["Calm", "Groceries"]


def test_a_title_that_starts_its_own_id_is_taken_without_naming_it_twice(home: AgentHome) -> None:
    write(home, "abc111", "by its title")
    home.cli.run("sessions", "rename", "abc111", "abc")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--resume", "abc", input="again\n")
    assert 'hermes: resuming abc111 "abc"' in done.stderr
    assert "also the start" not in done.stderr

"""``hermes chat --continue`` / ``--resume SESSION`` (and ``hermes run``'s): a real ``hermes``
process takes up the conversation an earlier one kept in its transcript, the fake model of
``agent_home.py`` recording what each request held.

Checked: the second process's request holds the first conversation's messages and its
transcript goes on in the same file; the terminal shows where it left off; a prefix of the id;
an unknown or ambiguous id, a damaged transcript, a subagent's, another model's, none in this
directory; a call the first process left unanswered and a last line cut short; a terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pexpect
import pytest

from agent.agent_home import AgentHome, turn
from agent.test_cli_run import spawn
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def sessions(home: AgentHome) -> list[Path]:
    return sorted((home.cli.home / "sessions").glob("*.jsonl"))


def contents(path: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r["role"], r["content"]) for r in records if r["type"] == "message"]


def test_continue_takes_up_the_last_conversation_in_the_same_transcript(
    home: AgentHome,
) -> None:
    home.setup({"text": "Hello, Ada."})
    home.cli.run("chat", input="I am Ada\n")
    home.setup({"echo": True})  # each process reads the script afresh
    done = home.cli.run("chat", "--continue", input="what did I say?\n")
    assert "heard: what did I say?" in done.stdout
    assert [(m["role"], m["content"]) for m in home.requests()[1]["messages"]] == [
        ("user", "I am Ada"),
        ("assistant", "Hello, Ada."),
        ("user", "what did I say?"),
    ]
    [transcript] = sessions(home)
    assert contents(transcript) == [
        ("user", "I am Ada"),
        ("assistant", "Hello, Ada."),
        ("user", "what did I say?"),
        ("assistant", "heard: what did I say?"),
    ]
    # where it left off, on stderr (stdout holds the answers alone)
    assert f"resuming {transcript.stem}" in done.stderr
    assert "you> I am Ada" in done.stderr
    assert "Hello, Ada." in done.stderr
    assert "Hello, Ada." not in done.stdout


def test_the_summary_names_tool_calls_without_their_output(home: AgentHome) -> None:
    home.setup(turn("", ("read_file", {"path": "secret-output.txt"})), {"text": "Done."})
    (home.cli.work / "secret-output.txt").write_text("RAW TOOL OUTPUT\n", encoding="utf-8")
    home.cli.run("chat", input="read it\n")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--continue", input="again\n")
    assert "RAW TOOL OUTPUT" not in done.stderr
    assert "RAW TOOL OUTPUT" in json.dumps(home.requests()[2]["messages"])
    assert "Done." in done.stderr


def test_the_summary_names_the_real_tool_of_a_bridge_call(home: AgentHome) -> None:
    """The live chat showed ``-> todo_list ...``; the summary said ``(called tool_call)``."""
    carried = {"calls": [{"name": "todo_list", "arguments": {}}]}
    home.setup(turn("", ("tool_call", carried)), {"text": "Listed."})
    home.cli.run("chat", input="show my todos\n")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--continue", input="again\n")
    assert "  (called todo_list)\n" in done.stderr


def test_continue_picks_this_directory_s_conversation(home: AgentHome, tmp_path: Path) -> None:
    home.setup({"text": "Here."})
    home.cli.run("chat", input="in work\n")
    home.setup({"text": "Elsewhere."})
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(
        home.cli.command("chat"),
        cwd=other,
        env=home.cli.variables(),
        input="in other\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    home.setup({"echo": True})
    home.cli.run("chat", "--continue", input="where?\n")
    assert [m["content"] for m in home.requests()[2]["messages"]] == ["in work", "Here.", "where?"]


def test_continue_takes_up_the_users_conversation_not_a_cron_jobs_run(home: AgentHome) -> None:
    """A cron job made in this directory runs there: its run's transcript was the one
    appended to last, so ``--continue`` took up the job's run, not the user's chat. The run
    stays the job's: ``--resume ID`` still takes it up."""
    home.setup({"text": "Hello, Ada."})
    home.cli.run("chat", input="I am Ada\n")
    home.setup({"text": "The logs are quiet."})
    home.cli.run("cron", "create", "every 1h", "Sum up the logs", "--name", "logs")
    home.cli.run("cron", "run", "logs")
    home.setup({"echo": True})
    home.cli.run("chat", "--continue", input="what did I say?\n")
    assert [m["content"] for m in home.requests()[-1]["messages"]] == [
        "I am Ada",
        "Hello, Ada.",
        "what did I say?",
    ]
    ran = next(path.stem for path in sessions(home) if "Sum up the logs" in path.read_text())
    home.cli.run("chat", "--resume", ran, input="and then?\n")
    assert [m["content"] for m in home.requests()[-1]["messages"]][-2:] == [
        "The logs are quiet.",
        "and then?",
    ]


@pytest.mark.parametrize("command", ["chat", "run"])
def test_continue_with_no_conversation_here_says_so(home: AgentHome, command: str) -> None:
    home.setup({"text": "Never."})
    prompt = ["hi"] if command == "run" else []
    done = home.cli.run(command, "--continue", *prompt, input="hi\n", ok=False)
    assert done.returncode == 2
    assert "no earlier conversation in" in done.stderr
    # the way out named is one of this command (`hermes run` was told of hermes chat's)
    assert f"(hermes {command} --resume SESSION takes up another)" in done.stderr
    assert home.requests() == []


def test_resume_takes_a_prefix_of_the_id(home: AgentHome) -> None:
    home.setup({"text": "One."})
    home.cli.run("chat", input="first\n")
    [first] = sessions(home)
    home.cli.run("chat", input="second\n")
    home.setup({"echo": True})
    home.cli.run("chat", "--resume", first.stem[:8], input="again\n")
    assert [m["content"] for m in home.requests()[2]["messages"]] == ["first", "One.", "again"]


def test_an_unknown_id_lists_the_recent_conversations(home: AgentHome) -> None:
    home.setup({"text": "One."})
    home.cli.run("chat", input="remember the milk\n")
    [first] = sessions(home)
    done = home.cli.run("chat", "--resume", "nosuchsession", input="hi\n", ok=False)
    assert done.returncode == 2
    assert "no conversation nosuchsession" in done.stderr
    assert first.stem in done.stderr
    assert "remember the milk" in done.stderr


def test_an_ambiguous_prefix_names_the_candidates(home: AgentHome) -> None:
    home.setup({"text": "One."})
    directory = home.cli.home / "sessions"
    directory.mkdir(mode=0o700, exist_ok=True)
    for name in ("abc1", "abc2"):
        header = {"type": "session", "id": name, "model": "fake-1", "parent": None, "time": 1.0}
        (directory / f"{name}.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    done = home.cli.run("chat", "--resume", "abc", input="hi\n", ok=False)
    assert done.returncode == 2
    assert "abc1" in done.stderr
    assert "abc2" in done.stderr


def _write(home: AgentHome, name: str, *records: dict[str, object], tail: str = "") -> Path:
    directory = home.cli.home / "sessions"
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{name}.jsonl"
    lines = "".join(json.dumps(record) + "\n" for record in records)
    path.write_text(lines + tail, encoding="utf-8")
    return path


def _header(name: str, parent: str | None = None) -> dict[str, object]:
    return {"type": "session", "id": name, "model": "fake-1", "parent": parent, "time": 1.0}


def _message(role: str, content: str, **more: object) -> dict[str, object]:
    return {"type": "message", "time": 1.0, "role": role, "content": content, **more}


def test_a_damaged_transcript_names_the_file_and_line(home: AgentHome) -> None:
    home.setup({"text": "Never."})
    path = _write(home, "damaged", _header("damaged"), _message("user", "hi"))
    with path.open("a", encoding="utf-8") as out:
        out.write("not json\n")
    done = home.cli.run("chat", "--resume", "damaged", input="hi\n", ok=False)
    assert done.returncode == 2
    assert f"{path}, line 3" in done.stderr
    assert "mend that line, or delete the conversation: hermes sessions delete damaged" in (
        done.stderr
    )
    assert home.requests() == []


def test_a_subagent_s_transcript_is_refused_naming_its_parent(home: AgentHome) -> None:
    home.setup({"text": "Never."})
    _write(home, "child1", _header("child1", parent="root1"), _message("user", "do it"))
    done = home.cli.run("chat", "--resume", "child1", input="hi\n", ok=False)
    assert done.returncode == 2
    assert "subagent" in done.stderr
    assert "root1" in done.stderr
    assert home.requests() == []


def test_an_unfinished_call_is_answered_and_a_cut_line_dropped(home: AgentHome) -> None:
    home.setup({"echo": True})
    call = {"id": "c1", "name": "read_file", "arguments": "{}"}
    path = _write(
        home,
        "crashed",
        _header("crashed"),
        _message("user", "read it"),
        _message("assistant", "", tool_calls=[call]),
        tail='{"type": "message", "role": "tool", "cont',
    )
    home.cli.run("chat", "--resume", "crashed", input="go on\n")
    [request] = home.requests()
    roles = [(m["role"], m.get("is_error", False)) for m in request["messages"]]
    assert roles == [("user", False), ("assistant", False), ("tool", True), ("user", False)]
    # the cut line is gone, so the transcript reads back whole and holds the new turn
    assert contents(path)[-2:] == [("user", "go on"), ("assistant", "heard: go on")]


def test_run_continue_sends_the_prompt_after_the_history(home: AgentHome) -> None:
    home.setup({"text": "Hello, Ada."})
    home.cli.run("run", "I am Ada")
    home.setup({"echo": True})
    done = home.cli.run("run", "--continue", "who am I?")
    assert "heard: who am I?" in done.stdout
    assert [m["content"] for m in home.requests()[1]["messages"]] == [
        "I am Ada",
        "Hello, Ada.",
        "who am I?",
    ]


def test_another_model_s_conversation_goes_on_with_the_configured_one(home: AgentHome) -> None:
    home.setup({"echo": True})
    header = {**_header("older"), "model": "other-model"}
    _write(home, "older", header, _message("user", "hi"), _message("assistant", "Hello."))
    done = home.cli.run("chat", "--resume", "older", input="still there?\n")
    assert "it was with other-model; it goes on with fake-1" in done.stderr
    assert [m["content"] for m in home.requests()[0]["messages"]] == [
        "hi",
        "Hello.",
        "still there?",
    ]


def test_on_a_terminal_the_summary_comes_before_the_prompt(home: AgentHome) -> None:
    home.setup({"text": "Hello, Ada."})
    home.cli.run("chat", input="I am Ada\n")
    home.setup({"echo": True})
    child = spawn(home, "chat", "--continue")
    child.expect_exact("hermes: resuming")
    child.expect_exact("you> I am Ada")
    child.expect_exact("Hello, Ada.")
    child.expect_exact("you> ")
    child.sendline("and now?")
    child.expect_exact("heard: and now?")
    child.expect_exact("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert [m["content"] for m in home.requests()[1]["messages"]] == [
        "I am Ada",
        "Hello, Ada.",
        "and now?",
    ]


def test_the_summary_and_the_listing_show_control_characters_escaped(home: AgentHome) -> None:
    # The transcript holds what the person typed and what the model wrote, tool names
    # included: read back on the terminal, an escape sequence in them (here OSC 52's clipboard
    # write and a screen clear) must not be obeyed, as the live chat's tool lines never are.
    osc52 = "\x1b]52;c;aGVybWVz\x07"
    home.setup(turn("\x1b[2Jdone", (f"read{osc52}", {})), {"text": f"Finished{osc52}."})
    home.cli.run("chat", input=f"hello{osc52}\n")
    home.setup({"echo": True})
    resumed = home.cli.run("chat", "--continue", input="again\n")
    listed = home.cli.run("chat", "--resume", "nosuchsession", input="hi\n", ok=False)
    for stderr in (resumed.stderr, listed.stderr):
        assert "\x1b" not in stderr
        assert "\x07" not in stderr
        assert "hello\\x1b]52;c;aGVybWVz\\x07" in stderr
    assert "(called read\\x1b]52;c;aGVybWVz\\x07)" in resumed.stderr
    assert "Finished\\x1b]52;c;aGVybWVz\\x07." in resumed.stderr


def test_an_empty_session_id_is_refused_not_taken_for_a_prefix_of_every_id(
    home: AgentHome,
) -> None:
    # '' starts every id: with one conversation kept, --resume "" (an unset shell variable,
    # --resume "$ID") would take it up as if it had been named.
    home.setup({"text": "One."})
    home.cli.run("chat", input="first\n")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--resume", "", input="again\n", ok=False)
    assert done.returncode == 2
    assert "--resume needs a session id" in done.stderr
    assert len(home.requests()) == 1


@pytest.mark.parametrize(("said", "about"), [(1, "1 message)"), (2, "2 messages)")])
def test_a_listed_conversation_of_one_message_says_message(
    tmp_path: Path, said: int, about: str
) -> None:
    from hermes_core._cli.resuming import _line
    from hermes_core.agent import Message, TranscriptStore

    transcript = TranscriptStore(tmp_path).open("s1")
    transcript.start("s1", model="fake-1")
    for n in range(said):
        transcript.add(Message("user", f"hello {n}"))

    assert about in _line(transcript)


def _with_effort(effort: str | None) -> dict[str, object]:
    return {"provider": "fake", "model": "fake-1", "max_retries": 1, "reasoning_effort": effort}


def test_the_effort_is_kept_in_the_header_and_goes_on_as_configured(home: AgentHome) -> None:
    """The header names the effort the conversation ran with; taken up again, it goes on with
    the configured one, as the model does, said on stderr; ``sessions show`` names it."""
    home.setup({"text": "Hello, Ada."}, model=_with_effort("high"))
    home.cli.run("chat", input="I am Ada\n")
    [transcript] = sessions(home)
    shown = home.cli.run("sessions", "show", transcript.stem).stdout.splitlines()[0]
    assert shown.startswith(f"conversation {transcript.stem} (model fake-1, reasoning effort high")
    home.setup({"echo": True}, model=_with_effort("low"))
    done = home.cli.run("chat", "--continue", input="again\n")
    assert "it was with reasoning effort high; it goes on with low" in done.stderr
    records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    efforts = [r["reasoning_effort"] for r in records if r["type"] == "session"]
    assert efforts == ["high", "low"]
    home.setup({"echo": True})  # none configured: the model's own default
    done = home.cli.run("chat", "--continue", input="and now?\n")
    assert "it was with reasoning effort low; it goes on with the model's default" in done.stderr


def test_an_old_header_without_an_effort_says_nothing_of_it(home: AgentHome) -> None:
    home.setup({"echo": True}, model=_with_effort("high"))
    _write(home, "older", _header("older"), _message("user", "hi"), _message("assistant", "Hey"))
    shown = home.cli.run("sessions", "show", "older").stdout.splitlines()[0]
    assert shown == "conversation older (model fake-1)"
    done = home.cli.run("chat", "--resume", "older", input="still there?\n")
    assert "effort" not in done.stderr

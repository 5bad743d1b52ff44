"""Resuming reads a transcript as it last ran: the latest header wins (its directory for
``--continue``, its model for the summary line), and the listing of conversations to take up
counts messages by the rule ``session_search`` counts them by. Real ``hermes`` processes on a
temporary home, the fake model of ``agent_home.py``."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from agent.agent_home import AgentHome, turn
from hermes_core.testing import HermesCli
from tests.memory.bundled import bundled

pytestmark = pytest.mark.subprocess
INDEX = importlib.import_module(f"{bundled('session_search').__name__}.index")


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def _chat_in(home: AgentHome, directory: Path, *args: str, text: str) -> str:
    done = subprocess.run(
        home.cli.command("chat", *args),
        cwd=directory,
        env=home.cli.variables(),
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stderr


def _write(home: AgentHome, name: str, *records: dict[str, object]) -> Path:
    directory = home.cli.home / "sessions"
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _header(name: str, model: str, cwd: str | None = None) -> dict[str, object]:
    return {"type": "session", "id": name, "model": model, "parent": None, "cwd": cwd, "time": 1}


def _message(role: str, content: str) -> dict[str, object]:
    return {"type": "message", "time": 1.0, "role": role, "content": content}


def test_continue_finds_a_conversation_by_the_directory_it_last_ran_in(
    home: AgentHome, tmp_path: Path
) -> None:
    home.setup({"text": "Here."})
    home.cli.run("chat", input="started in work\n")
    home.setup({"echo": True})  # each process reads the script afresh
    [transcript] = (home.cli.home / "sessions").glob("*.jsonl")
    other = tmp_path / "other"
    other.mkdir()
    _chat_in(home, other, "--resume", transcript.stem, text="went on in other\n")
    # It last ran in other: --continue there takes it up, and work has none of its own now.
    _chat_in(home, other, "--continue", text="still here?\n")
    assert [m["content"] for m in home.requests()[2]["messages"]] == [
        "started in work",
        "Here.",
        "went on in other",
        "heard: went on in other",
        "still here?",
    ]
    done = home.cli.run("chat", "--continue", input="hi\n", ok=False)
    assert done.returncode == 2
    assert "no earlier conversation in" in done.stderr


def test_the_summary_names_the_model_the_conversation_last_ran_with(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    _write(
        home,
        "switched",
        _header("switched", "other-model"),
        _message("user", "hi"),
        _message("assistant", "Hello."),
        _header("switched", "fake-1"),
        _message("user", "again"),
        _message("assistant", "Again."),
    )
    done = home.cli.run("chat", "--resume", "switched", input="still there?\n")
    assert "resuming switched" in done.stderr
    assert "it was with" not in done.stderr
    _write(
        home,
        "back",
        _header("back", "fake-1"),
        _message("user", "hi"),
        _header("back", "other-model"),
        _message("user", "again"),
    )
    done = home.cli.run("chat", "--resume", "back", input="still there?\n")
    assert "it was with other-model; it goes on with fake-1" in done.stderr


def test_the_listing_and_session_search_count_a_conversation_s_messages_alike(
    home: AgentHome, tmp_path: Path
) -> None:
    # user, the model's call (no text), the tool's result, the model's answer: 3 with text
    home.setup(turn("", ("read_file", {"path": "notes.txt"})), {"text": "It says hi."})
    (home.cli.work / "notes.txt").write_text("hi\n", encoding="utf-8")
    home.cli.run("chat", input="read notes\n")
    [transcript] = (home.cli.home / "sessions").glob("*.jsonl")
    index = INDEX.SessionIndex(tmp_path / "search.db", transcript.parent)
    index.update()
    [hit] = index.search("notes", 5)
    listed = home.cli.run("chat", "--resume", "nosuchsession", input="hi\n", ok=False)
    home.setup({"echo": True})
    resumed = home.cli.run("chat", "--resume", transcript.stem, input="and?\n")
    counts = {int(n) for n in re.findall(r"(\d+) messages", listed.stderr + resumed.stderr)}
    assert counts == {hit.messages}
    assert hit.messages == 3

"""``/resume`` in ``hermes chat``: the recent conversations of this directory, numbered, and
``/resume NUMBER`` or ``/resume ID`` switching the chat to one, with the summary ``--resume``
shows. A real ``hermes chat`` on a temporary home, its lines piped; the fake model of
``agent_home.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.agent_home import AgentHome
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def _by_first_message(home: AgentHome) -> dict[str, Path]:
    found = {}
    for path in (home.cli.home / "sessions").glob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        first = next(r["content"] for r in lines if r.get("role") == "user")
        found[first] = path
    return found


def test_resume_lists_this_directory_s_conversations_and_switches_to_one(
    home: AgentHome,
) -> None:
    home.setup({"text": "Alpha noted."}, {"text": "Beta noted."})
    home.cli.run("chat", input="about alpha\n")
    home.cli.run("chat", input="about beta\n")
    alpha = _by_first_message(home)["about alpha"]
    beta = _by_first_message(home)["about beta"]
    home.setup({"echo": True}, {"echo": True})
    done = home.cli.run("chat", input="/resume\n/resume 2\nwhat was it?\n")
    # the listing: the newest first, numbered, as the CLI's listing shows each one
    assert f"  1. {beta.stem}  (" in done.stderr
    assert f"  2. {alpha.stem}  (" in done.stderr
    assert done.stderr.index(beta.stem) < done.stderr.index(alpha.stem)
    assert "about alpha" in done.stderr
    # the summary --resume shows, then the conversation goes on in alpha's transcript
    assert f"hermes: resuming {alpha.stem} (" in done.stderr
    assert "you> about alpha" in done.stderr
    assert [m["content"] for m in home.requests()[-1]["messages"]] == [
        "about alpha",
        "Alpha noted.",
        "what was it?",
    ]
    assert "what was it?" in alpha.read_text(encoding="utf-8")
    assert len(list((home.cli.home / "sessions").glob("*.jsonl"))) == 2


def test_resume_takes_an_id_prefix_and_says_why_it_cannot(home: AgentHome) -> None:
    home.setup({"text": "Alpha noted."})
    home.cli.run("chat", input="about alpha\n")
    alpha = _by_first_message(home)["about alpha"]
    home.setup({"echo": True}, {"echo": True})
    done = home.cli.run(
        "chat", input=f"/resume nosuchsession\n/resume 7\n/resume {alpha.stem[:8]}\nand?\n"
    )
    assert "no conversation nosuchsession" in done.stderr
    assert "no conversation 7 in the listing" in done.stderr
    assert f"hermes: resuming {alpha.stem} (" in done.stderr
    [request] = home.requests()[1:]
    assert [m["content"] for m in request["messages"]] == ["about alpha", "Alpha noted.", "and?"]


def test_resume_leaves_out_the_conversation_the_chat_is_in(home: AgentHome) -> None:
    home.setup({"text": "Alpha noted."}, {"echo": True})
    home.cli.run("chat", input="about alpha\n")
    alpha = _by_first_message(home)["about alpha"]
    done = home.cli.run("chat", input="now here\n/resume\n")
    here = _by_first_message(home)["now here"]
    assert f"  1. {alpha.stem}  (" in done.stderr
    assert here.stem not in done.stderr


def test_a_number_python_cannot_read_is_taken_for_an_id_and_the_chat_goes_on(
    home: AgentHome,
) -> None:
    # "²" is a digit to str.isdigit() but no number to int(): said, never a crash of the chat.
    home.setup({"text": "Alpha noted."})
    home.cli.run("chat", input="about alpha\n")
    home.setup({"echo": True})  # each process reads the script afresh
    done = home.cli.run("chat", input="/resume \u00b2\nstill here?\n")
    assert "no conversation \u00b2" in done.stderr
    assert "heard: still here?" in done.stdout

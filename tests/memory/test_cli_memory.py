"""``hermes memory``: the user sees and trims the agent's memory without asking the model.

The real command over a real home: the memory a ``hermes run`` saved through the model's
``memory`` tool (a fake model, a directory plugin answering from a script: no model can run
here, see ``tests/agent/agent_home.py``), a file edited by hand, and the next conversation's
system prompt after the user removed an entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent.agent_home import AgentHome, turn

from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def home(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> AgentHome:
    return AgentHome(InProcessCli(tmp_path, home=hermes_home, work=hermes_project))


def remember(target: str, content: str) -> tuple[str, dict[str, str]]:
    return ("memory", {"action": "add", "target": target, "content": content})


def test_the_user_lists_what_the_model_saved_and_removes_an_entry_the_next_session_lacks(
    home: AgentHome,
) -> None:
    home.setup(
        turn("", remember("user", "The user's name is Ada"), remember("memory", "Tests: nox")),
        turn("Noted."),
        turn("Hello."),
    )
    home.cli.run("run", "I am Ada; the tests run with nox.")

    listed = home.cli.run("memory", "list")
    assert listed.stdout.splitlines() == [
        "memory: 10/2200 characters, 1 entry",
        "  1. Tests: nox",
        "user: 22/1375 characters, 1 entry",
        "  1. The user's name is Ada",
    ]
    data = json.loads(home.cli.run("memory", "list", "--json").stdout)
    assert data["provider"] == "memory provider 'file' (plugin 'memory')"
    assert data["parts"] == [
        {"target": "memory", "used": 10, "budget": 2200, "entries": ["Tests: nox"]},
        {"target": "user", "used": 22, "budget": 1375, "entries": ["The user's name is Ada"]},
    ]

    removed = home.cli.run("memory", "remove", "user", "Ada")
    assert removed.stdout == (
        'memory: removed "The user\'s name is Ada". user: 0/1375 characters, 0 entries.\n'
    )
    assert (home.cli.home / "memories" / "USER.md").read_text(encoding="utf-8") == ""

    home.cli.run("run", "Hello!")
    system = home.requests()[-1]["system"]
    assert "Tests: nox" in system
    assert "Ada" not in system


def test_a_remove_matching_two_entries_changes_nothing_and_fails(home: AgentHome) -> None:
    memories = home.cli.home / "memories"
    memories.mkdir()
    # Edited by hand in an editor on Windows: CRLF line ends.
    (memories / "MEMORY.md").write_bytes(b"deploy with make ship\r\n\xc2\xa7\r\ndeploy staging\r\n")
    before = (memories / "MEMORY.md").read_bytes()

    done = home.cli.run("memory", "remove", "memory", "deploy", ok=False)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("hermes: error: memory: 'deploy' matches 2 entries of memory")
    assert (memories / "MEMORY.md").read_bytes() == before

    unknown = home.cli.run("memory", "remove", "users", "Ada", ok=False)
    assert unknown.returncode == 2
    assert "'users' is not one of 'memory', 'user'" in unknown.stderr


def test_an_empty_memory_and_a_memory_turned_off_are_said(home: AgentHome) -> None:
    home.setup()
    listed = home.cli.run("memory", "list")
    assert listed.stdout == (
        "memory: 0/2200 characters, 0 entries\nuser: 0/1375 characters, 0 entries\n"
    )
    home.setup(memory={"enabled": False})
    off = home.cli.run("memory", "list")
    assert off.stdout == ""
    assert off.stderr == (
        f"hermes: warning: the memory is off (memory.enabled: false in {home.cli.config}): "
        "the model has no memory tool and no snapshot\n"
    )
    # A script reading --json gets the object --json promises, with nothing in it.
    assert home.cli.json("memory", "list", "--json") == {"provider": None, "parts": []}


def test_a_file_saved_by_a_windows_editor_reads_as_its_entries_or_says_how_to_fix_it(
    home: AgentHome,
) -> None:
    home.setup()
    memories = home.cli.home / "memories"
    memories.mkdir()
    # Notepad's UTF-8 starts with a byte order mark: not part of the first entry.
    (memories / "USER.md").write_bytes("\ufeffPrefers tabs\r\n§\r\nLives in Lyon\r\n".encode())
    listed = home.cli.run("memory", "list", "--json")
    user = json.loads(listed.stdout)["parts"][1]
    assert user["entries"] == ["Prefers tabs", "Lives in Lyon"]
    # PowerShell's `>` writes UTF-16.
    (memories / "USER.md").write_bytes("Prefers tabs\r\n".encode("utf-16"))
    done = home.cli.run("memory", "list", ok=False)
    assert done.returncode == 1
    assert done.stderr == (
        "hermes: error: memory: the user part cannot be read: "
        f"{memories / 'USER.md'} is not UTF-8 text (byte 0xff at offset 0): "
        "save it as UTF-8 (entries separated by a line holding only §)\n"
    )

"""A memory part over its budget (a file edited by hand, a budget lowered), seen through the real
``hermes run`` (subprocesses, with the fake model of ``tests/agent/agent_home.py``): the warning
comes once for each state of the memory, not at every session's start; the model is told what
was left out at every one."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import HermesCli
from tests.agent.agent_home import AgentHome

pytestmark = pytest.mark.subprocess

NOTE = "Deploy with ./ship from the repository root, never by hand."
WARNING = "hermes: warning: "


@pytest.fixture
def home(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> AgentHome:
    home = AgentHome(HermesCli(tmp_path, home=hermes_home, work=hermes_project))
    home.setup({"text": "Hello."}, memory={"memory_chars": 100})
    return home


def write_memory(home: AgentHome, *entries: str) -> None:
    path = home.cli.home / "memories" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n§\n".join(entries) + "\n", encoding="utf-8")


def over_budget_warnings(home: AgentHome) -> list[str]:
    """The over-budget warnings of one ``hermes run`` on its stderr."""
    stderr = home.cli.run("run", "hello").stderr
    return [line for line in stderr.splitlines() if "over its budget" in line]


def test_the_over_budget_warning_comes_once_for_each_state_of_the_memory(
    home: AgentHome,
) -> None:
    write_memory(home, NOTE, "planted " + "y" * 200)

    first = over_budget_warnings(home)
    again = over_budget_warnings(home)
    write_memory(home, NOTE, "planted " + "z" * 300)  # edited again, still over
    edited = over_budget_warnings(home)
    write_memory(home, NOTE)  # within its budget
    fitting = over_budget_warnings(home)
    write_memory(home, NOTE, "planted " + "z" * 300)  # over once more, as before
    back = over_budget_warnings(home)

    assert len(first) == 1
    assert first[0].startswith(WARNING)
    assert "memory: 267/100 characters, 2 entries" in first[0]
    assert "1 entry (208 characters) left out of the system prompt" in first[0]
    assert again == []
    assert len(edited) == 1
    assert "memory: 367/100 characters" in edited[0]
    assert fitting == []
    assert len(back) == 1
    # Each session's prompt still says what was left out, warned or not.
    prompts = [request["system"] for request in home.requests()]
    assert len(prompts) == 5
    assert ["was left out: over the budget of 100" in prompt for prompt in prompts] == [
        True,
        True,
        True,
        False,
        True,
    ]

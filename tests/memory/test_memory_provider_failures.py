"""A third-party memory provider that breaks its contract at run time, seen through the real
``hermes run`` (a subprocess, with the fake model of ``tests/agent/agent_home.py``): what it
returned or raised is named with the provider and its plugin, nothing it did not mean is saved,
and no traceback reaches the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli, write_dir_plugin
from tests.agent.agent_home import AgentHome, turn

pytestmark = pytest.mark.subprocess

BROKEN_MEMORY = '''
"""A memory provider ``broken`` whose load does what ``plugins.entries.broken-memory.load``
says, and which records each save in the file ``saves`` names."""

import json
from pathlib import Path

from hermes_core.plugin import MemoryProviderSpec, hookimpl


class Broken:
    def __init__(self, settings):
        self.settings = settings

    def load(self, target):
        how = self.settings["load"]
        if how == "string":
            return "one entry"  # not a list: each character would become an entry
        if how == "numbers":
            return [1, 2]
        raise RuntimeError("the memory database went away")

    def save(self, target, entries):
        with open(self.settings["saves"], "a", encoding="utf-8") as out:
            out.write(json.dumps([target, list(entries)]) + "\\n")


@hookimpl
def hermes_memory_providers():
    return [MemoryProviderSpec("broken", lambda context: Broken(context.settings))]
'''


@pytest.fixture
def home(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> AgentHome:
    return AgentHome(HermesCli(tmp_path, home=hermes_home, work=hermes_project))


def run_memory_add(home: AgentHome, load: str) -> tuple[str, dict[str, object]]:
    """``hermes run --json`` where the model adds a memory entry over the broken provider: its
    stderr and the tool's result event."""
    write_dir_plugin(home.cli.home / "plugins", "broken-memory", BROKEN_MEMORY)
    saves = home.cli.root / "saves.jsonl"
    home.setup(
        turn("", ("memory", {"action": "add", "target": "user", "content": "Prefers tea"})),
        {"echo": True},
        memory={"provider": "broken"},
        plugins={
            "enabled": ["broken-memory"],
            "entries": {"broken-memory": {"load": load, "saves": str(saves)}},
        },
    )
    done = home.cli.run("run", "--json", "remember that I prefer tea")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    result = next(event for event in events if event["type"] == "tool_result")
    assert not saves.exists()  # nothing was saved over what the provider holds
    return done.stderr, result


@pytest.mark.parametrize(
    ("load", "returned"), [("string", "str 'one entry'"), ("numbers", "a list holding int 1")]
)
def test_a_load_that_returns_no_list_of_strings_is_refused_naming_the_provider(
    home: AgentHome, load: str, returned: str
) -> None:
    stderr, result = run_memory_add(home, load)

    assert result["is_error"] is True
    assert result["error_code"] == "TOOL_ERROR"
    assert (
        f"memory provider 'broken' (plugin 'broken-memory'): load('user') returned {returned}, "
        "not a list of strings"
    ) in str(result["text"])
    assert "Traceback" not in stderr


def test_a_load_that_raises_is_named_and_leaves_no_traceback_on_the_terminal(
    home: AgentHome,
) -> None:
    stderr, result = run_memory_add(home, "raise")

    assert result["error_code"] == "TOOL_ERROR"
    failure = (
        "memory provider 'broken' (plugin 'broken-memory') failed: load('memory') raised "
        "RuntimeError: the memory database went away"
    )
    assert failure.replace("'memory'", "'user'") in str(result["text"])
    assert f"hermes: warning: the memory was left out of the system prompt: {failure}" in stderr
    assert "Traceback" not in stderr

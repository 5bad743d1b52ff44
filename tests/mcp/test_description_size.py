"""A tool whose description is megabytes: one careless or hostile MCP server (a real one here,
``servers/badtools.py``, listing a tool described in 3 MB of words) must not fill the model's
context through ``tool_describe``, nor blow up every request as a core tool. Such a description
is shortened at a word to the cap, the cut said in its text, with one warning naming the server,
the tool and the length; the tool still registers and works."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

BADTOOLS = Path(__file__).resolve().parent / "servers" / "badtools.py"
MAX_DESCRIPTION_CHARACTERS = 16_384
"""The cap docs/mcp.md states."""

LONG = "Find the issues of a project by their labels. " * 64_000
READ_ONLY = {"readOnlyHint": True}
SMALL = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "ok", "description": "Echo a text.", "inputSchema": SMALL},
    {"name": "wordy", "description": LONG, "inputSchema": SMALL, "annotations": READ_ONLY},
]


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _configure(
    cli: InProcessCli, tmp: Path, listed: list[dict[str, Any]] = TOOLS, **config: Any
) -> None:
    listing = tmp / "listing.json"
    listing.write_text(json.dumps(listed), encoding="utf-8")
    server = {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
    cli.config.write_text(json.dumps({"mcp_servers": {"big": server}, **config}), "utf-8")


def _shortened(description: str) -> None:
    assert len(description) <= MAX_DESCRIPTION_CHARACTERS
    assert len(description) > MAX_DESCRIPTION_CHARACTERS - 200
    body, _, note = description.rpartition("...")
    assert LONG.startswith(body)
    assert LONG[len(body)] == " "  # cut at a word
    assert f"description cut at {MAX_DESCRIPTION_CHARACTERS:,} characters" in note
    assert f"{len(LONG):,}" in note


def _one_length_warning(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if "'wordy'" in line]
    assert len(lines) == 1, stderr[-3000:]
    (line,) = lines
    assert "MCP server 'big'" in line
    assert f"{len(LONG):,}" in line
    assert f"{MAX_DESCRIPTION_CHARACTERS:,}" in line
    assert "shortened" in line


def test_the_cap_is_far_below_the_long_description_and_far_above_real_ones() -> None:
    # The longest real description measured (docs/mcp.md): 8,018 characters.
    assert 2 * 8_018 < MAX_DESCRIPTION_CHARACTERS < len(LONG) // 100


def test_tool_describe_of_a_3_mb_description_shortens_it_and_warns_once(
    cli: InProcessCli, tmp_path: Path
) -> None:
    _configure(cli, tmp_path)

    done = cli.subprocess_run("tools", "describe", "--json", "mcp__big__wordy")

    assert done.returncode == 0, done.stderr[-3000:]
    described = json.loads(done.stdout)["tools"]["mcp__big__wordy"]
    _shortened(described["description"])
    assert described["parameters"] == SMALL
    _one_length_warning(done.stderr)


def test_a_core_tool_of_a_3_mb_description_is_sent_shortened_and_still_called(
    cli: InProcessCli, tmp_path: Path
) -> None:
    call = FakeTurn(tool_calls=[FakeToolCall("mcp__big__wordy", {"text": "hi"})])
    with FakeModelServer([call, FakeTurn(text="Done.")]) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        visible = {"tool_search": {"always_visible": ["mcp__big__*"]}}
        _configure(cli, tmp_path, model=model, tools=visible)
        env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        done = cli.subprocess_run("run", "Use wordy.", env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done." in done.stdout
    assert len(requests) == 2
    for request in requests:
        sent = {tool["function"]["name"]: tool["function"] for tool in request.body["tools"]}
        _shortened(sent["mcp__big__wordy"]["description"])
        assert len(json.dumps(request.body)) < 100_000
    assert "called wordy" in json.dumps(requests[1].body)
    _one_length_warning(done.stderr)


def test_tool_describe_of_one_endless_emoji_sequence_shortens_it_and_warns_once(
    cli: InProcessCli, tmp_path: Path
) -> None:
    """20,000 characters that are one emoji sequence (a man joined to a man, on and on): the
    cut looked for the sequence's start by recursing once per emoji, so the listing's screen
    failed with a RecursionError (a traceback logged, the description passed on whole) and
    ``tool_from_spec`` raised it; a shorter chain took time doubling with every two emoji."""
    chain = "\U0001f468\u200d" * 10_000
    listed = [{"name": "wordy", "description": chain, "inputSchema": SMALL}]
    _configure(cli, tmp_path, listed)

    done = cli.subprocess_run("tools", "describe", "--json", "mcp__big__wordy")

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "RecursionError" not in done.stderr
    described = json.loads(done.stdout)["tools"]["mcp__big__wordy"]["description"]
    assert MAX_DESCRIPTION_CHARACTERS - 200 < len(described) <= MAX_DESCRIPTION_CHARACTERS
    body, _, note = described.rpartition("...")
    assert chain.startswith(body)
    assert f"of {len(chain):,})" in note
    warned = [line for line in done.stderr.splitlines() if "'wordy'" in line]
    assert len(warned) == 1, done.stderr[-3000:]
    assert "shortened" in warned[0]

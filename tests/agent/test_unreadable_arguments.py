"""A call whose arguments the model wrote as no JSON object (cut short, single quotes) is
answered with ``INVALID_ARGUMENTS``; sent back as written, it had every later request of the
conversation refused by local servers whose chat templates read the arguments (llama.cpp
answers 500 "Failed to parse tool call arguments as JSON", vLLM 400), so a small local model's
one slip ended the conversation. It goes back as ``{}``, the error saying what was wrong."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_requests import RecordedRequest
from tests.agent.test_compaction import configure

pytestmark = pytest.mark.subprocess


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _called_with(
    cli: InProcessCli, written: str
) -> tuple[subprocess.CompletedProcess[str], list[RecordedRequest]]:
    """``hermes run`` against a model that calls ``read_file`` with the arguments ``written``,
    then answers; what it did and the requests the model got."""
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("read_file", written)]),
        FakeTurn(text="Let me try again."),
    ]
    with FakeModelServer(turns) as server:
        env = configure(cli, server, "openai", model={"context_length": 128000})
        done = cli.subprocess_run("run", "What is in notes.txt?", env=env)
        return done, server.requests


@pytest.mark.parametrize("written", ['{"path": "notes.txt', "{'path': 'notes.txt'}", "[1, 2]"])
def test_a_call_with_unreadable_arguments_does_not_wedge_the_conversation(
    cli: InProcessCli, written: str
) -> None:
    done, requests = _called_with(cli, written)

    assert done.returncode == 0, done.stderr
    assert "<- INVALID_ARGUMENTS" in done.stderr
    assert "Let me try again." in done.stdout
    sent = requests[1].messages
    (calling,) = [m for m in sent if m.get("tool_calls")]
    assert calling["tool_calls"][0]["function"]["arguments"] == "{}"
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert result["content"].startswith("The arguments the model gave for read_file ")
    # the transcript keeps what the model wrote
    (transcript,) = (cli.home / "sessions").glob("*.jsonl")
    assert json.dumps(written) in transcript.read_text(encoding="utf-8")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_call_whose_arguments_hold_a_number_json_has_not_is_sent_back_as_none(
    cli: InProcessCli, number: str
) -> None:
    """``{"limit": NaN}``: Python's reader takes it, JSON has no such number; sent back as
    written, llama.cpp refused every later request, and the Anthropic provider's ``input``
    carried it into a request body no JSON reader takes."""
    written = f'{{"path": "notes.txt", "limit": {number}}}'
    done, requests = _called_with(cli, written)

    assert done.returncode == 0, done.stderr
    assert "Let me try again." in done.stdout
    (calling,) = [m for m in requests[1].messages if m.get("tool_calls")]
    assert calling["tool_calls"][0]["function"]["arguments"] == "{}"

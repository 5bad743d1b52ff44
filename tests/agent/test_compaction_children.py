"""A subagent of ``delegate_task`` is compacted as its parent would be: the same loop, the
parent's ``agent.compact_at`` and ``model.context_length``, its own transcript keeping the
compaction record, and the person is told, labelled with the subagent. The real ``hermes
run`` and ``hermes chat`` (``run`` in this process, as ``InProcessCli`` runs it), the bundled
``openai`` provider against the test kit's ``FakeModelServer`` standing for a model with a
small window (no model runs here)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, RecordedRequest
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_model import Responder
from hermes_core.testing._fake_model_wire import request_tokens
from tests.agent.test_compaction import SUMMARY, WORDS, configure, orphans, summarising

pytestmark = pytest.mark.subprocess

TASK = {
    "goal": "Read the five notes note1.txt to note5.txt and say what they hold",
    "context": "The notes are plain text files in the working directory, one after another.",
}


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def test_a_subagent_reading_long_files_is_compacted_mid_task_and_answers(
    cli: InProcessCli,
) -> None:
    for number in range(1, 6):
        (cli.work / f"note{number}.txt").write_text(f"note {number}: {WORDS * 4}\n")

    def respond(request: RecordedRequest) -> FakeTurn:
        if summarising(request):
            return FakeTurn(text=SUMMARY)
        if "You are a subagent" in request.system:
            last = json.dumps(request.messages[-1])
            read = [n for n in range(1, 6) if f"note {n}:" in last]
            if read and read[-1] == 5:
                return FakeTurn(text="The five notes are lorem ipsum.")
            path = str(cli.work / f"note{read[-1] + 1 if read else 1}.txt")
            return FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": path})])
        if not any(message.get("role") == "tool" for message in request.messages):
            return FakeTurn(tool_calls=[FakeToolCall("delegate_task", {"tasks": [TASK]})])
        return FakeTurn(text="The subagent says: lorem ipsum.")

    with FakeModelServer(responder=respond, context_limit=8000) as server:
        env = configure(cli, server)
        done = cli.run("run", "What do the five notes hold?", env=env)
        requests = server.requests

    assert "The subagent says: lorem ipsum." in done.stdout
    child_summaries = [r for r in requests if summarising(r) and "note 1:" in json.dumps(r.body)]
    assert child_summaries
    assert all(orphans(request) == [] for request in requests)
    assert all(request_tokens(request.body) <= 8000 for request in requests)
    # the child's own transcript (its header names its parent) keeps the compaction record
    compacted = []
    for transcript in (cli.home / "sessions").glob("*.jsonl"):
        lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
        if any(line.get("type") == "compaction" for line in lines):
            compacted.append(lines)
    (child,) = compacted
    assert any(line.get("parent") for line in child)


def reading_child(cli: InProcessCli, parent_gate: threading.Event | None = None) -> Responder:
    """The parent delegates reading five long notes to a subagent, which is compacted while it
    reads them; ``parent_gate`` holds the parent's answer after the delegation until it is
    set (here: once the subagent is compacted)."""
    for number in range(1, 6):
        (cli.work / f"note{number}.txt").write_text(f"note {number}: {WORDS * 4}\n")

    def respond(request: RecordedRequest) -> FakeTurn:
        if summarising(request):
            return FakeTurn(text=SUMMARY)
        if "You are a subagent" in request.system:
            if parent_gate is not None and SUMMARY in json.dumps(request.messages):
                parent_gate.set()
            last = json.dumps(request.messages[-1])
            read = [n for n in range(1, 6) if f"note {n}:" in last]
            if read and read[-1] == 5:
                return FakeTurn(text="The five notes are lorem ipsum.")
            path = str(cli.work / f"note{read[-1] + 1 if read else 1}.txt")
            return FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": path})])
        if not any(message.get("role") == "tool" for message in request.messages):
            return FakeTurn(tool_calls=[FakeToolCall("delegate_task", {"tasks": [TASK]})])
        return FakeTurn(text="The subagent says: lorem ipsum.", gate=parent_gate)

    return respond


def test_a_subagents_compaction_is_a_line_labelled_with_it_in_hermes_run(
    cli: InProcessCli,
) -> None:
    """Its parent's is said (``hermes: compacted ...``); a subagent's was not at all."""
    with FakeModelServer(responder=reading_child(cli), context_limit=8000) as server:
        env = configure(cli, server)
        done = cli.run("run", "What do the five notes hold?", env=env)

    lines = done.stderr.splitlines()
    (said,) = [line for line in lines if line.startswith("=> d1.1 compacted ")]
    assert "messages (about " in said
    assert "tokens) into a summary of " in said
    assert lines.index(said) < lines.index("<= d1.1 completed")
    assert not [line for line in lines if line.startswith("hermes: compacted")]  # not the parent


def test_a_subagents_compaction_is_a_child_compacted_event_in_hermes_run_json(
    cli: InProcessCli,
) -> None:
    with FakeModelServer(responder=reading_child(cli), context_limit=8000) as server:
        env = configure(cli, server)
        done = cli.run("run", "--json", "What do the five notes hold?", env=env)

    events = [json.loads(line) for line in done.stdout.splitlines()]
    (compacted,) = [event for event in events if event["type"] == "child_compacted"]
    assert compacted["label"] == "d1.1"
    assert compacted["reason"] == "size"
    assert compacted["messages"] >= 2
    assert compacted["tokens"] > 0
    assert compacted["summary_tokens"] > 0
    assert compacted["dropped"] == ""
    assert not [event for event in events if event["type"] == "compacted"]


def test_a_subagents_compaction_while_a_chat_waits_for_its_line_is_shown(
    cli: InProcessCli,
) -> None:
    gate = threading.Event()
    with FakeModelServer(responder=reading_child(cli, gate), context_limit=8000) as server:
        env = configure(cli, server)
        done = cli.subprocess_run("chat", input="What do the five notes hold?\n", env=env)

    assert [line for line in done.stderr.splitlines() if line.startswith("=> d1.1 compacted ")]

"""``delegate_task`` in an editor: each subagent is a tool call of its own (started, then
finished with its answer), its approvals reach the editor on that tool call, labelled with the
subagent, and the prompt lasts until a background delegation's results are in."""

from __future__ import annotations

import asyncio
import time

import pytest
from acp_client import RecordingClient, serving

from hermes_core import Environment
from hermes_core.agent import ModelRequest, Usage
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = pytest.mark.anyio

ROOT = "ROOT:"
GOAL = "Append a line to made.txt in the working directory"
CONTEXT = "The repository is at the working directory; nothing else is known about it yet."
COMMAND = "echo made by a subagent >> made.txt"


def _model() -> FakeModelProvider:
    def respond(request: ModelRequest) -> object:
        first, last = request.messages[0], request.messages[-1]
        if first.content.startswith(ROOT):  # the editor's conversation
            if len(request.messages) == 1:
                task = {"goal": GOAL, "context": CONTEXT}
                return fake_turn("Delegating.", ("delegate_task", {"tasks": [task]}))
            if last.role == "tool":
                return "A subagent is on it."
            return "All done: the subagent made the file."
        if len(request.messages) == 1:  # the subagent
            return fake_turn("", ("terminal", {"command": COMMAND}))
        return "Made it."

    return FakeModelProvider(responder=respond)


async def test_a_subagent_is_a_tool_call_and_its_approval_names_it(
    acp_env: Environment,
) -> None:
    client = RecordingClient(permission="once")
    async with serving(acp_env, _model(), client=client) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, f"{ROOT} have a subagent make the file")
    assert answer.stop_reason == "end_turn"
    assert (acp_env.cwd / "made.txt").read_text() == "made by a subagent\n"
    assert client.text().endswith("All done: the subagent made the file.")
    child = [u for u in client.updates if getattr(u, "tool_call_id", "") == "subagent-d1.1"]
    assert [(u.session_update, u.status) for u in child] == [
        ("tool_call", "in_progress"),
        ("tool_call_update", "in_progress"),  # again, once its approval was given
        ("tool_call_update", "completed"),
    ]
    assert child[0].title == f"subagent d1.1: {GOAL}"
    assert child[0].kind == "think"
    assert "Made it." in child[2].content[0].content.text
    [(asked, _)] = client.permissions
    assert asked.tool_call_id == "subagent-d1.1"
    assert "asked by d1.1" in asked.content[0].content.text
    assert asked.title == f"terminal: `{COMMAND}`"


async def test_cancel_while_a_background_delegation_runs_answers_cancelled_and_asks_no_more(
    acp_env: Environment,
) -> None:
    """The editor's cancel after the model's turn, while the prompt waits for a background
    delegation: the prompt answers ``cancelled`` at once and the model is not asked again
    (a stop between turns starts no further turn, as ``hermes run`` promises)."""

    def respond(request: ModelRequest) -> object:
        first, last = request.messages[0], request.messages[-1]
        if first.content.startswith(ROOT):
            if len(request.messages) == 1:
                task = {"goal": GOAL, "context": CONTEXT}
                return fake_turn("Delegating.", ("delegate_task", {"tasks": [task]}))
            if last.role == "tool":
                return "A subagent is on it."
            return "Read the subagent's results."
        if len(request.messages) == 1:  # the subagent: a command that takes its time
            return fake_turn("", ("terminal", {"command": "sleep 30"}))
        return "Slept."

    model = FakeModelProvider(responder=respond)
    client = RecordingClient(permission="once")
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        prompt = asyncio.ensure_future(served.say(session_id, f"{ROOT} have a subagent sleep"))
        await asyncio.wait_for(client.asked.wait(), timeout=30)  # the child's command
        await asyncio.sleep(0.5)
        cancelled_at = time.monotonic()
        await served.conn.cancel(session_id=session_id)
        answer = await asyncio.wait_for(prompt, timeout=20)
        waited = time.monotonic() - cancelled_at
    roots = [r for r in model.requests if r.messages[0].content.startswith(ROOT)]
    assert len(roots) == 2  # the delegation and the tool's answer: nothing after the cancel
    assert answer.stop_reason == "cancelled"
    assert waited < 10


async def test_a_queued_subagent_is_shown_when_it_starts_while_the_prompt_waits(
    acp_env: Environment,
) -> None:
    """``delegation.max_concurrent: 1``: the second subagent starts once the first has ended,
    while the prompt waits for the delegation's results. Its tool call is sent then, while it
    runs (it waits for a file the test writes only after seeing that call), not with the
    results."""
    gate = acp_env.cwd / "go"
    first = {"goal": "Say that the first part of the work is done", "context": CONTEXT}
    second = {"goal": "Wait for the file go, then say the second part is done", "context": CONTEXT}

    def respond(request: ModelRequest) -> object:
        opening, last = request.messages[0].content, request.messages[-1]
        if opening.startswith(ROOT):
            if len(request.messages) == 1:
                return fake_turn("", ("delegate_task", {"tasks": [first, second]}))
            if last.role == "tool":
                return "Two subagents are on it."
            return "Both are done."
        if opening.startswith("Say that"):
            return "The first part is done."
        if len(request.messages) == 1:
            return fake_turn("", ("terminal", {"command": "until [ -f go ]; do sleep 0.05; done"}))
        return "The second part is done."

    client = RecordingClient(permission="once")
    config = {"delegation": {"max_concurrent": 1}}
    async with serving(
        acp_env, FakeModelProvider(responder=respond), config=config, client=client
    ) as served:
        session_id = await served.start(acp_env.cwd)
        prompt = asyncio.ensure_future(served.say(session_id, f"{ROOT} split the work"))

        def second_started() -> bool:
            return any(
                u.session_update == "tool_call" and u.tool_call_id == "subagent-d1.2"
                for u in client.updates
            )

        try:
            while not second_started() and not prompt.done():
                client.updated.clear()
                await asyncio.wait_for(client.updated.wait(), timeout=20)
        finally:
            gate.write_text("", encoding="utf-8")
        answer = await asyncio.wait_for(prompt, timeout=30)
    assert answer.stop_reason == "end_turn"
    shown = [
        (u.tool_call_id, u.session_update, u.status)
        for u in client.updates
        if getattr(u, "tool_call_id", "").startswith("subagent-")
    ]
    assert shown[:3] == [
        ("subagent-d1.1", "tool_call", "in_progress"),
        ("subagent-d1.1", "tool_call_update", "completed"),
        ("subagent-d1.2", "tool_call", "in_progress"),
    ]
    assert shown[-1] == ("subagent-d1.2", "tool_call_update", "completed")
    assert client.text().endswith("Both are done.")


async def test_a_subagents_compaction_is_a_thought_naming_it(acp_env: Environment) -> None:
    """The parent's compaction is told as a thought; a subagent's was not told at all. Here
    the server reports that the subagent's first request took 27,000 tokens (past 0.8 of the
    32,000 window), so its next request is compacted first."""
    (acp_env.cwd / "notes.txt").write_text("the notes\n", encoding="utf-8")
    context = "The notes are in notes.txt. " + "Earlier work on them was long. " * 300

    def respond(request: ModelRequest) -> object:
        first, last = request.messages[0], request.messages[-1]
        if first.content.startswith(ROOT):
            if len(request.messages) == 1:
                task = {"goal": "Read notes.txt and say what it holds", "context": context}
                return fake_turn("", ("delegate_task", {"tasks": [task]}))
            if last.role == "tool":
                return "A subagent is on it."
            return "The subagent read them."
        if not request.tools:  # the summary of the subagent's older part
            return "GOAL: read notes.txt."
        if len(request.messages) == 1:  # the subagent
            read = ("read_file", {"path": str(acp_env.cwd / "notes.txt")})
            return fake_turn("", read, usage=Usage(27_000, 20))
        return "They hold the notes."

    async with serving(acp_env, FakeModelProvider(responder=respond)) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, f"{ROOT} have a subagent read the notes")
        updates = list(served.client.updates)

    assert answer.stop_reason == "end_turn"
    thoughts = [u.content.text for u in updates if u.session_update == "agent_thought_chunk"]
    (said,) = thoughts
    assert said.startswith("Subagent d1.1: compacted 1 messages (about ")
    assert "into a summary of " in said

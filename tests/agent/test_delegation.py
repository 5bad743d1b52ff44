"""``delegate_task`` over a real host: children are conversations in their own sessions (the
session hooks, the terminal plugin's processes, the approval prompt and the activity log are
real), at most ``delegation.max_concurrent`` at once, in the background from the root, spending
one budget, cancelled with their parent.

The model is :class:`FakeModelProvider` (no model can run here): one fake answers the root and
every child, telling them apart by their first message."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pytest

from hermes_core import ApprovalRequest, Config, Environment, Host, Session
from hermes_core.agent import (
    Agent,
    AgentEvent,
    ChildCompacted,
    ChildFinished,
    ChildStarted,
    Conversation,
    Finished,
    ModelRequest,
    ModelSettings,
    ToolFinished,
    TranscriptStore,
    Usage,
    send_until_settled,
)
from hermes_core.plugin import ActivityEvent, Tool, ToolAnnotations, hookimpl
from hermes_core.testing import FakeModelProvider, fake_turn, make_host

pytestmark = pytest.mark.anyio

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
ROOT = "ROOT:"
CONTEXT = "The repository is at the working directory; nothing else is known about it yet."


def task(number: int, **extra: Any) -> dict[str, Any]:
    return {"goal": f"Summarise part {number} of the project notes", "context": CONTEXT, **extra}


class Probe:
    """Watches sessions and calls; gives children tools that meet each other or wait."""

    def __init__(self) -> None:
        self.active: set[str] = set()
        self.most_active = 0
        self.sessions: list[Session] = []
        self.activity: list[ActivityEvent] = []
        self.cap = 0
        self.remaining = 0
        self.inside = 0
        self.round = 0
        self.changed = asyncio.Condition()
        self.gate = asyncio.Event()
        self.holding = asyncio.Event()

    @hookimpl
    def hermes_session_start(self, session: Session) -> None:
        self.sessions.append(session)
        if session.parent_id is not None:
            self.active.add(session.id)
            self.most_active = max(self.most_active, len(self.active))

    @hookimpl
    def hermes_session_end(self, session: Session) -> None:
        self.active.discard(session.id)

    @hookimpl
    def hermes_tool_activity(self, event: ActivityEvent) -> None:
        self.activity.append(event)

    async def rendezvous(self) -> str:
        """Returns once as many children as may run at once are inside (or all that are
        left): children held back by the limit never meet the running ones."""
        async with self.changed:
            mine = self.round
            self.inside += 1
            if self.inside >= min(self.cap, self.remaining):
                self.round += 1
                self.remaining -= self.inside
                self.inside = 0
                self.changed.notify_all()
                return "met"
            try:
                await asyncio.wait_for(self.changed.wait_for(lambda: self.round != mine), 10)
            except TimeoutError:
                return "nobody came"
            return "met"

    async def hold(self, session: Session) -> str:
        """Waits for the gate, or until the session is interrupted (a flag, polled)."""
        self.holding.set()
        for _ in range(3000):
            if session.interrupted:
                return "interrupted while holding"
            if self.gate.is_set():
                return "released"
            await asyncio.sleep(0.01)
        return "never released"

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        number = {"type": "number"}
        return [
            Tool(
                "rendezvous",
                "Meet the siblings.",
                handler=self.rendezvous,
                toolset="probe",
                annotations=READ_ONLY,
                core=True,
            ),
            Tool(
                "hold",
                "Wait.",
                handler=self.hold,
                toolset="probe",
                annotations=READ_ONLY,
                core=True,
            ),
            Tool(
                "add",
                "Add two numbers.",
                {"type": "object", "properties": {"a": number, "b": number}},
                handler=lambda a, b: str(a + b),
                toolset="math",
                annotations=READ_ONLY,
                core=True,
            ),
        ]


def host_with(
    hermes_env: Environment, probe: Probe, *, more: dict[str, object] | None = None, **sections: Any
) -> Host:
    """A host with the bundled plugins (terminal, files, approvals), the probe and ``more``."""
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    env = replace(hermes_env, variables=variables)
    config = Config.model_validate({"approvals": {"policy": "off"}, **sections})
    return make_host(config, env, plugins={"probe": probe, **(more or {})})


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def host(hermes_env: Environment, probe: Probe) -> Iterator[Host]:
    made = host_with(hermes_env, probe)
    yield made
    made.close()


Answer = Callable[[ModelRequest], Any]


def root_then_children(root: Answer, child: Answer) -> FakeModelProvider:
    """One fake model: the root's requests (first message starting ``ROOT:``) to ``root``,
    every child's to ``child``."""

    def respond(request: ModelRequest) -> Any:
        if request.messages[0].content.startswith(ROOT):
            return root(request)
        return child(request)

    return FakeModelProvider(responder=respond)


def delegating(arguments: dict[str, Any]) -> Answer:
    """The root: delegates, says it waits, then reads the results."""

    def root(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user" and last.content.startswith(ROOT):
            return fake_turn("", ("delegate_task", arguments))
        if last.role == "tool":
            return "Delegated; waiting for the results."
        return "Read the results."

    return root


def calling(name: str, arguments: dict[str, Any], *, said: str = "") -> Answer:
    """A child: says ``said`` and calls ``name`` once, then answers ``done: <its goal>``."""

    def child(request: ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            return fake_turn(said, (name, arguments))
        return f"done: {request.messages[0].content.splitlines()[0]}"

    return child


def make_agent(host: Host, model: FakeModelProvider) -> Agent:
    return Agent(host, model, ModelSettings(provider="fake", model="fake-1"))


async def settle(conversation: Conversation, text: str) -> list[AgentEvent]:
    events = send_until_settled(conversation, text)
    return await asyncio.wait_for(_collect(events), 30)


async def _collect(events: Any) -> list[AgentEvent]:
    return [event async for event in events]


def root_requests(model: FakeModelProvider) -> list[ModelRequest]:
    return [r for r in model.requests if r.messages[0].content.startswith(ROOT)]


def child_requests(model: FakeModelProvider) -> list[ModelRequest]:
    return [r for r in model.requests if not r.messages[0].content.startswith(ROOT)]


@pytest.mark.parametrize(("limit", "expected"), [(None, 3), (5, 5)])
async def test_five_tasks_run_at_most_max_concurrent_children_at_once(
    hermes_env: Environment, probe: Probe, limit: int | None, expected: int
) -> None:
    sections: dict[str, Any] = {} if limit is None else {"delegation": {"max_concurrent": limit}}
    host = host_with(hermes_env, probe, **sections)
    try:
        probe.cap, probe.remaining = expected, 5
        tasks = [task(n) for n in range(1, 6)]
        model = root_then_children(delegating({"tasks": tasks}), calling("rendezvous", {}))
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} summarise the notes")
        assert probe.most_active == expected
        assert probe.remaining == 0  # every child met its round: none timed out alone
        finished = [e for e in events if isinstance(e, ChildFinished)]
        assert sorted(e.label for e in finished) == [f"d1.{n}" for n in range(1, 6)]
        assert {e.status for e in finished} == {"completed"}
        results = root_requests(model)[-1].messages[-1]
        assert results.role == "user"
        assert results.content.startswith("[delegation d1 finished]")
        for n in range(1, 6):
            assert f"done: Summarise part {n} of the project notes" in results.content
        assert isinstance(events[-1], Finished)
        assert events[-1].text == "Read the results."
    finally:
        host.close()


async def test_a_childs_first_request_holds_only_its_goal_and_context(
    host: Host, probe: Probe
) -> None:
    probe.cap, probe.remaining = 2, 2
    tasks = [task(1), task(2, toolsets=["math"])]
    model = root_then_children(delegating({"tasks": tasks}), calling("add", {"a": 1, "b": 2}))
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        await settle(conversation, f"{ROOT} the secret word is PARROT; summarise the notes")
    firsts = [r for r in child_requests(model) if len(r.messages) == 1]
    assert len(firsts) == 2
    for request in firsts:
        (message,) = request.messages
        assert message.role == "user"
        assert message.content.endswith(f"\n\nContext:\n{CONTEXT}")
        assert "PARROT" not in message.content
        assert "PARROT" not in request.system
        assert "subagent" in request.system
    by_goal = {r.messages[0].content.splitlines()[0]: r for r in firsts}
    everything = {tool.name for tool in by_goal[task(1)["goal"]].tools}
    assert {"add", "terminal", "write_file", "rendezvous"} <= everything
    assert "delegate_task" not in everything  # max_depth 1: children do not delegate
    assert {tool.name for tool in by_goal[task(2)["goal"]].tools} == {"add"}


async def test_a_background_delegation_answers_at_once_and_its_result_comes_as_a_message(
    host: Host, probe: Probe
) -> None:
    single = {"goal": task(1)["goal"], "context": CONTEXT}

    def root(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            # Another call first: the first call of a process pays the dispatcher's warm-up
            # (imports, schema compilation), which is not the delegation's doing.
            return fake_turn("", ("add", {"a": 1, "b": 2}), ("delegate_task", single))
        return delegating(single)(request)

    model = root_then_children(root, calling("hold", {}))
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        events = []
        async for event in conversation.send(f"{ROOT} summarise the notes"):
            events.append(event)
        # The call answered, and the turn ended, while the child is held at its gate: the
        # answer did not wait for the child (a wall-clock bound here failed under load).
        assert not probe.gate.is_set()
        assert [type(e).__name__ for e in events if isinstance(e, ChildFinished)] == []
        handle = [e for e in events if isinstance(e, ToolFinished)][-1]
        assert not handle.is_error
        assert "Delegation d1 started" in handle.text
        assert isinstance(events[-1], Finished)
        assert events[-1].text == "Delegated; waiting for the results."
        await asyncio.wait_for(probe.holding.wait(), 10)  # the child is at work, not done
        assert conversation.delegations.pending == 1
        assert conversation.delegations.ready() == []
        probe.gate.set()
        message = await asyncio.wait_for(conversation.delegations.next_message(), 10)
        assert message is not None
        assert "status: completed" in message
        assert f"done: {task(1)['goal']}" in message
        assert conversation.delegations.pending == 0
        after = [e async for e in conversation.send(message)]
    assert isinstance(after[-1], Finished)
    assert after[-1].text == "Read the results."
    assert root_requests(model)[-1].messages[-1].content == message
    # The child's start is shown with the turn that started it or with the next one, as the
    # child's task got to it (under load, before the first turn ended); its end with the next.
    seen = [
        type(e).__name__ for e in [*events, *after] if isinstance(e, ChildStarted | ChildFinished)
    ]
    assert seen == ["ChildStarted", "ChildFinished"]
    assert any(isinstance(e, ChildFinished) for e in after)


class RecordingPrompt:
    """Stands for the person at the parent's terminal: takes a moment, answers ``once`` and
    keeps each question (and how many were asked at once)."""

    interactive = True

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []
        self.asking = 0
        self.most_asking = 0

    async def ask(
        self, request: ApprovalRequest, timeout: float
    ) -> Literal["once", "session", "always", "deny"] | None:
        self.asked.append(request)
        self.asking += 1
        self.most_asking = max(self.most_asking, self.asking)
        await asyncio.sleep(0.05)  # the person reading the question
        self.asking -= 1
        return "once"


async def test_a_childs_terminal_approval_reaches_the_parents_prompt(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, approvals={"policy": "annotations"})
    try:
        person = RecordingPrompt()
        command = "echo made by a child >> made.txt"
        model = root_then_children(
            delegating({"tasks": [task(1), task(2)]}), calling("terminal", {"command": command})
        )
        async with host.session(interactive=True, prompt=person) as session:
            conversation = make_agent(host, model).conversation(session)
            await settle(conversation, f"{ROOT} make the file")
        assert [asked.tool_name for asked in person.asked] == ["terminal", "terminal"]
        assert {asked.arguments["command"] for asked in person.asked} == {command}
        reasons = sorted(asked.reason for asked in person.asked)
        assert reasons[0].startswith("asked by d1.1: ")
        assert reasons[1].startswith("asked by d1.2: ")
        assert person.most_asking == 1  # siblings ask one at a time
        assert (session.cwd / "made.txt").read_text() == "made by a child\n" * 2
        tool_result = child_requests(model)[-1].messages[-1]
        assert "[exit code: 0]" in tool_result.content
    finally:
        host.close()


async def test_without_a_prompt_the_childs_approval_is_denied_as_for_its_parent(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, approvals={"policy": "annotations"})
    try:
        model = root_then_children(
            delegating({"tasks": [task(1)]}), calling("terminal", {"command": "touch x"})
        )
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            await settle(conversation, f"{ROOT} make the file")
        tool_result = child_requests(model)[-1].messages[-1]
        assert tool_result.is_error
        assert "nobody can answer" in tool_result.content
        assert not (session.cwd / "x").exists()
    finally:
        host.close()


async def test_a_tree_over_its_budget_returns_partial_answers_marked_as_such(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, agent={"max_turns": 6})
    try:
        said = "Halfway through my part."
        probe.cap, probe.remaining = 2, 2  # both children make a first request, then go on

        def child(request: ModelRequest) -> Any:
            if len(request.messages) == 1:
                return fake_turn(said, ("rendezvous", {}))
            return fake_turn(said, ("add", {"a": 1, "b": 1}))

        model = root_then_children(delegating({"tasks": [task(1), task(2)]}), child)
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} summarise")
        assert len(model.requests) == 6  # one budget: the root and its children together
        results = [e for e in events if isinstance(e, ChildFinished)]
        assert {e.status for e in results} == {"stopped at a limit"}
        message = next(
            m.content for m in conversation.messages if m.content.startswith("[delegation")
        )
        assert message.count("status: stopped at a limit (the limit of 6 model turns") == 2
        assert message.count("its partial answer follows\nHalfway through my part.") == 2
        end = events[-1]
        assert isinstance(end, Finished)
        assert end.stop == "max_turns"
    finally:
        host.close()


async def test_more_tasks_than_the_turns_left_are_refused_before_any_child_starts(
    hermes_env: Environment, probe: Probe
) -> None:
    # 100 tasks on a budget of 10 model requests: 8 children answered, 92 were started to stop
    # at once, and the root never read any result (the budget was spent): all of it wasted.
    host = host_with(hermes_env, probe, agent={"max_turns": 10})
    try:
        tasks = [task(n) for n in range(1, 101)]
        model = root_then_children(delegating({"tasks": tasks}), calling("add", {"a": 1, "b": 1}))
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} summarise")
        (result,) = [e for e in events if isinstance(e, ToolFinished)]
        assert result.error_code == "INVALID_ARGUMENTS"
        assert result.text == (
            "delegate_task: 100 tasks, but this turn has 9 model requests left "
            "(agent.max_turns: 10): each subagent needs one at least, and you one to answer now "
            "and one to read their results; call again with at most 6 tasks, or do the work "
            "yourself."
        )
        assert child_requests(model) == []
        assert not [e for e in events if isinstance(e, ChildStarted)]
    finally:
        host.close()


async def test_exactly_as_many_tasks_as_the_turns_left_allow_are_run_and_read(
    hermes_env: Environment, probe: Probe
) -> None:
    # The edge of the refusal above: 7 tasks with 9 requests left is what the budget holds.
    host = host_with(hermes_env, probe, agent={"max_turns": 10})
    try:
        tasks = [task(n) for n in range(1, 8)]
        model = root_then_children(delegating({"tasks": tasks}), lambda _request: "done")
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} summarise")
        assert len(child_requests(model)) == 7
        assert isinstance(events[-1], Finished)
        assert (events[-1].stop, events[-1].text) == ("answer", "Read the results.")
        assert len(model.requests) == 10
    finally:
        host.close()


async def test_a_model_refused_for_too_many_tasks_that_delegates_as_advised_succeeds(
    hermes_env: Environment, probe: Probe
) -> None:
    # "delegate at most 7 tasks" left out the request that delegates them: 7 tasks were
    # refused again ("at most 6"), and a model doing as told was refused each time.
    host = host_with(hermes_env, probe, agent={"max_turns": 10})
    try:

        def root(request: ModelRequest) -> Any:
            last = request.messages[-1]
            advised = re.search(r"call again with at most (\d+) task", last.content)
            if last.role == "tool" and advised:
                tasks = [task(n) for n in range(1, int(advised.group(1)) + 1)]
                return fake_turn("", ("delegate_task", {"tasks": tasks}))
            return delegating({"tasks": [task(n) for n in range(1, 101)]})(request)

        model = root_then_children(root, lambda _request: "done")
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} summarise")
        refusals = [e for e in events if isinstance(e, ToolFinished) and e.is_error]
        assert len(refusals) == 1, [e.text for e in refusals]
        assert "call again with at most 6 tasks" in refusals[0].text
        assert len(child_requests(model)) == 6
        assert isinstance(events[-1], Finished)
        assert (events[-1].stop, events[-1].text) == ("answer", "Read the results.")
        assert len(model.requests) == 10
    finally:
        host.close()


async def test_a_subagents_fan_out_leaves_a_request_for_each_conversation_above_it(
    hermes_env: Environment, probe: Probe
) -> None:
    # An orchestrator with 8 requests left was let delegate 7 workers, counting only its own
    # read: the workers and its read spent the budget, and the root never read the result.
    host = host_with(hermes_env, probe, delegation={"max_depth": 2}, agent={"max_turns": 12})
    try:
        workers = [
            {"goal": f"Count the lines of the project notes file {n}", "context": CONTEXT}
            for n in range(1, 8)
        ]

        def root(request: ModelRequest) -> Any:
            if request.messages[-1].role == "tool":
                probe.gate.set()  # the root's answer to the handle is spent: 4 requests so far
            return delegating({"tasks": [task(1)]})(request)

        def child(request: ModelRequest) -> Any:
            first, last = request.messages[0].content, request.messages[-1]
            if first.startswith("Count the lines"):
                return "worker done"
            if last.role == "user":
                return fake_turn("", ("hold", {}))
            if last.content == "released":
                return fake_turn("", ("delegate_task", {"tasks": workers}))
            return f"orchestrator read: {last.content}"

        model = root_then_children(root, child)
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} go")
        refused = (
            "delegate_task: 7 tasks, but this turn has 8 model requests left "
            "(agent.max_turns: 12): each subagent needs one at least, and you one, and each "
            "conversation above you one, to read their results; call again with at most 5 "
            "tasks, or do the work yourself."
        )
        assert [r.messages[0].content for r in child_requests(model)][-1].startswith("Summarise")
        assert child_requests(model)[-1].messages[-1].content == refused
        assert isinstance(events[-1], Finished)
        assert events[-1].stop == "answer"
        assert events[-1].text == "Read the results."
        assert f"orchestrator read: {refused}" in root_requests(model)[-1].messages[-1].content
    finally:
        host.close()


async def test_a_tree_out_of_time_returns_partial_answers_completed_with_timeout(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, agent={"max_seconds": 1.0})
    try:
        model = root_then_children(
            delegating({"tasks": [task(1)]}), calling("hold", {}, said="Looked at part 1.")
        )
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            _ = [e async for e in conversation.send(f"{ROOT} summarise")]
            await asyncio.wait_for(probe.holding.wait(), 10)
            # The child holds past the tree's deadline (wall time is what is tested), then
            # its call ends and its next step finds the budget spent.
            await asyncio.sleep(conversation.budget.remaining_seconds() or 0.0)
            probe.gate.set()
            message = await asyncio.wait_for(conversation.delegations.next_message(), 10)
        assert message is not None
        assert "status: completed with timeout (the time limit of 1 s was reached)" in message
        assert "its partial answer follows\nLooked at part 1." in message
    finally:
        host.close()


async def test_a_childs_background_process_is_gone_when_the_child_ends(
    host: Host, probe: Probe
) -> None:
    model = root_then_children(
        delegating({"tasks": [task(1)]}),
        calling("process_manage", {"action": "start", "command": "sleep 300"}),
    )
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        await settle(conversation, f"{ROOT} start a server")
    started = next(r for r in child_requests(model) if r.messages[-1].role == "tool")
    structured = started.messages[-1].content
    assert structured.startswith("started p")
    pid = int(structured.split("pid ")[1].rstrip(")"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_lineage_reaches_hooks_the_activity_log_and_transcripts(
    host: Host, probe: Probe, tmp_path: Path
) -> None:
    model = root_then_children(delegating({"tasks": [task(1)]}), calling("add", {"a": 2, "b": 3}))
    store = TranscriptStore(tmp_path / "sessions")
    agent = Agent(host, model, ModelSettings(provider="fake", model="fake-1"), transcripts=store)
    async with host.session() as session:
        conversation = agent.conversation(session)
        await settle(conversation, f"{ROOT} add")
    children = [s for s in probe.sessions if s.parent_id is not None]
    assert [s.parent_id for s in children] == [session.id]
    (child,) = children
    calls = {(e.name, e.session_id, e.parent_id) for e in probe.activity}
    assert ("delegate_task", session.id, None) in calls
    assert ("add", child.id, session.id) in calls
    host.dispatcher.activity_log.flush()
    log = host.env.log_dir / "activity.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    add = next(r for r in records if r["name"] == "add")
    assert (add["session_id"], add["parent_id"]) == (child.id, session.id)
    assert next(r for r in records if r["name"] == "delegate_task")["parent_id"] is None
    header = json.loads(store.open(child.id).path.read_text().splitlines()[0])
    assert header["parent"] == session.id
    assert [m.role for m in store.open(child.id).messages()] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


class Withheld:
    """Tools a child never gets: by toolset (clarify, memory, cron, messaging) and by name
    (``send_message`` in a toolset of its own)."""

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        def tool(name: str, toolset: str) -> Tool:
            return Tool(name, f"The {name} tool.", handler=lambda: "ok", toolset=toolset, core=True)

        return [
            tool("clarify", "clarify"),
            tool("memory", "memory"),
            tool("cronjob", "cron"),
            tool("send_message", "comms"),
            tool("comms_status", "comms"),
            tool("weather", "weather"),
        ]


async def test_children_never_get_clarify_memory_cron_or_messaging(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, more={"withheld": Withheld()})
    try:
        model = root_then_children(delegating({"tasks": [task(1)]}), calling("clarify", {}))
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            await settle(conversation, f"{ROOT} go")
        root_tools = {tool.name for tool in root_requests(model)[0].tools}
        assert {"clarify", "memory", "send_message", "weather"} <= root_tools
        first = child_requests(model)[0]
        child_tools = {tool.name for tool in first.tools}
        assert "weather" in child_tools
        assert not child_tools & {"clarify", "memory", "cronjob", "send_message"}
        assert "comms_status" not in child_tools  # its toolset holds send_message: withheld whole
        refused = child_requests(model)[-1].messages[-1]
        assert refused.is_error
        assert "not available in this session" in refused.content
    finally:
        host.close()


@pytest.mark.parametrize(
    "arguments",
    [
        {"goal": "Fix the error"},
        {"goal": "Fix the error", "context": CONTEXT},
        {"tasks": [task(1), {"goal": task(2)["goal"], "context": "see above"}]},
    ],
)
async def test_a_vague_goal_or_context_is_refused_with_advice(
    host: Host, probe: Probe, arguments: dict[str, Any]
) -> None:
    model = root_then_children(delegating(arguments), calling("add", {"a": 1, "b": 1}))
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        events = await settle(conversation, f"{ROOT} fix it")
    (result,) = [e for e in events if isinstance(e, ToolFinished)]
    assert result.error_code == "INVALID_ARGUMENTS"
    assert "no subagent was started" in result.text
    assert "knows nothing of this conversation" in result.text
    assert 'delegate_task(goal="Fix the error")' in result.text
    assert "a good context holds" in result.text
    assert child_requests(model) == []
    assert [s.parent_id for s in probe.sessions] == [None]


async def test_an_orchestrator_child_waits_for_its_workers_when_depth_allows(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, delegation={"max_depth": 2})
    try:
        worker_goal = "Count the lines of the project notes file"

        def child(request: ModelRequest) -> Any:
            first, last = request.messages[0].content, request.messages[-1]
            if first.startswith(worker_goal):
                tools = {tool.name for tool in request.tools}
                return f"worker done (can delegate: {'delegate_task' in tools})"
            if last.role == "user":
                return fake_turn("", ("delegate_task", {"goal": worker_goal, "context": CONTEXT}))
            return f"orchestrator read: {last.content}"

        model = root_then_children(delegating({"tasks": [task(1)]}), child)
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} go")
        labels = [e.label for e in events if isinstance(e, ChildStarted)]
        assert labels == ["d1.1", "d1.1/d1.1"]
        message = root_requests(model)[-1].messages[-1].content
        assert "orchestrator read: ## d1.1/d1.1" in message
        assert "worker done (can delegate: False)" in message
        orchestrator, worker = [s for s in probe.sessions if s.parent_id is not None]
        assert (orchestrator.parent_id, worker.parent_id) == (session.id, orchestrator.id)
    finally:
        host.close()


async def test_a_workers_compaction_reaches_the_root_labelled_with_the_worker(
    hermes_env: Environment, probe: Probe
) -> None:
    """The server reports that the worker's first request took 120,000 tokens (past 0.8 of the
    128,000 window): its next request is compacted first, and the root's events say so."""
    host = host_with(hermes_env, probe, delegation={"max_depth": 2})
    try:
        worker_goal = "Count the lines of the project notes file"
        worker_context = CONTEXT + " Earlier attempts went on at length. " * 800

        def child(request: ModelRequest) -> Any:
            first, last = request.messages[0].content, request.messages[-1]
            if not request.tools:  # the summary of the worker's older part
                return "GOAL: count the lines."
            if first.startswith(worker_goal):
                if len(request.messages) == 1:
                    return fake_turn("", ("add", {"a": 1, "b": 1}), usage=Usage(120_000, 5))
                return "worker done"
            if last.role == "user":
                arguments = {"goal": worker_goal, "context": worker_context}
                return fake_turn("", ("delegate_task", arguments))
            return f"orchestrator read: {last.content}"

        model = root_then_children(delegating({"tasks": [task(1)]}), child)
        async with host.session() as session:
            conversation = make_agent(host, model).conversation(session)
            events = await settle(conversation, f"{ROOT} go")
        (compacted,) = [e for e in events if isinstance(e, ChildCompacted)]
        assert compacted.label == "d1.1/d1.1"
        assert compacted.compacted.reason == "size"
        (worker,) = [e for e in events if isinstance(e, ChildStarted) and "/" in e.label]
        assert compacted.session_id == worker.session_id
    finally:
        host.close()


async def test_a_child_at_the_depth_limit_cannot_delegate(host: Host, probe: Probe) -> None:
    model = root_then_children(
        delegating({"tasks": [task(1)]}),
        calling("delegate_task", {"goal": task(2)["goal"], "context": CONTEXT}),
    )
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        await settle(conversation, f"{ROOT} go")
    refused = child_requests(model)[-1].messages[-1]
    assert refused.is_error
    assert "delegate_task" in refused.content
    assert len([s for s in probe.sessions if s.parent_id is not None]) == 1


async def test_cancelling_the_parent_cancels_its_children(host: Host, probe: Probe) -> None:
    probe.cap, probe.remaining = 1, 1
    tasks = [task(1), task(2)]
    model = root_then_children(delegating({"tasks": tasks}), calling("hold", {}))
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        _ = [e async for e in conversation.send(f"{ROOT} go")]
        await asyncio.wait_for(probe.holding.wait(), 10)
        started = time.monotonic()
        conversation.cancel()
        message = await asyncio.wait_for(conversation.delegations.next_message(), 10)
    assert message is not None
    assert time.monotonic() - started < 10
    assert message.count("status: interrupted") == 2
    assert conversation.delegations.pending == 0


async def test_only_the_answer_and_the_files_written_return_from_a_child_in_its_cwd(
    host: Host, probe: Probe
) -> None:
    (host.env.cwd / "notes").mkdir()

    def child(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user":
            write = {"path": "summary.md", "content": "# Summary\n"}
            return fake_turn("Writing the summary now.", ("write_file", write))
        assert not last.is_error, last.content
        return "The summary is in summary.md."

    model = root_then_children(delegating({"tasks": [task(1, cwd="notes")]}), child)
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        await settle(conversation, f"{ROOT} summarise")
    assert (session.cwd / "notes" / "summary.md").read_text() == "# Summary\n"
    message = root_requests(model)[-1].messages[-1].content
    assert "files written: notes/summary.md" in message
    assert "The summary is in summary.md." in message
    assert "Writing the summary now." not in message  # only the final answer returns
    assert "# Summary" not in message


async def test_an_empty_toolsets_list_grants_the_child_no_toolset(host: Host, probe: Probe) -> None:
    """``toolsets: []`` asks for a child with no tools (one that only reasons over its
    context): it gets none, never its parent's whole grant, which only a missing ``toolsets``
    means."""
    command = {"command": "touch made-by-the-child.txt"}
    model = root_then_children(
        delegating({"tasks": [task(1, toolsets=[])]}), calling("terminal", command)
    )
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        await settle(conversation, f"{ROOT} think it over")
    first = child_requests(model)[0]
    assert [tool.name for tool in first.tools] == []
    assert not (session.cwd / "made-by-the-child.txt").exists()
    refused = child_requests(model)[-1].messages[-1]
    assert refused.is_error
    assert "not available in this session" in refused.content


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"toolsets": ["no_such_toolset"]}, "unknown or not granted toolsets ['no_such_toolset']"),
        ({"toolsets": ["delegation"]}, "subagents cannot use the toolsets ['delegation']"),
        ({"cwd": "missing/dir"}, "cwd 'missing/dir' is not a directory"),
        # The session's directory bounds its file tools: a child cannot be sent out of it.
        ({"cwd": ".."}, "cwd '..' is outside the parent's working directory"),
        ({"cwd": "/"}, "cwd '/' is outside the parent's working directory"),
        # No path holds a NUL: refused naming the argument, not an "embedded null byte" failure.
        ({"cwd": "notes\x00"}, "at arguments.tasks[1].cwd: "),
    ],
)
async def test_a_task_a_child_cannot_have_is_refused_before_any_starts(
    host: Host, probe: Probe, extra: dict[str, Any], words: str
) -> None:
    model = root_then_children(
        delegating({"tasks": [task(1), task(2, **extra)]}), calling("add", {"a": 1, "b": 1})
    )
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        events = await settle(conversation, f"{ROOT} go")
    (result,) = [e for e in events if isinstance(e, ToolFinished)]
    assert result.error_code == "INVALID_ARGUMENTS"
    assert words in result.text
    assert child_requests(model) == []


async def test_a_nul_in_the_cwd_of_a_single_task_is_refused_naming_the_argument(
    host: Host, probe: Probe
) -> None:
    (host.env.cwd / "notes").mkdir()
    model = root_then_children(
        delegating(task(1, cwd="notes\x00")), calling("add", {"a": 1, "b": 1})
    )
    async with host.session() as session:
        conversation = make_agent(host, model).conversation(session)
        events = await settle(conversation, f"{ROOT} go")
    (result,) = [e for e in events if isinstance(e, ToolFinished)]
    assert result.error_code == "INVALID_ARGUMENTS"
    assert "at arguments.cwd: " in result.text
    assert "NUL character" in result.text
    assert child_requests(model) == []


def test_the_vagueness_rule_draws_its_line_at_four_goal_and_six_context_words() -> None:
    from hermes_core.agent._delegated_tasks import DelegatedTask, vagueness

    six = "one two three four five six"
    assert vagueness(DelegatedTask("Fix the parser bug", six)) is None
    assert vagueness(DelegatedTask("Fix the error", six)) == (
        "its goal 'Fix the error' has 3 words (at least 4)"
    )
    assert vagueness(DelegatedTask("Fix the parser bug", "one two three four five")) == (
        "its context has 5 words (at least 6 words)"
    )
    assert vagueness(DelegatedTask("", "")) == (
        "its goal has 0 words (at least 4) and its context is empty (at least 6 words)"
    )


def test_child_events_as_json_name_the_subagents_session() -> None:
    # Without its session id a `hermes run --json` reader had no way to the subagent's
    # transcript: sessions list leaves subagents out, and nothing else names them.
    from hermes_core.agent import Compacted, event_json

    assert event_json(ChildStarted("d1.2", "Count the lines", "s2")) == {
        "type": "child_started",
        "label": "d1.2",
        "goal": "Count the lines",
        "session": "s2",
    }
    ended = ChildFinished("d1.2", "Count the lines", "s2", "completed with timeout", "12 so far")
    assert event_json(ended)["status"] == "completed with timeout"
    assert event_json(ended)["text"] == "12 so far"
    assert event_json(ended)["session"] == "s2"
    compacted = ChildCompacted("d1.2", "s2", Compacted(4, 900, 60, "size"))
    assert event_json(compacted)["session"] == "s2"


def test_a_childs_answer_cut_at_max_output_tokens_returns_saying_so() -> None:
    """The parent's model read "status: completed" and half an answer as a whole one."""
    from hermes_core.agent import Usage
    from hermes_core.agent._child_outcomes import outcome_of

    why = "the answer was cut at model.max_output_tokens (4096 tokens): raise it for longer ones"
    end = Finished("The three causes are: one, tw", "answer", Usage(), 1, why)
    rendered = outcome_of("d1.1", "Find the causes", end, [], "s1").render()
    assert f"status: completed ({why})" in rendered
    assert "The three causes are: one, tw" in rendered


def test_files_written_through_the_bridge_are_reported_too(tmp_path: Path) -> None:
    from hermes_core.agent import ModelToolCall
    from hermes_core.agent._child_outcomes import written_files

    inner = [
        {"name": "write_file", "arguments": json.dumps({"path": "a.txt", "content": "x"})},
        {"name": "patch", "arguments": {"path": "sub/b.py", "old_text": "x", "new_text": "y"}},
        {"name": "read_file", "arguments": {"path": "c.txt"}},
    ]
    call = ModelToolCall("call_1", "tool_call", json.dumps({"calls": inner}))
    done = ToolFinished(call, ("write_file", "patch", "read_file"), "ok")
    assert written_files(done, tmp_path / "sub", tmp_path) == ["sub/a.txt", "sub/sub/b.py"]
    assert written_files(done, tmp_path, tmp_path / "elsewhere") == [
        str(tmp_path / "a.txt"),
        str(tmp_path / "sub" / "b.py"),
    ]
    failed = ToolFinished(call, ("write_file",), "denied", "DENIED")
    assert written_files(failed, tmp_path, tmp_path) == []


def test_a_bridged_call_nested_too_deep_to_read_leaves_the_others_reported(
    tmp_path: Path,
) -> None:
    from hermes_core.agent import ModelToolCall
    from hermes_core.agent._child_outcomes import written_files

    # Past Python's recursion json.loads raises RecursionError, not ValueError: the child's
    # outcome became a failure, its answer and its files lost.
    inner = [
        {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}},
        {"name": "write_file", "arguments": "[" * 100_000 + "]" * 100_000},
    ]
    call = ModelToolCall("call_1", "tool_call", json.dumps({"calls": inner}))
    done = ToolFinished(call, ("write_file", "write_file"), "ok")
    assert written_files(done, tmp_path, tmp_path) == ["a.txt"]
    deep = ModelToolCall("call_2", "write_file", "[" * 100_000 + "]" * 100_000)
    assert written_files(ToolFinished(deep, ("write_file",), "ok"), tmp_path, tmp_path) == []


async def test_delegate_task_is_a_core_tool_never_deferred_and_only_where_an_agent_runs(
    hermes_env: Environment, probe: Probe
) -> None:
    host = host_with(hermes_env, probe, tools={"tool_search": {"enabled": "on", "defer": ["add"]}})
    try:
        assert "delegate_task" not in host.registry  # a host without an agent: no such tool
        model = FakeModelProvider.scripted(f"{ROOT} nothing to delegate")
        agent = make_agent(host, model)
        async with host.session() as session:
            _ = [e async for e in agent.conversation(session).send(f"{ROOT} hi")]
            served = await host.dispatch("delegate_task", task(1), host.new_session())
        names = {tool.name for tool in model.requests[0].tools}
        assert {"delegate_task", "tool_search"} <= names
        assert "add" not in names  # deferred, while delegate_task stays visible
        assert served.error_code == "NOT_AVAILABLE"  # a session without a conversation
    finally:
        host.close()

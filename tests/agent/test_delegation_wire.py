"""delegate_task over the real wire: the parent and its five children are conversations of the
bundled ``openai`` provider against :class:`FakeModelServer` (a fake: no model runs here), and
what the server sees is what the issue asks: at most ``delegation.max_concurrent`` children's
requests at once, each child's first request holding only its goal and context."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import anyio
import pytest

from hermes_core import Config, Environment
from hermes_core.agent import Agent, AgentEvent, Finished, send_until_settled
from hermes_core.testing import (
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    RecordedRequest,
    make_host,
)

PARENT_PROMPT = "Summarise the five reports in reports/ for the weekly meeting."
TASKS = [
    {
        "goal": f"Summarise report number {n} in three bullet points",
        "context": f"The report is reports/r{n}.md in the working directory; the team wants "
        "risks first, then decisions, plain words.",
    }
    for n in range(1, 6)
]


class Children:
    """The server's responder: the parent delegates the five tasks, then answers; each child
    answers once its gate opens. It counts the children's requests in flight at each arrival."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.peak = 0
        self.lock = threading.Lock()
        self.server: FakeModelServer | None = None

    def _children_in_flight(self) -> int:
        assert self.server is not None
        return sum(1 for r in self.server.requests if not r.done and is_child(r))

    def __call__(self, request: RecordedRequest) -> FakeTurn:
        if is_child(request):
            with self.lock:
                self.peak = max(self.peak, self._children_in_flight())
            number = request.first_user_text.split("number ")[1].split()[0]
            return FakeTurn(text=f"Report {number}: no risks, one decision.", gate=self.gate)
        said = [m for m in request.messages if m.get("role") == "tool"]
        if not said:
            return FakeTurn(tool_calls=[FakeToolCall("delegate_task", {"tasks": TASKS})])
        if "Report 1:" not in json.dumps(request.messages):
            return FakeTurn(text="The five summaries are on their way.")
        return FakeTurn(text="All five reports are summarised.")


def is_child(request: RecordedRequest) -> bool:
    return request.first_user_text.startswith("Summarise report number")


def open_gate_when_full(children: Children, server: FakeModelServer, limit: int) -> None:
    """Open the children's gate once ``limit`` of them are waiting, and a little later: a
    limiter that let more through would show them by then."""
    server.wait_for(lambda s: children._children_in_flight() >= limit, timeout=60)
    time.sleep(0.5)
    children.gate.set()


@pytest.mark.parametrize("limit", [3, 5])
def test_the_server_sees_at_most_max_concurrent_children_each_with_its_goal_only(
    limit: int, hermes_env: Environment
) -> None:
    children = Children()
    with FakeModelServer(responder=children) as server:
        children.server = server
        model = {"provider": "openai", "model": "small-model", "base_url": server.openai_base_url}
        config = Config.model_validate({"model": model, "delegation": {"max_concurrent": limit}})
        variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
        host = make_host(config, replace(hermes_env, variables=variables))
        opener = threading.Thread(target=open_gate_when_full, args=(children, server, limit))
        opener.start()

        async def main() -> list[AgentEvent]:
            agent = Agent.from_host(host)
            conversation = agent.conversation(host.new_session())
            try:
                return [event async for event in send_until_settled(conversation, PARENT_PROMPT)]
            finally:
                await conversation.aclose()
                await agent.aclose()

        try:
            events = anyio.run(main)
        finally:
            children.gate.set()
            opener.join()
            host.close()
        requests = server.requests

    assert children.peak == limit
    child_requests = [r for r in requests if is_child(r)]
    assert len(child_requests) == 5
    for request, task in zip(
        sorted(child_requests, key=lambda r: r.first_user_text), TASKS, strict=True
    ):
        users = [m for m in request.messages if m.get("role") == "user"]
        assert len(users) == 1
        sent = json.dumps(request.messages)
        assert task["goal"] in sent
        assert task["context"] in sent
        assert PARENT_PROMPT not in sent
    finals = [event for event in events if isinstance(event, Finished)]
    assert finals[-1].text == "All five reports are summarised."
    last_parent = [r for r in requests if not is_child(r)][-1]
    for n in range(1, 6):
        assert f"Report {n}: no risks, one decision." in json.dumps(last_parent.messages)

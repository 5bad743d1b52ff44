"""The system prompt a model receives mentions only what its session really has: the bridge
tools when the session's tool list holds them, writing the memory when it has the ``memory``
tool (a subagent of ``delegate_task`` has neither with ``toolsets: []``); and a
``model.context_length`` below what the tools alone need is warned about once.

The host is real (the bundled plugins, the ``file`` memory provider under a temporary home);
the model is :class:`FakeModelProvider`, which records every request it gets."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

import pytest

from hermes_core import Config, Environment, Host
from hermes_core.agent import Agent, ModelRequest, ModelSettings, send_until_settled
from hermes_core.agent._memory import selected_memory
from hermes_core.testing import FakeModelProvider, fake_turn, make_host

pytestmark = pytest.mark.anyio

ROOT = "ROOT:"
CONTEXT = "The notes are in the working directory; nothing else is known about them yet."
BRIDGE = ("tool_search", "tool_describe", "tool_call")


def bundled_host(hermes_env: Environment, **sections: Any) -> Host:
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    env = replace(hermes_env, variables=variables)
    config = Config.model_validate({"approvals": {"policy": "off"}, **sections})
    return make_host(config, env, plugins={})


def delegating_model(task: dict[str, Any]) -> FakeModelProvider:
    """The root delegates ``task`` once and then answers; a child answers at once."""

    def respond(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if not request.messages[0].content.startswith(ROOT):
            return "done: nothing to report"
        if last.role == "user" and last.content.startswith(ROOT):
            return fake_turn("", ("delegate_task", task))
        return "Read the results."

    return FakeModelProvider(responder=respond)


async def run_root(host: Host, model: FakeModelProvider, **settings: Any) -> None:
    memory = selected_memory(host)
    assert memory is not None
    agent = Agent(host, model, ModelSettings("fake", "fake-1", **settings), memory=memory)
    async with host.session() as session:
        conversation = agent.conversation(session)
        events = send_until_settled(conversation, f"{ROOT} think the notes over")
        await asyncio.wait_for(_drain(events), 30)
        await conversation.aclose()


async def _drain(events: Any) -> None:
    async for _ in events:
        pass


def tool_names(request: ModelRequest) -> set[str]:
    return {tool.name for tool in request.tools}


async def test_a_child_without_tools_is_told_of_no_bridge_and_no_memory_it_cannot_write(
    hermes_env: Environment,
) -> None:
    host = bundled_host(hermes_env)
    try:
        memory = selected_memory(host)
        assert memory is not None
        memory.register(host.registry)
        assert not (
            await host.dispatch(
                "memory",
                {"action": "add", "target": "memory", "content": "Builds need Python 3.11"},
                host.new_session(),
            )
        ).is_error
        task = {"goal": "Think over what the project notes say", "context": CONTEXT}
        model = delegating_model({"tasks": [{**task, "toolsets": []}]})
        await run_root(host, model)
    finally:
        host.close()
    root = next(r for r in model.requests if r.messages[0].content.startswith(ROOT))
    child = next(r for r in model.requests if not r.messages[0].content.startswith(ROOT))
    # The root really has the bridge (tools are deferred by default) and the memory tool.
    assert set(BRIDGE) <= tool_names(root)
    assert "memory" in tool_names(root)
    for name in BRIDGE:
        assert name in root.system
    assert "what you change now shows in the next session" in root.system
    # The child has no tool at all: nothing in its prompt sends it to one.
    assert tool_names(child) == set()
    assert "§ Builds need Python 3.11" in child.system  # it reads the snapshot
    for name in BRIDGE:
        assert name not in child.system
    assert "with your tools" not in child.system
    assert "Use the tools in your list" not in child.system
    assert "what you change now shows in the next session" not in child.system
    assert "cannot change it" in child.system


async def test_a_session_with_nothing_deferred_is_not_sent_to_tool_search(
    hermes_env: Environment,
) -> None:
    host = bundled_host(hermes_env, tools={"tool_search": {"enabled": "off"}})
    try:
        model = FakeModelProvider(responder=lambda request: "Nothing to do.")
        await run_root(host, model)
    finally:
        host.close()
    (request,) = model.requests
    assert request.tools
    assert not set(BRIDGE) & tool_names(request)
    for name in BRIDGE:
        assert name not in request.system
    assert "Use the tools in your list directly" in request.system


async def test_a_context_length_below_what_the_tools_need_is_warned_about_once(
    hermes_env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    host = bundled_host(hermes_env)
    try:
        model = FakeModelProvider(responder=lambda request: "Nothing to do.")
        memory = selected_memory(host)
        agent = Agent(
            host, model, ModelSettings("fake", "fake-1", context_length=2000), memory=memory
        )
        with caplog.at_level(logging.WARNING, logger="hermes_core"):
            for _ in range(2):
                async with host.session() as session:
                    agent.conversation(session)
    finally:
        host.close()
    warned = [r.getMessage() for r in caplog.records if "model.context_length" in r.getMessage()]
    assert len(warned) == 1, warned
    (message,) = warned
    assert "2000" in message or "2,000" in message
    assert "tokens" in message
    assert "raise model.context_length" in message


async def test_a_context_length_that_fits_gives_no_warning(
    hermes_env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    host = bundled_host(hermes_env)
    try:
        model = FakeModelProvider(responder=lambda request: "Nothing to do.")
        agent = Agent(host, model, ModelSettings("fake", "fake-1", context_length=128_000))
        with caplog.at_level(logging.WARNING, logger="hermes_core"):
            async with host.session() as session:
                agent.conversation(session)
    finally:
        host.close()
    assert not [r for r in caplog.records if "model.context_length" in r.getMessage()]

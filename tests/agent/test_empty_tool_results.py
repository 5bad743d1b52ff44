"""A tool that printed nothing: Gemini's OpenAI-compatible endpoint (and Vertex, some vLLM chat
templates) refuse a message of empty text ("Unable to submit request because it has an empty
text parameter"), so a tool result of no text, sent back as ``""``, had the conversation's next
request refused, and every one after it. Every request says such a result in words
(:data:`NO_OUTPUT`), whatever the provider; the conversation and its transcript keep it as it
was. The ``FakeModelServer`` made ``strict_text`` refuses an empty tool result as those servers
do (OpenAI's own API takes it: its SDK types a tool message's content as any string)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest

from hermes_core import Config, Environment
from hermes_core.agent import Agent, AgentEvent, Finished, ToolFinished
from hermes_core.agent._requests import NO_OUTPUT
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, make_host
from hermes_core.testing._fake_requests import EMPTY_TEXT_MESSAGE, empty_text_refusal
from tests.agent.test_providers import _with_bundled


class Quiet:
    """A plugin whose one tool, ``touch``, prints what it is told to (nothing, by default)."""

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        return [
            Tool(
                "touch",
                "Touch a file.",
                {"type": "object", "properties": {"says": {"type": "string"}}},
                handler=lambda says="": says,
                toolset="files",
                annotations=ToolAnnotations(read_only=True, destructive=False),
                core=True,
            )
        ]


def _converse(
    provider: str, hermes_env: Environment, says: str
) -> tuple[list[AgentEvent], list[Any], list[str]]:
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("touch", {"says": says}, id="call_touch")]),
        FakeTurn(text="Touched."),
    ]
    server = FakeModelServer(turns, strict_text=True)
    server.start()
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    config = Config.model_validate(
        {"model": {"provider": provider, "model": "m", "base_url": base}}
    )
    env = replace(hermes_env, variables=_with_bundled(hermes_env))
    host = make_host(config, env, plugins={"quiet": Quiet()})

    async def main() -> tuple[list[AgentEvent], list[str]]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session())
        try:
            events = [event async for event in conversation.send("Touch it.")]
            kept = [m.content for m in conversation.messages if m.role == "tool"]
            return events, kept
        finally:
            await conversation.aclose()
            await agent.aclose()

    try:
        events, kept = anyio.run(main)
    finally:
        host.close()
        server.close()
    return events, server.requests[-1].messages, kept


def _result_sent(provider: str, messages: list[Any]) -> Any:
    if provider == "openai":
        return next(m["content"] for m in messages if m["role"] == "tool")
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    return next(b["content"] for b in blocks if b["type"] == "tool_result")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("says", ["", "\n"], ids=["empty", "blank"])
def test_a_tool_that_printed_nothing_is_sent_as_no_output_and_the_turn_answered(
    provider: str, says: str, hermes_env: Environment
) -> None:
    events, sent, kept = _converse(provider, hermes_env, says)
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "Touched."), end.detail
    assert _result_sent(provider, sent) == NO_OUTPUT
    assert kept == [says]  # the conversation keeps what the tool said
    assert [e.text for e in events if isinstance(e, ToolFinished)] == [says]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_tool_result_with_text_is_sent_as_it_is(provider: str, hermes_env: Environment) -> None:
    _, sent, _ = _converse(provider, hermes_env, "touched a.txt")
    assert _result_sent(provider, sent) == "touched a.txt"


def test_a_strict_fake_server_refuses_an_empty_tool_result_as_gemini_does() -> None:
    calling = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}
    user = {"role": "user", "content": "a"}

    def openai(content: Any) -> dict[str, Any]:
        result = {"role": "tool", "tool_call_id": "c1", "content": content}
        return {"messages": [user, calling, result]}

    def anthropic(content: Any) -> dict[str, Any]:
        result = {"type": "tool_result", "tool_use_id": "c1", "content": content}
        return {"messages": [user, {"role": "user", "content": [result]}]}

    for body in (openai(""), openai([{"type": "text", "text": ""}]), anthropic(""), anthropic([])):
        wire = "anthropic" if isinstance(body["messages"][1]["content"], list) else "openai"
        assert empty_text_refusal(wire, body) == EMPTY_TEXT_MESSAGE, body
    assert empty_text_refusal("openai", openai("0")) is None
    assert empty_text_refusal("anthropic", anthropic("0")) is None

"""OpenRouter's reasoning over the OpenAI wire (the ``openai`` provider, ``model.base_url`` at
OpenRouter, ``model.reasoning_effort`` set): the effort goes as OpenRouter's documented
``reasoning_effort`` shorthand (``reasoning.effort``), and the thinking comes back as
``reasoning`` text and ``reasoning_details`` entries, which OpenRouter asks to be sent back
unchanged on the assistant message of a tool loop (Claude's are Anthropic's signed thinking
blocks: Anthropic refuses a tool loop's last call without them). The fake model server stands
in for OpenRouter as an HTTP proxy, refusing as Anthropic behind it does."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hermes_core.agent import (
    Message,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelTurn,
    ReasoningDetail,
    TextDelta,
    ToolSchema,
)
from hermes_core.agent._transcripts import redacted_message
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, make_model_provider
from hermes_core.testing._fake_thinking import signature_of

OPENROUTER = "http://openrouter.ai/api/v1"
CLAUDE = "anthropic/claude-sonnet-4.5"
ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
ASK = Message("user", "Add 2 and 3.")
THOUGHT = "2 and 3: the add tool will say."
WHOLE = {
    "type": "reasoning.text",
    "text": THOUGHT,
    "signature": signature_of(THOUGHT),
    "format": "anthropic-claude-v1",
    "index": 0,
}


def _provider(monkeypatch: pytest.MonkeyPatch, server: FakeModelServer) -> ModelProvider:
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    settings = ModelSettings(
        "openai", CLAUDE, base_url=OPENROUTER, api_key="sk-or-test", reasoning_effort="high"
    )
    return make_model_provider(settings)


def _run(provider: ModelProvider, *requests: ModelRequest) -> list[list[ModelEvent]]:
    async def main() -> list[list[ModelEvent]]:
        try:
            return [[event async for event in provider.stream(r)] for r in requests]
        finally:
            await provider.aclose()

    return anyio.run(main)


def _request(*messages: Message) -> ModelRequest:
    return ModelRequest(CLAUDE, "Be brief.", messages, tools=(ADD,))


def _turn(events: list[ModelEvent]) -> ModelTurn:
    last = events[-1]
    assert isinstance(last, ModelTurn)
    return last


def _tool_loop(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelTurn:
    """The first request of a tool loop: the model thinks, then calls add."""
    (events,) = _run(_provider(monkeypatch, server), _request(ASK))
    assert not [e for e in events if isinstance(e, TextDelta)]  # the thinking is not shown
    return _turn(events)


def _result(turn: ModelTurn) -> Message:
    (call,) = turn.message.tool_calls
    return Message("tool", "5", tool_call_id=call.id, name="add")


def test_reasoning_effort_goes_as_openrouters_shorthand(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenRouter documents ``reasoning_effort`` as ``reasoning.effort``'s shorthand, with the
    same values (``max`` included): what the provider sends every server."""
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        _run(_provider(monkeypatch, server), _request(ASK))
        (request,) = server.requests

    assert request.body["reasoning_effort"] == "high"
    assert "reasoning" not in request.body


def test_a_tool_loop_sends_the_reasoning_details_back_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dropped, the next request of the loop was refused by Anthropic behind OpenRouter: its
    last tool call came without its thinking block."""
    thinking = FakeTurn(
        reasoning=THOUGHT,
        reasoning_key="reasoning_details",
        tool_calls=[FakeToolCall("add", {"a": 2, "b": 3})],
    )
    with FakeModelServer([thinking, FakeTurn(text="5.")]) as server:
        first = _tool_loop(server, monkeypatch)
        (events,) = _run(
            _provider(monkeypatch, server), _request(ASK, first.message, _result(first))
        )
        sent = server.requests[1].body["messages"]

    assert _turn(events).message.content == "5."
    assert [d.to_json() for d in first.message.reasoning_details] == [WHOLE]
    (answer,) = [m for m in sent if m["role"] == "assistant"]
    assert answer["reasoning_details"] == [WHOLE]


def test_reasoning_details_go_to_openrouter_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another server (a provider switched mid-conversation) never got them: DeepSeek refuses
    a message field it does not know."""
    detail = ReasoningDetail.from_json(WHOLE)
    call = Message("assistant", "", reasoning_details=(detail,))
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        settings = ModelSettings("openai", "small-model", base_url=server.openai_base_url)
        _run(make_model_provider(settings), _request(ASK, call, Message("user", "And?")))
        (request,) = server.requests

    assert all("reasoning_details" not in m for m in request.body["messages"])


def test_the_transcript_keeps_them_unless_redaction_would_change_one() -> None:
    kept = Message("assistant", "", reasoning_details=(ReasoningDetail.from_json(WHOLE),))
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    leaking: dict[str, Any] = {**WHOLE, "text": f"The token is {secret}."}
    leaked = Message("assistant", "", reasoning_details=(ReasoningDetail.from_json(leaking),))

    assert Message.from_json(kept.to_json()) == kept
    assert kept.to_json()["reasoning_details"] == [WHOLE]
    assert redacted_message(kept) == kept
    assert redacted_message(leaked).reasoning_details == ()
    with pytest.raises(ValueError, match="reasoning_details"):
        Message.from_json({"role": "assistant", "reasoning_details": "not a list"})


def test_an_answer_cut_in_its_thinking_keeps_no_unsigned_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cut at max_tokens before its signature came, the entry made Anthropic behind OpenRouter
    refuse every later request sending it back (as the anthropic provider's blocks)."""
    cut = FakeTurn(reasoning=THOUGHT, reasoning_key="reasoning_details", truncated=True)
    with FakeModelServer([cut, FakeTurn(text="5.")]) as server:
        (events,) = _run(_provider(monkeypatch, server), _request(ASK))
        first = _turn(events)
        again = _request(ASK, first.message, Message("user", "Go on."))
        (events,) = _run(_provider(monkeypatch, server), again)

    assert first.stop_reason == "max_tokens"
    assert first.message.reasoning_details == ()
    assert _turn(events).message.content == "5."

"""OpenRouter's Claude models over the OpenAI wire (the ``openai`` provider, ``model.base_url``
at OpenRouter, an ``anthropic/...`` model): OpenRouter passes Anthropic's ``cache_control``
marks on content parts through, and caches nothing without them. The fake model server
stands in for OpenRouter as an HTTP proxy (``HTTP_PROXY``), so the provider speaks to
``http://openrouter.ai/api/v1`` as it would to OpenRouter itself."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hermes_core.agent import (
    ImagePart,
    Message,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ToolSchema,
)
from hermes_core.testing import FakeModelServer, FakeTurn, make_model_provider

OPENROUTER = "http://openrouter.ai/api/v1"
CLAUDE = "anthropic/claude-sonnet-4.5"
MARK = {"type": "ephemeral"}
ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
ASK = Message("user", "Add 2 and 3.")
CALL = Message("assistant", "", tool_calls=(ModelToolCall("call_1", "add", '{"a": 2}'),))
RESULT = Message("tool", "5", tool_call_id="call_1", name="add")
THANKS = Message("user", "Thanks. And 4 and 4?")


def _marked(value: Any) -> list[Any]:
    if isinstance(value, dict):
        own = [value] if "cache_control" in value else []
        return own + [block for item in value.values() for block in _marked(item)]
    if isinstance(value, list):
        return [block for item in value for block in _marked(item)]
    return []


def _send(
    server: FakeModelServer,
    monkeypatch: pytest.MonkeyPatch,
    *messages: Message,
    base_url: str = OPENROUTER,
    model: str = CLAUDE,
    prompt_cache: bool = True,
) -> dict[str, Any]:
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    settings = ModelSettings(
        "openai", model, base_url=base_url, api_key="sk-or-test", prompt_cache=prompt_cache
    )
    provider: ModelProvider = make_model_provider(settings)

    async def main() -> None:
        try:
            async for _ in provider.stream(ModelRequest(model, "Be brief.", messages, (ADD,))):
                pass
        finally:
            await provider.aclose()

    anyio.run(main)
    body: dict[str, Any] = server.requests[-1].body
    return body


def test_openrouter_claude_gets_the_anthropic_providers_breakpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without marks OpenRouter caches nothing for a Claude model: every request of a loop
    paid the whole prefix at full price."""
    with FakeModelServer([FakeTurn(text="8.")]) as server:
        body = _send(server, monkeypatch, ASK, CALL, RESULT, THANKS)

    # the turn that ended at its results is said so before the next question (any template)
    system, ask, call, result, ended, thanks = body["messages"]
    assert ended["role"] == "assistant"
    assert not _marked(ended)
    assert system["content"] == [{"type": "text", "text": "Be brief.", "cache_control": MARK}]
    # The anthropic provider's rule: the last two user turns (a tool result and the question
    # after it are one), each at its end.
    assert ask["content"] == [{"type": "text", "text": ASK.content, "cache_control": MARK}]
    assert thanks["content"] == [{"type": "text", "text": THANKS.content, "cache_control": MARK}]
    assert result["content"] == "5"
    assert not _marked(call)
    assert not _marked(body["tools"])
    assert len(_marked(body)) == 3


def test_a_tool_result_that_ends_the_request_is_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        body = _send(server, monkeypatch, ASK, CALL, RESULT)

    result = body["messages"][-1]
    assert result["role"] == "tool"
    assert result["content"] == [{"type": "text", "text": "5", "cache_control": MARK}]
    assert len(_marked(body)) == 3


@pytest.mark.parametrize(
    ("base_url", "model", "prompt_cache"),
    [
        (OPENROUTER, "openai/gpt-4.1", True),  # OpenRouter, no Claude model
        (None, CLAUDE, True),  # a Claude-named model on any other server
        (OPENROUTER, CLAUDE, False),  # the cache turned off
    ],
)
def test_no_marks_for_other_models_servers_or_with_the_cache_off(
    monkeypatch: pytest.MonkeyPatch, base_url: str | None, model: str, prompt_cache: bool
) -> None:
    with FakeModelServer([FakeTurn(text="8.")]) as server:
        url = base_url or server.openai_base_url
        body = _send(
            server,
            monkeypatch,
            ASK,
            CALL,
            RESULT,
            THANKS,
            base_url=url,
            model=model,
            prompt_cache=prompt_cache,
        )

    assert _marked(body) == []
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def _empty_text_marked(body: dict[str, Any]) -> list[Any]:
    return [part for part in _marked(body) if part.get("type") == "text" and not part["text"]]


def test_no_mark_on_an_empty_text_a_tool_gave(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anthropic refuses a request with ``cache_control cannot be set for empty text blocks``:
    a tool that printed nothing would end every request of the session so."""
    empty = Message("tool", "", tool_call_id="call_1", name="add")
    with FakeModelServer([FakeTurn(text="Done.")]) as server:
        body = _send(server, monkeypatch, ASK, CALL, empty)

    assert _empty_text_marked(body) == []
    assert body["messages"][-1]["content"] == ""
    assert len(_marked(body)) == 2  # the system prompt and the question


def test_no_mark_on_the_empty_text_of_a_picture_sent_without_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    picture = Message("user", "", images=(ImagePart("image/png", b"\x89PNG\r\n\x1a\n"),))
    with FakeModelServer([FakeTurn(text="A cat.")]) as server:
        body = _send(server, monkeypatch, picture)

    assert _empty_text_marked(body) == []
    assert len(_marked(body)) == 1  # the system prompt

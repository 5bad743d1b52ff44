"""The Messages API refuses a text block that is empty, and a message whose text is all blank
(``"\\n\\n"``): a model that writes a line break before its tool call, kept in the conversation
and sent back, had every later request of the conversation refused. The FakeModelServer
refuses both as the API does; the ``anthropic`` provider sends neither."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.agent import (
    Message,
    ModelEvent,
    ModelRequest,
    ModelToolCall,
    ToolSchema,
)
from hermes_core.testing import FakeModelServer, FakeTurn, make_model_provider
from hermes_core.testing._fake_refusals import refusal
from tests.agent.test_providers import _run, _settings

ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
ASK = Message("user", "Add 2 and 3.")
RESULT = Message("tool", "5", tool_call_id="toolu_1", name="add")


def _calling(text: str) -> Message:
    return Message("assistant", text, tool_calls=(ModelToolCall("toolu_1", "add", '{"a": 2}'),))


def _body(*contents: Any, system: Any = "Be brief.") -> dict[str, Any]:
    roles = ["user", "assistant"] * len(contents)
    messages = [{"role": r, "content": c} for r, c in zip(roles, contents, strict=False)]
    return {"system": system, "messages": messages}


def test_the_fake_server_refuses_empty_and_blank_text_as_the_api_does() -> None:
    blank = [{"type": "text", "text": "\n\n"}]
    calling = [*blank, {"type": "tool_use", "id": "t1", "name": "add", "input": {}}]
    words = [{"type": "text", "text": " "}, {"type": "text", "text": "Hi."}]

    assert refusal("anthropic", _body("Hi")) is None
    assert refusal("anthropic", _body("Hi", words)) is None
    assert refusal("anthropic", _body("Hi", [{"type": "text", "text": ""}])) == (
        "messages: text content blocks must be non-empty"
    )
    answered = [{"type": "tool_result", "tool_use_id": "t1", "content": "5"}]
    for contents in ([blank], [calling, answered], ["  "]):
        assert refusal("anthropic", _body("Hi", *contents)) == (
            "messages: text content blocks must contain non-whitespace text"
        )
    assert refusal("anthropic", _body("Hi", system=[{"type": "text", "text": " "}])) == (
        "system: text content blocks must contain non-whitespace text"
    )


def _send(*messages: Message, system: str = "Be brief.") -> list[ModelEvent]:
    """The events of one request of ``messages`` through the anthropic provider (a refused
    request raises the provider's ``ModelError``)."""
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        provider = make_model_provider(_settings(server, "anthropic"))
        return _run(provider, ModelRequest("small-model", system, messages, tools=(ADD,)))


@pytest.mark.parametrize("blank", ["\n\n", " ", "\t\n"])
def test_a_blank_line_before_a_tool_call_is_not_sent_back(blank: str) -> None:
    assert _send(ASK, _calling(blank), RESULT)


def test_a_blank_answer_then_a_question_is_not_refused() -> None:
    assert _send(ASK, Message("assistant", "\n"), Message("user", "And 4 and 4?"))


def test_a_blank_message_after_tool_results_is_not_refused() -> None:
    assert _send(ASK, _calling("Adding."), RESULT, Message("user", " \n"))


def test_a_blank_system_prompt_is_not_refused() -> None:
    assert _send(ASK, system=" \n")

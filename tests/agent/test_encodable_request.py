"""Every part of a model request holding a lone surrogate (the system prompt with a memory entry
or a skill's text, a tool's description and schema, a message's text and name, a call's
arguments, OpenRouter's reasoning details) is sent through the real ``openai`` and
``anthropic`` providers to the test kit's ``FakeModelServer`` as U+FFFD: the request arrives,
as UTF-8. ``hermes_core/agent/_requests.py``, the one place every model request goes through."""

from __future__ import annotations

import asyncio
import json
import os

import anyio
import pytest

from hermes_core._encodable import encodable, encodable_value
from hermes_core.agent import Message, ModelRequest, ModelToolCall, ModelTurn, ToolSchema
from hermes_core.agent._requests import RetryPolicy, encodable_request, request_events
from hermes_core.agent._wire import ReasoningDetail
from hermes_core.testing import FakeModelServer, FakeTurn, make_model_provider
from tests.agent.test_providers import _settings

ODD = os.fsdecode(b"\xff")  # a byte that is not UTF-8, as Python reads a file name or argv
HALF = "\ud800"  # a JSON "\ud800"
TOOL = ToolSchema(
    "look" + HALF,
    "Look at " + ODD,
    {"type": "object", "properties": {"path" + ODD: {"description": HALF}}},
)


def _request() -> ModelRequest:
    call = ModelToolCall("call_1", "look", '{"path": "a\\ud800b", "n": 1}')
    return ModelRequest(
        "small-model",
        "Remember: " + HALF,
        (
            Message("user", "look at caf" + ODD),
            Message("assistant", "Looking " + HALF, tool_calls=(call,)),
            Message("tool", "found " + ODD, tool_call_id="call_1", name="look"),
            Message("user", "and?"),
        ),
        tools=(TOOL,),
    )


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_each_part_of_a_request_holding_a_lone_surrogate_arrives_as_utf8(wire: str) -> None:
    async def main(server: FakeModelServer) -> list[object]:
        provider = make_model_provider(_settings(server, wire))
        try:
            stop = asyncio.Event()
            events = request_events(provider, _request(), RetryPolicy(0), stop, None)
            return [event async for event in events]
        finally:
            await provider.aclose()

    with FakeModelServer([FakeTurn(text="Seen.")]) as server:
        events = anyio.run(main, server)
        (request,) = server.requests
    assert isinstance(events[-1], ModelTurn)
    sent = json.dumps(request.body, ensure_ascii=False)
    sent.encode("utf-8")  # no lone surrogate left
    for text in (
        "Remember: \ufffd",
        "caf\ufffd",
        "Looking \ufffd",
        "found \ufffd",
        "Look at \ufffd",
    ):
        assert text in sent
    assert "a\ufffdb" in sent or "a\\ufffdb" in sent  # the arguments: JSON text, or parsed


def test_a_request_holding_none_is_the_same_object() -> None:
    request = ModelRequest("m", "Be brief, caf\u00e9.", (Message("user", "\U0001f600"),))
    assert encodable_request(request) is request


def test_a_surrogate_pair_written_apart_is_its_character_and_details_are_encodable() -> None:
    assert encodable("\ud83d\ude00 and " + HALF) == "\U0001f600 and \ufffd"
    detail = ReasoningDetail(
        json.dumps({"type": "reasoning.text", "text": HALF}, ensure_ascii=False)
    )
    message = Message("assistant", "ok", reasoning_details=(detail,))
    (sent,) = encodable_request(ModelRequest("m", "", (message,))).messages
    assert sent.reasoning_details[0].to_json() == {"type": "reasoning.text", "text": "\ufffd"}
    assert encodable_value({"k" + HALF: [1, None, HALF]}) == {"k\ufffd": [1, None, "\ufffd"]}


def test_the_same_tools_and_messages_sent_again_are_encoded_again_and_new_ones_judged() -> None:
    # Each tool and message is judged once for all the requests that send it again (a
    # conversation resends its history and tools at every request): the second request of the
    # same objects is encoded as the first, and a new object is judged on its own.
    first = encodable_request(_request())
    again = encodable_request(_request())  # new request, the same TOOL object
    assert again.tools == first.tools
    assert again.tools[0].name == "look\ufffd"
    kept = Message("assistant", "fine", tool_calls=(ModelToolCall("c", "look", "{}"),))
    request = ModelRequest("m", "", (kept,), tools=(TOOL,))
    for _ in range(2):
        sent = encodable_request(request)
        assert sent.messages[0] is kept
        assert sent.tools[0].description == "Look at \ufffd"

"""The rules every model provider follows, as checks a provider author runs against a plugin.

Each rule is a function named after it that takes ``make`` (a function building a provider
from :class:`~hermes_core.agent.ModelSettings`), the wire format the provider speaks
(``"openai"`` or ``"anthropic"``) and the provider's name; it starts a
:class:`~hermes_core.testing.FakeModelServer`, builds a provider for it and raises
:class:`AssertionError` saying what the provider did instead. They check what
:class:`~hermes_core.agent.ModelProvider` promises the conversation loop:

- text streams as :class:`~hermes_core.agent.TextDelta` s whose join is the turn's text, then
  exactly one :class:`~hermes_core.agent.ModelTurn` comes last;
- a reasoning model's thinking is no part of the text: streamed as
  :class:`~hermes_core.agent.ThinkingDelta` s as the model thought it, or not at all;
- tool-call arguments split across chunks arrive whole; two calls in one answer arrive both;
- usage is reported when the server sends it, and a stream without it is no error;
- a tool result round-trips (the server sees the call's id and the result); the system prompt
  and the tools are sent;
- a 429 and a 500 are retryable :class:`~hermes_core.agent.ModelError` s (the 429 with the
  server's ``retry-after``) and the provider does not retry by itself; a 400 and a 401 are not
  retryable and name the provider and the model (a 401 the key's variable), never the key;
  an unreachable server is retryable;
- the key reaches the server as its auth header.

Run them with :func:`model_provider_conformance`, one test per rule.
"""

from __future__ import annotations

import functools
import json
import socket
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

from hermes_core.agent._wire import (
    Message,
    ModelError,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    ThinkingDelta,
    ToolSchema,
    Usage,
)
from hermes_core.testing._fake_model import FakeModelServer
from hermes_core.testing._fake_model_wire import FakeToolCall, FakeTurn, Wire

__all__ = ["MODEL_PROVIDER_RULES", "MakeProvider", "model_provider_conformance"]

MakeProvider = Callable[[ModelSettings], ModelProvider]
"""Builds a provider from the ``model`` settings (each rule builds one for its server)."""

KEY = "sk-conformance-7f3a9c1e5b2d"
KEY_ENV = "CONFORMANCE_API_KEY"
MODEL = "conformance-model"
SYSTEM = "You are checked for conformance."
READ_FILE = ToolSchema(
    "read_file",
    "Read a text file.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "lines": {"type": "array"}},
        "required": ["path"],
    },
)


class _Check:
    """One rule's run: a server with ``turns``, a provider for it, the requests it sends."""

    def __init__(self, make: MakeProvider, wire: Wire, name: str) -> None:
        self.make, self.wire, self.provider = make, wire, name
        self.thoughts: list[ThinkingDelta] = []  # the last run's

    def settings(self, base_url: str) -> ModelSettings:
        return ModelSettings(
            provider=self.provider,
            model=MODEL,
            base_url=base_url,
            api_key=KEY,
            api_key_env=KEY_ENV,
            max_output_tokens=256,
            timeout=30.0,
        )

    def run(
        self, turns: Sequence[FakeTurn], request: ModelRequest
    ) -> tuple[list[TextDelta], ModelTurn | ModelError, FakeModelServer]:
        """The provider's events (text deltas, the turn) or its error, and the server."""
        with FakeModelServer(turns) as server:
            base = server.openai_base_url if self.wire == "openai" else server.anthropic_base_url
            provider = self.make(self.settings(base))
            self.thoughts = []
            result = anyio.run(_collect, provider, request, self.thoughts)
        return result[0], result[1], server

    def turn(self, turn: FakeTurn, request: ModelRequest) -> tuple[list[TextDelta], ModelTurn]:
        deltas, ended, _ = self.run([turn], request)
        assert isinstance(ended, ModelTurn), f"the provider failed: {ended}"
        return deltas, ended

    def error(self, turn: FakeTurn, request: ModelRequest | None = None) -> ModelError:
        _, ended, server = self.run([turn], request or _ask("Hello"))
        assert isinstance(ended, ModelError), f"HTTP {turn.error} gave no ModelError: {ended!r}"
        assert len(server.requests) == 1, (
            f"the provider sent {len(server.requests)} requests for one: it must not retry "
            "(the loop does)"
        )
        shown = f"{ended} {ended!r} {ended.args!r}"
        assert KEY not in shown, "the error message holds the API key"
        assert ended.status == turn.error, f"status {ended.status}, not {turn.error}"
        return ended


async def _collect(
    provider: ModelProvider, request: ModelRequest, thoughts: list[ThinkingDelta]
) -> tuple[list[TextDelta], ModelTurn | ModelError]:
    deltas: list[TextDelta] = []
    turns: list[ModelTurn] = []
    try:
        async for event in provider.stream(request):
            assert not turns, f"{event!r} came after the ModelTurn: the turn must come last"
            if isinstance(event, TextDelta):
                deltas.append(event)
            elif isinstance(event, ThinkingDelta):  # optional: a provider may yield none
                assert isinstance(event.text, str), f"{event!r}: its text is no str"
                thoughts.append(event)
            elif isinstance(event, ModelTurn):
                turns.append(event)
            else:
                raise AssertionError(
                    f"stream yielded {event!r}, none of TextDelta, ThinkingDelta and ModelTurn"
                )
    except ModelError as error:
        return deltas, error
    finally:
        await provider.aclose()
    assert len(turns) == 1, f"the stream ended with {len(turns)} ModelTurns, not exactly one"
    return deltas, turns[0]


def _ask(text: str, *, tools: Sequence[ToolSchema] = (READ_FILE,)) -> ModelRequest:
    return ModelRequest(MODEL, SYSTEM, (Message("user", text),), tools=tuple(tools))


def text_streams_as_deltas_joining_into_the_turn(make: MakeProvider, wire: Wire, name: str) -> None:
    """Text arrives as several TextDeltas whose join is the turn's text."""
    check = _Check(make, wire, name)
    text = "The quick brown fox jumps over the lazy dog."
    deltas, turn = check.turn(FakeTurn(text=text), _ask("Say the sentence."))
    assert len(deltas) >= 2, f"{len(deltas)} TextDelta for a text sent in several pieces"
    assert "".join(d.text for d in deltas) == turn.message.content == text
    assert turn.message.role == "assistant"
    assert turn.message.tool_calls == ()
    assert turn.stop_reason == "end_turn", turn.stop_reason


def thinking_is_no_part_of_the_text(make: MakeProvider, wire: Wire, name: str) -> None:
    """A reasoning model's thinking, streamed before its text (``reasoning_content`` on the
    OpenAI wire), is neither in the text deltas nor the turn's text; a provider may stream it
    as ThinkingDeltas, whose join is the thinking, or not at all."""
    check = _Check(make, wire, name)
    thought = "Two and three make five."
    turn = FakeTurn(text="It is 5.", reasoning=thought)
    deltas, ended = check.turn(turn, _ask("Add 2 and 3."))
    assert "".join(d.text for d in deltas) == ended.message.content == "It is 5."
    shown = "".join(t.text for t in check.thoughts)
    assert shown in ("", thought), f"the thinking streamed as {shown!r}, not as it was thought"


def split_tool_call_arguments_arrive_whole(make: MakeProvider, wire: Wire, name: str) -> None:
    """A tool call whose arguments come in several chunks arrives with its id, name and the
    whole arguments."""
    check = _Check(make, wire, name)
    arguments = {"path": "notes/read me.txt", "lines": [1, 2, 3]}
    call = FakeToolCall("read_file", arguments, id="call_conformance_1")
    _, turn = check.turn(FakeTurn(tool_calls=[call]), _ask("Read my notes."))
    calls = turn.message.tool_calls
    assert len(calls) == 1, f"{len(calls)} tool calls, not 1"
    assert (calls[0].id, calls[0].name) == ("call_conformance_1", "read_file"), calls[0]
    assert json.loads(calls[0].arguments) == arguments, calls[0].arguments
    assert turn.stop_reason == "tool_use", turn.stop_reason


def two_tool_calls_in_one_answer_arrive_both(make: MakeProvider, wire: Wire, name: str) -> None:
    """Two calls in one answer (with some text before them) arrive both, in order."""
    check = _Check(make, wire, name)
    first = FakeToolCall("read_file", {"path": "a.txt"}, id="call_a")
    second = FakeToolCall("read_file", {"path": "b.txt"}, id="call_b")
    turn_ = FakeTurn(text="Reading both.", tool_calls=[first, second])
    _, turn = check.turn(turn_, _ask("Read a and b."))
    got = [(c.id, c.name, json.loads(c.arguments)) for c in turn.message.tool_calls]
    assert got == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("call_b", "read_file", {"path": "b.txt"}),
    ], got
    assert turn.message.content == "Reading both."


def usage_is_reported_when_sent(make: MakeProvider, wire: Wire, name: str) -> None:
    """The usage the server counted is the turn's."""
    check = _Check(make, wire, name)
    _, turn = check.turn(FakeTurn(text="Counted.", usage=Usage(123, 45)), _ask("Count."))
    assert turn.usage == Usage(123, 45), turn.usage


def an_answer_without_usage_is_no_error(make: MakeProvider, wire: Wire, name: str) -> None:
    """A stream that carries no usage (llama.cpp's server) still ends with its turn."""
    check = _Check(make, wire, name)
    _, turn = check.turn(FakeTurn(text="No usage here.", usage=None), _ask("Answer."))
    assert turn.message.content == "No usage here."
    assert turn.usage in (None, Usage()), turn.usage


def _tool_round_trip() -> ModelRequest:
    calls = (
        ModelToolCall("call_r1", "read_file", json.dumps({"path": "a.txt"})),
        ModelToolCall("call_r2", "read_file", json.dumps({"path": "missing.txt"})),
    )
    messages = (
        Message("user", "Read a.txt and missing.txt."),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "alpha contents", tool_call_id="call_r1", name="read_file"),
        Message("tool", "no such file", tool_call_id="call_r2", name="read_file", is_error=True),
    )
    return ModelRequest(MODEL, SYSTEM, messages, tools=(READ_FILE,))


def a_tool_result_round_trips(make: MakeProvider, wire: Wire, name: str) -> None:
    """The server sees the assistant's calls and each result with its call's id."""
    check = _Check(make, wire, name)
    _, ended, server = check.run([FakeTurn(text="Done.")], _tool_round_trip())
    assert isinstance(ended, ModelTurn), f"the provider failed: {ended}"
    messages = server.requests[0].messages
    if check.wire == "openai":
        assistant = next(m for m in messages if m["role"] == "assistant")
        ids = [call["id"] for call in assistant["tool_calls"]]
        assert ids == ["call_r1", "call_r2"], ids
        assert assistant.get("content") == "", (
            f"content {assistant.get('content')!r} beside tool calls: send '' (never null)"
        )
        results = [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"]
        assert results == [("call_r1", "alpha contents"), ("call_r2", "no such file")], results
    else:
        assistant = next(m for m in messages if m["role"] == "assistant")
        uses = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
        assert uses == ["call_r1", "call_r2"], uses
        assert [m["role"] for m in messages] == ["user", "assistant", "user"], (
            "consecutive tool results must be one user message"
        )
        blocks = messages[-1]["content"]
        answered = [(b["tool_use_id"], _result_text(b), b.get("is_error", False)) for b in blocks]
        assert answered == [
            ("call_r1", "alpha contents", False),
            ("call_r2", "no such file", True),
        ], answered


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def the_system_prompt_and_the_tools_are_sent(make: MakeProvider, wire: Wire, name: str) -> None:
    """The server sees the system prompt and the tools with their schemas (on the OpenAI wire
    ``tool_choice: "auto"`` too, which llama.cpp's server needs to parse calls)."""
    check = _Check(make, wire, name)
    _, ended, server = check.run([FakeTurn(text="Ok.")], _ask("Hi"))
    assert isinstance(ended, ModelTurn), f"the provider failed: {ended}"
    request = server.requests[0]
    assert request.system == SYSTEM, f"system prompt {request.system!r}"
    assert request.first_user_text == "Hi"
    assert request.tool_names == ["read_file"], request.tool_names
    tool = request.body["tools"][0]
    schema = tool["function"]["parameters"] if check.wire == "openai" else tool["input_schema"]
    assert schema == READ_FILE.parameters, schema
    if check.wire == "openai":
        assert request.body.get("tool_choice") == "auto", request.body.get("tool_choice")
    assert request.body.get("model") == MODEL


def a_429_is_retryable_after_the_servers_wait(make: MakeProvider, wire: Wire, name: str) -> None:
    """A 429 is a retryable ModelError carrying the ``retry-after`` the server sent."""
    check = _Check(make, wire, name)
    error = check.error(FakeTurn(error=429, retry_after=7))
    assert error.retryable, "a 429 must be retryable"
    assert error.retry_after == 7, f"retry_after {error.retry_after}, the server said 7"


def a_500_is_retryable(make: MakeProvider, wire: Wire, name: str) -> None:
    """A 500 is a retryable ModelError."""
    check = _Check(make, wire, name)
    assert check.error(FakeTurn(error=500)).retryable, "a 500 must be retryable"


def a_400_names_the_provider_and_the_model(make: MakeProvider, wire: Wire, name: str) -> None:
    """A 400 is a ModelError that is not retryable, naming the provider and the model."""
    check = _Check(make, wire, name)
    error = check.error(FakeTurn(error=400, error_message="Unknown field 'x' for " + KEY))
    assert not error.retryable, "a 400 must not be retried"
    assert (error.provider, error.model) == (check.provider, MODEL)
    assert check.provider in str(error), f"the message does not name {check.provider}: {error}"
    assert MODEL in str(error), f"the message does not name the model {MODEL}: {error}"


def a_401_names_the_keys_variable_never_the_key(make: MakeProvider, wire: Wire, name: str) -> None:
    """A 401 (whose body echoes the key, as real servers partly do) is not retryable and
    names the provider, the model and the key's variable, never the key."""
    check = _Check(make, wire, name)
    error = check.error(FakeTurn(error=401))
    assert not error.retryable, "a 401 must not be retried"
    assert check.provider in str(error), f"the message does not name {check.provider}: {error}"
    assert MODEL in str(error), f"the message does not name the model {MODEL}: {error}"
    assert KEY_ENV in str(error), f"the message does not name {KEY_ENV}: {error}"


def an_unreachable_server_is_retryable(make: MakeProvider, wire: Wire, name: str) -> None:
    """No server at ``base_url``: a retryable ModelError, not a crash."""
    check = _Check(make, wire, name)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if check.wire == "openai" else "")
    provider = check.make(check.settings(base))
    _, ended = anyio.run(_collect, provider, _ask("Anyone?"), [])
    assert isinstance(ended, ModelError), f"no ModelError without a server: {ended!r}"
    assert ended.retryable, "a server that cannot be reached may answer later: retryable"
    assert KEY not in f"{ended} {ended!r}"


def the_key_reaches_the_server(make: MakeProvider, wire: Wire, name: str) -> None:
    """The key is sent as the wire's auth header."""
    check = _Check(make, wire, name)
    _, _, server = check.run([FakeTurn(text="Ok.")], _ask("Hi"))
    assert server.requests[0].api_key == KEY, "the server did not get the key"


MODEL_PROVIDER_RULES: tuple[Callable[[MakeProvider, Wire, str], None], ...] = (
    text_streams_as_deltas_joining_into_the_turn,
    thinking_is_no_part_of_the_text,
    split_tool_call_arguments_arrive_whole,
    two_tool_calls_in_one_answer_arrive_both,
    usage_is_reported_when_sent,
    an_answer_without_usage_is_no_error,
    a_tool_result_round_trips,
    the_system_prompt_and_the_tools_are_sent,
    a_429_is_retryable_after_the_servers_wait,
    a_500_is_retryable,
    a_400_names_the_provider_and_the_model,
    a_401_names_the_keys_variable_never_the_key,
    an_unreachable_server_is_retryable,
    the_key_reaches_the_server,
)
"""Every rule of a model provider."""


def model_provider_conformance(
    make: MakeProvider, wire: Wire, *, provider: str | None = None
) -> list[Any]:
    """One ``pytest.param`` per rule of :data:`MODEL_PROVIDER_RULES` (its id is the rule's
    name): a function of no arguments checking that rule against providers from ``make`` on
    the ``wire`` format (``"openai"`` or ``"anthropic"``). The settings ``make`` gets name the
    provider ``provider`` (default: ``wire``), a fake server's ``base_url``, a key in
    ``api_key`` and its variable in ``api_key_env``::

        @pytest.mark.parametrize(
            "check", model_provider_conformance(make_model_provider, "openai")
        )
        def test_openai_provider_follows_the_contract(check):
            check()
    """
    name = provider or wire
    return [
        pytest.param(functools.partial(rule, make, wire, name), id=rule.__name__.replace("_", "-"))
        for rule in MODEL_PROVIDER_RULES
    ]

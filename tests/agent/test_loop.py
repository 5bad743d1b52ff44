"""The conversation loop over a real host: tool calls go through ``Host.dispatch`` (hooks and
the activity log see the real tool), limits and the user's stop end a turn with their reason,
retryable model errors are retried, transcripts keep the conversation without its secrets.

The model is :class:`FakeModelProvider` (no model can run here); the host, its plugins, the
dispatcher and the files are real."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Config, Environment, Host, Session
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Conversation,
    Finished,
    Message,
    ModelError,
    ModelSettings,
    Retrying,
    RetryPolicy,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TranscriptStore,
    Usage,
    UsageReport,
    event_json,
    session_model,
)
from hermes_core.agent._conversation_usage import ConversationUsage
from hermes_core.plugin import ActivityEvent, Tool, ToolAnnotations, ToolCall, hookimpl
from hermes_core.testing import FakeModelProvider, fake_turn, make_host

pytestmark = pytest.mark.anyio

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)


class Weather:
    """A deferred tool (``weather_now``), a visible one (``add``) and observers of every call."""

    def __init__(self) -> None:
        self.pre: list[str] = []
        self.activity: list[str] = []
        self.conversation: Conversation | None = None

    def _stop_then_say(self) -> str:
        assert self.conversation is not None
        self.conversation.cancel()
        return "stopped the turn"

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        number = {"type": "number"}
        return [
            Tool(
                "weather_now",
                "Current weather in a city: temperature and sky.",
                {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                handler=lambda city: f"{city}: 21 C, clear",
                toolset="weather",
                annotations=READ_ONLY,
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
            Tool(
                "stop_turn",
                "Stops the conversation's turn (the user pressing Ctrl-C).",
                handler=self._stop_then_say,
                toolset="math",
                annotations=READ_ONLY,
                core=True,
            ),
        ]

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.pre.append(call.name)

    @hookimpl
    def hermes_tool_activity(self, event: ActivityEvent) -> None:
        self.activity.append(event.name)


@pytest.fixture
def weather() -> Weather:
    return Weather()


@pytest.fixture
def host(hermes_env: Environment, weather: Weather) -> Iterator[Host]:
    config = Config.model_validate(
        {"tools": {"tool_search": {"enabled": "on", "defer": ["weather_now"]}}}
    )
    # The bundled plugins (the approval policy, bm25) with a temporary home.
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    env = replace(hermes_env, variables=variables)
    made = make_host(config, env, plugins={"weather": weather})
    yield made
    made.close()


def agent_for(host: Host, model: FakeModelProvider, tmp_path: Path, **options: Any) -> Agent:
    return Agent(
        host,
        model,
        ModelSettings(provider="fake", model="fake-1"),
        transcripts=TranscriptStore(tmp_path / "sessions"),
        **options,
    )


async def collect(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in events]


def finished(events: list[AgentEvent]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished), events
    return last


async def test_a_final_answer_streams_and_ends_the_turn(host: Host, tmp_path: Path) -> None:
    model = FakeModelProvider.scripted("Hello there, how can I help?", chunk=5)
    agent = agent_for(host, model, tmp_path)
    events = await collect(agent.conversation(host.new_session()).send("hi"))
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello there, how can I help?"
    end = finished(events)
    assert (end.stop, end.text, end.complete, end.turns) == (
        "answer",
        "Hello there, how can I help?",
        True,
        1,
    )
    assert [m.content for m in model.requests[0].messages] == ["hi"]


async def test_a_search_describe_call_flow_runs_the_real_tool_through_the_dispatcher(
    host: Host, weather: Weather, tmp_path: Path
) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("tool_search", {"queries": ["weather in a city"]})),
        fake_turn("", ("tool_describe", {"names": ["weather_now"]})),
        fake_turn(
            "", ("tool_call", {"calls": [{"name": "weather_now", "arguments": {"city": "Lyon"}}]})
        ),
        "It is 21 C and clear in Lyon.",
    )
    agent = agent_for(host, model, tmp_path)
    events = await collect(agent.conversation(host.new_session()).send("weather in Lyon?"))
    first_tools = {schema.name for schema in model.requests[0].tools}
    assert {"tool_search", "tool_describe", "tool_call", "add"} <= first_tools
    assert "weather_now" not in first_tools
    results = [event for event in events if isinstance(event, ToolFinished)]
    assert [result.tools for result in results] == [
        ("tool_search",),
        ("tool_describe",),
        ("weather_now",),
    ]
    assert "weather_now" in results[0].text
    assert results[2].text.count("Lyon: 21 C, clear") == 1
    assert not results[2].is_error
    assert "weather_now" in weather.pre
    assert "weather_now" in weather.activity
    assert finished(events).text == "It is 21 C and clear in Lyon."
    last = model.requests[-1].messages
    assert [m.role for m in last] == ["user", *["assistant", "tool"] * 3]
    assert last[-1].tool_call_id == "call_1"
    assert "21 C" in last[-1].content
    started = [event_json(e) for e in events if isinstance(e, ToolStarted)]
    assert started[-1]["tools"] == ["weather_now"]
    assert started[-1]["name"] == "tool_call"


async def test_a_malformed_argument_string_is_a_tool_error_the_model_reads(
    host: Host, tmp_path: Path
) -> None:
    bad = fake_turn("", ("add", {}))
    bad = type(bad)(
        type(bad.message)(
            "assistant",
            "",
            tool_calls=(type(bad.message.tool_calls[0])("call_1", "add", '{"a": 1, "b":'),),
        ),
        bad.usage,
        "tool_use",
    )
    model = FakeModelProvider.scripted(bad, "Sorry.")
    events = await collect(
        agent_for(host, model, tmp_path).conversation(host.new_session()).send("add")
    )
    result = next(event for event in events if isinstance(event, ToolFinished))
    assert result.is_error
    assert result.error_code == "INVALID_ARGUMENTS"
    assert finished(events).stop == "answer"


async def test_an_argument_string_nested_too_deep_to_read_is_a_tool_error_the_transcript_keeps(
    host: Host, tmp_path: Path
) -> None:
    # Past Python's recursion json.loads raises RecursionError, not ValueError: the transcript's
    # redaction of the model's message raised it, and the turn ended with no tool result.
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    bad = fake_turn("", ("add", {}))
    bad = type(bad)(
        type(bad.message)(
            "assistant", "", tool_calls=(type(bad.message.tool_calls[0])("call_1", "add", deep),)
        ),
        bad.usage,
        "tool_use",
    )
    model = FakeModelProvider.scripted(bad, "Sorry.")
    session = host.new_session()
    events = await collect(agent_for(host, model, tmp_path).conversation(session).send("add"))

    result = next(event for event in events if isinstance(event, ToolFinished))
    assert result.is_error
    assert result.error_code == "INVALID_ARGUMENTS"
    assert finished(events).stop == "answer"
    kept = TranscriptStore(tmp_path / "sessions").open(session.id).messages()
    assert [message.role for message in kept] == ["user", "assistant", "tool", "assistant"]


async def test_the_turn_limit_ends_the_turn_naming_it_with_the_partial_answer(
    host: Host, tmp_path: Path
) -> None:
    looping = fake_turn("Still adding.", ("add", {"a": 1, "b": 2}))
    model = FakeModelProvider(responder=lambda request: looping)
    agent = agent_for(host, model, tmp_path)
    agent.limits = agent.limits.model_copy(update={"max_turns": 3})
    events = await collect(agent.conversation(host.new_session()).send("add forever"))
    end = finished(events)
    assert (end.stop, end.turns, end.text, end.complete) == ("max_turns", 3, "Still adding.", False)
    assert "3 model turns" in end.detail
    assert len(model.requests) == 3


async def test_the_limits_are_each_turns_not_the_whole_conversations(
    host: Host, tmp_path: Path
) -> None:
    """``agent.max_turns`` is "model requests per turn of the conversation": a chat (or an
    ACP session) with the default 50 refused every message after its 50th model request, and
    ``max_seconds`` counted the time the person took to type, from the conversation's start."""
    model = FakeModelProvider(responder=lambda request: fake_turn("Noted."))
    agent = agent_for(host, model, tmp_path)
    agent.limits = agent.limits.model_copy(update={"max_turns": 2, "max_seconds": 0.5})
    conversation = agent.conversation(host.new_session())
    ends = []
    for text in ("one", "two", "three"):
        await asyncio.sleep(0.3)  # the person typing: 0.9 s in all, over max_seconds
        ends.append(finished(await collect(conversation.send(text))))
    assert [(end.stop, end.turns) for end in ends] == [("answer", 1)] * 3
    assert len(model.requests) == 3


async def test_an_answer_cut_at_max_output_tokens_says_so(host: Host, tmp_path: Path) -> None:
    """A model stopped by ``model.max_output_tokens`` (finish_reason ``length``) gave half an
    answer that ended the turn like a whole one, without a word."""
    cut = replace(fake_turn("Step one: open the file. Step two: rem"), stop_reason="max_tokens")
    model = FakeModelProvider.scripted(cut)
    agent = agent_for(host, model, tmp_path)
    end = finished(await collect(agent.conversation(host.new_session()).send("how?")))
    assert (end.stop, end.text) == ("answer", "Step one: open the file. Step two: rem")
    assert end.detail == (
        "the answer was cut at model.max_output_tokens (4096 tokens): raise it for longer ones"
    )


async def test_the_token_limit_counts_every_request(host: Host, tmp_path: Path) -> None:
    looping = fake_turn("", ("add", {"a": 1, "b": 2}))  # 15 tokens a request
    model = FakeModelProvider(responder=lambda request: looping)
    agent = agent_for(host, model, tmp_path)
    agent.limits = agent.limits.model_copy(update={"max_tokens": 40})
    events = await collect(agent.conversation(host.new_session()).send("go"))
    assert finished(events).stop == "max_tokens"
    assert len(model.requests) == 3
    usages = [event for event in events if isinstance(event, UsageReport)]
    assert usages[-1].total.total == 45


async def test_cancel_mid_stream_ends_the_turn_at_once(host: Host, tmp_path: Path) -> None:
    model = FakeModelProvider.scripted("word " * 400, chunk=5, delay=0.05)
    conversation = agent_for(host, model, tmp_path).conversation(host.new_session())
    seen: list[AgentEvent] = []
    async for event in conversation.send("talk"):
        seen.append(event)
        if len(seen) == 3:
            conversation.cancel()
    end = finished(seen)
    assert end.stop == "interrupted"
    assert end.text == "word " * 3
    assert len(seen) == 4  # three deltas, then the end: no further chunk was read


async def test_cancel_while_tools_run_leaves_later_calls_interrupted(
    host: Host, weather: Weather, tmp_path: Path
) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("stop_turn", {}), ("add", {"a": 1, "b": 2})), "never asked"
    )
    conversation = agent_for(host, model, tmp_path).conversation(host.new_session())
    weather.conversation = conversation
    events = await collect(conversation.send("go"))
    results = [event for event in events if isinstance(event, ToolFinished)]
    assert [(r.call.name, r.error_code) for r in results] == [
        ("stop_turn", None),
        ("add", "INTERRUPTED"),
    ]
    assert finished(events).stop == "interrupted"
    assert len(model.requests) == 1
    # The next message starts a new turn; every call of the last one has its result.
    model.answers.append("ok")
    again = await collect(conversation.send("go on"))
    assert finished(again).stop == "answer"
    roles = [m.role for m in model.requests[-1].messages]
    assert roles == ["user", "assistant", "tool", "tool", "user"]


async def test_a_retryable_error_is_retried_after_the_servers_wait(
    host: Host, tmp_path: Path
) -> None:
    busy = ModelError(
        "429 too many requests",
        provider="fake",
        model="fake-1",
        status=429,
        retryable=True,
        retry_after=0.01,
    )
    model = FakeModelProvider.scripted(busy, busy, "done")
    events = await collect(
        agent_for(host, model, tmp_path).conversation(host.new_session()).send("go")
    )
    retries = [event for event in events if isinstance(event, Retrying)]
    assert [(r.attempt, r.wait) for r in retries] == [(1, 0.01), (2, 0.01)]
    assert finished(events).text == "done"


async def test_retries_stop_at_the_limit_and_other_errors_are_not_retried(
    host: Host, tmp_path: Path
) -> None:
    busy = ModelError(
        "503", provider="fake", model="fake-1", status=503, retryable=True, retry_after=0
    )
    model = FakeModelProvider(responder=lambda request: busy)
    agent = agent_for(host, model, tmp_path, retry=RetryPolicy(max_retries=2))
    events = await collect(agent.conversation(host.new_session()).send("go"))
    assert finished(events).stop == "error"
    assert len(model.requests) == 3
    refused = ModelError(
        "fake model 'fake-1': 401 invalid key (check OPENAI_API_KEY)",
        provider="fake",
        model="fake-1",
        status=401,
    )
    model = FakeModelProvider.scripted(refused)
    events = await collect(
        agent_for(host, model, tmp_path).conversation(host.new_session()).send("go")
    )
    end = finished(events)
    assert end.stop == "error"
    assert "401" in end.detail
    assert len(model.requests) == 1


async def test_the_transcript_keeps_every_message_private_and_without_secrets(
    host: Host, tmp_path: Path
) -> None:
    secret = "sk-proj-" + "A1b2C3d4" * 6
    model = FakeModelProvider.scripted(fake_turn("", ("add", {"a": 2, "b": 3})), "5")
    session = host.new_session()
    await collect(
        agent_for(host, model, tmp_path)
        .conversation(session)
        .send(f"my key is {secret}; add 2 and 3")
    )
    path = tmp_path / "sessions" / f"{session.id}.jsonl"
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    assert "[redacted]" in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line.get("role", line["type"]) for line in lines] == [
        "session",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


async def test_each_request_assembles_the_tools_again(host: Host, tmp_path: Path) -> None:
    calls = {"n": 0}

    def register_then_answer(request: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            host.registry.register(
                Tool(
                    "late",
                    "A tool that arrived mid-conversation.",
                    handler=lambda: "hi",
                    annotations=READ_ONLY,
                    core=True,
                ),
                owner="test",
            )
            return fake_turn("", ("add", {"a": 1, "b": 1}))
        return "done"

    model = FakeModelProvider(responder=register_then_answer)
    await collect(agent_for(host, model, tmp_path).conversation(host.new_session()).send("go"))
    names = [{tool.name for tool in request.tools} for request in model.requests]
    assert "late" not in names[0]
    assert "late" in names[1]


def test_cancel_from_another_task_ends_a_turn_waiting_on_the_model(
    host: Host, tmp_path: Path
) -> None:
    async def scenario() -> Finished:
        model = FakeModelProvider.scripted("slow " * 100, chunk=5, delay=10.0)
        conversation = agent_for(host, model, tmp_path).conversation(host.new_session())
        asyncio.get_running_loop().call_later(0.1, conversation.cancel)
        return finished(await asyncio.wait_for(collect(conversation.send("go")), 5))

    end = asyncio.run(scenario())
    assert end.stop == "interrupted"
    assert end.text == ""


async def test_use_model_sends_the_next_requests_and_side_questions_to_that_model(
    host: Host, tmp_path: Path
) -> None:
    """``/model NAME``: the conversation's next requests, a tool's question to the session's
    model, the conversations the agent starts later; the transcript's next header names it."""
    model = FakeModelProvider.scripted("One.", "Seen.", "Two.", "Three.")
    agent = agent_for(host, model, tmp_path)
    session = host.new_session()
    conversation = agent.conversation(session)
    await collect(conversation.send("hi"))
    conversation.use_model("fake-2")
    side = session_model(session)
    assert side is not None
    assert side.name == "fake-2"
    assert await side.ask(Message("user", "look")) == "Seen."
    await collect(conversation.send("again"))
    await collect(agent.conversation(host.new_session()).send("new"))
    assert [request.model for request in model.requests] == ["fake-1", *["fake-2"] * 3]
    path = tmp_path / "sessions" / f"{session.id}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["model"] for r in records if r["type"] == "session"] == ["fake-1", "fake-2"]


async def test_conversation_usage_adds_up_every_budget_the_conversation_spent(
    host: Host, tmp_path: Path
) -> None:
    """``/usage``: each turn's budget and the one of ``/compact``'s summary request."""
    model = FakeModelProvider.scripted("One.", "Two.", "A summary.")
    agent = agent_for(host, model, tmp_path)
    conversation = agent.conversation(host.new_session())
    await collect(conversation.send("first"))
    await collect(conversation.send("second"))
    await collect(conversation.compact())
    used = ConversationUsage.of(conversation)
    assert (used.requests, used.usage, used.window) == (3, Usage(30, 15), 128_000)
    tools = agent.tool_schemas(conversation.session)
    assert used.estimate == conversation.compaction.estimate(tools)

"""Anthropic's extended thinking (``model.reasoning_effort`` with the ``anthropic`` provider),
against the FakeModelServer, which signs its thinking blocks and refuses, as the API does, a
tool loop whose last assistant turn comes back without them, a changed block, a budget not
under ``max_tokens`` and a ``temperature``: the budget sent, the blocks carried on the
message and sent back in order, kept in the transcript for a resumed conversation and by
compaction, never shown as the answer (``test_thinking_shown.py``: where it is shown)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hermes_core import Config, ConfigError, Environment, Host
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Finished,
    Message,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    ThinkingBlock,
    ToolSchema,
)
from hermes_core.agent._transcripts import Transcript, TranscriptError
from hermes_core.testing import (
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    make_host,
    make_model_provider,
)
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_thinking import signature_of

ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
ASK = Message("user", "Add 2 and 3.")
THOUGHT = "2 and 3: the add tool will say."
REDACTED = "EncryptedThoughtsTheClientCannotRead=="


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _settings(server: FakeModelServer, **fields: Any) -> ModelSettings:
    return ModelSettings("anthropic", "small-model", base_url=server.anthropic_base_url, **fields)


def _run(provider: ModelProvider, *requests: ModelRequest) -> list[list[ModelEvent]]:
    async def main() -> list[list[ModelEvent]]:
        try:
            return [[event async for event in provider.stream(r)] for r in requests]
        finally:
            await provider.aclose()

    return anyio.run(main)


def _request(*messages: Message, max_tokens: int | None = None) -> ModelRequest:
    return ModelRequest("small-model", "Be brief.", messages, tools=(ADD,), max_tokens=max_tokens)


@pytest.mark.parametrize(("effort", "budget"), [("low", 2048), ("high", 16384)])
def test_reasoning_effort_is_a_thinking_budget_under_max_tokens_without_temperature(
    effort: str, budget: int
) -> None:
    with FakeModelServer([FakeTurn(text="5.", reasoning=THOUGHT)]) as server:
        settings = _settings(server, reasoning_effort=effort, max_output_tokens=20000)
        _run(make_model_provider(settings), _request(ASK))
        (request,) = server.requests

    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert request.body["max_tokens"] == 20000
    assert "temperature" not in request.body


def test_reasoning_effort_none_and_null_send_no_thinking() -> None:
    with FakeModelServer([FakeTurn(text="5."), FakeTurn(text="5.")]) as server:
        _run(make_model_provider(_settings(server, reasoning_effort="none")), _request(ASK))
        _run(make_model_provider(_settings(server)), _request(ASK))
        first, second = server.requests

    assert "thinking" not in first.body
    assert "thinking" not in second.body


def test_a_max_output_tokens_not_above_the_budget_is_refused_naming_the_key() -> None:
    """The API refuses a budget not under max_tokens: said before any request, with the
    value to set."""
    settings = ModelSettings("anthropic", "m", base_url="http://127.0.0.1:9", api_key="k")
    with pytest.raises(ConfigError, match=r"model\.max_output_tokens") as raised:
        make_model_provider(replace(settings, reasoning_effort="medium", max_output_tokens=4096))
    assert "8,192" in str(raised.value)
    assert "hermes config set model.max_output_tokens" in str(raised.value)


def test_a_request_capped_below_the_budget_gets_the_budget_added() -> None:
    """A request of its own smaller cap (the vision tool's question) still gets its answer's
    tokens beside the thinking, as the API requires max_tokens above the budget."""
    with FakeModelServer([FakeTurn(text="A cat.", reasoning=THOUGHT)]) as server:
        settings = _settings(server, reasoning_effort="low", max_output_tokens=4096)
        _run(make_model_provider(settings), _request(ASK, max_tokens=1000))
        (request,) = server.requests

    assert request.body["max_tokens"] == 2048 + 1000


def test_the_thinking_is_not_the_text_and_comes_on_the_message_in_order() -> None:
    turn = FakeTurn(text="It is 5.", reasoning=THOUGHT, redacted_thinking=REDACTED)
    with FakeModelServer([turn]) as server:
        settings = _settings(server, reasoning_effort="low")
        ((*deltas, last),) = _run(make_model_provider(settings), _request(ASK))

    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "It is 5."
    assert isinstance(last, ModelTurn)
    assert last.message.content == "It is 5."
    assert last.message.thinking == (
        ThinkingBlock(THOUGHT, signature_of(THOUGHT)),
        ThinkingBlock(data=REDACTED),
    )


def _host(server: FakeModelServer, env: Environment, **model: Any) -> Host:
    fields = {
        "provider": "anthropic",
        "model": "small-model",
        "base_url": server.anthropic_base_url,
    }
    config = Config.model_validate({"model": {**fields, **model}})
    variables = {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    variables["ANTHROPIC_API_KEY"] = "sk-test"
    return make_host(config, replace(env, variables=variables))


async def _one_message(host: Host, text: str) -> list[AgentEvent]:
    agent = Agent.from_host(host)
    conversation = agent.conversation(host.new_session())
    try:
        return [event async for event in conversation.send(text)]
    finally:
        await conversation.aclose()
        await agent.aclose()


def test_a_two_step_tool_loop_with_thinking_passes(hermes_env: Environment) -> None:
    """The API refuses the request after a tool call whose assistant turn comes back without
    its signed thinking blocks, in order: each turn's blocks are sent back."""
    first = FakeTurn(reasoning="First add.", tool_calls=[FakeToolCall("add", {"a": 2, "b": 3})])
    second = FakeTurn(
        reasoning="Then again.",
        redacted_thinking=REDACTED,
        tool_calls=[FakeToolCall("add", {"a": 5, "b": 5})],
    )
    with FakeModelServer([first, second, FakeTurn(text="10.", reasoning="Done.")]) as server:
        host = _host(server, hermes_env, reasoning_effort="low")
        try:
            events = anyio.run(_one_message, host, "Add 2 and 3, then 5 more.")
        finally:
            host.close()
        requests = server.requests

    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "10.")
    assistants = [m for m in requests[2].body["messages"] if m["role"] == "assistant"]
    assert [[b["type"] for b in m["content"]] for m in assistants] == [
        ["thinking", "tool_use"],
        ["thinking", "redacted_thinking", "tool_use"],
    ]
    assert assistants[0]["content"][0]["signature"] == signature_of("First add.")
    assert assistants[1]["content"][1] == {"type": "redacted_thinking", "data": REDACTED}
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert (shown, end.text) == ("10.", "10.")


def test_several_thinking_blocks_of_a_tool_turn_go_back_in_order_unchanged() -> None:
    """Interleaved thinking: the fake signs each block and refuses a changed one."""
    thoughts = ("First add.", "Then check.")
    call = FakeToolCall("add", {"a": 2, "b": 3}, id="toolu_1")
    first = FakeTurn(reasoning=thoughts, redacted_thinking=REDACTED, tool_calls=[call])
    with FakeModelServer([first, FakeTurn(text="5.", reasoning="Done.")]) as server:
        provider = make_model_provider(_settings(server, reasoning_effort="low"))
        ((*_, turn),) = _run(provider, _request(ASK))
        assert isinstance(turn, ModelTurn)
        result = Message("tool", "5", tool_call_id="toolu_1", name="add")
        ((*_, last),) = _run(
            make_model_provider(_settings(server, reasoning_effort="low")),
            _request(ASK, turn.message, result),
        )
        requests = server.requests

    assert isinstance(last, ModelTurn)
    assert last.message.content == "5."
    (sent,) = [m for m in requests[1].body["messages"] if m["role"] == "assistant"]
    assert sent["content"][:3] == [
        {"type": "thinking", "thinking": thoughts[0], "signature": signature_of(thoughts[0])},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "thinking", "thinking": thoughts[1], "signature": signature_of(thoughts[1])},
    ]
    assert [b["type"] for b in sent["content"][3:]] == ["tool_use"]


def test_the_fake_refuses_a_tool_turn_sent_back_without_its_thinking() -> None:
    """As the real API does: the fake is what proves the loop above sends the blocks."""
    body = {
        "model": "m",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": "Add 2 and 3."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        refused = httpx.post(f"{server.url}/v1/messages", json=body)
        changed = body["messages"][1]["content"]
        changed.insert(0, {"type": "thinking", "thinking": "Edited.", "signature": "fake-sig-0"})
        edited = httpx.post(f"{server.url}/v1/messages", json=body)

    assert refused.status_code == 400
    assert "must start with a thinking block" in refused.json()["error"]["message"]
    assert edited.status_code == 400
    assert "Invalid `signature`" in edited.json()["error"]["message"]


def test_a_history_whose_last_tool_turn_has_no_blocks_is_sent_without_thinking() -> None:
    """A conversation taken up again whose blocks were not kept (a thinking that held a
    secret, see below), or begun with another provider: with thinking on, the API refuses it;
    that one request goes without thinking instead."""
    call = Message("assistant", "", tool_calls=(ModelToolCall("toolu_1", "add", '{"a": 2}'),))
    result = Message("tool", "5", tool_call_id="toolu_1", name="add")
    with FakeModelServer([FakeTurn(text="5.", reasoning=THOUGHT)]) as server:
        settings = _settings(server, reasoning_effort="low")
        ((*_, last),) = _run(make_model_provider(settings), _request(ASK, call, result))
        (request,) = server.requests

    assert "thinking" not in request.body
    assert isinstance(last, ModelTurn)
    assert last.message.content == "5."


def test_a_message_keeps_its_blocks_through_json() -> None:
    message = Message(
        "assistant",
        "",
        tool_calls=(ModelToolCall("toolu_1", "add", "{}"),),
        thinking=(ThinkingBlock(THOUGHT, signature_of(THOUGHT)), ThinkingBlock(data=REDACTED)),
    )
    data = message.to_json()
    assert data["thinking"] == [
        {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)},
        {"type": "redacted_thinking", "data": REDACTED},
    ]
    assert Message.from_json(json.loads(json.dumps(data))) == message


def _write_config(cli: InProcessCli, model: dict[str, Any], **sections: Any) -> None:
    cli.config.write_text(json.dumps({"model": model, **sections}), encoding="utf-8")


def test_a_resumed_tool_loop_sends_its_thinking_back(hermes_cli: InProcessCli) -> None:
    """A conversation that stopped after a tool call (here agent.max_turns; a killed process
    alike) and is taken up again with --continue: its last assistant turn is a tool call, whose
    thinking block the API requires."""
    calling = FakeTurn(reasoning=THOUGHT, tool_calls=[FakeToolCall("no_such_tool", {})])
    with FakeModelServer([calling, FakeTurn(text="Done.", reasoning="Now answer.")]) as server:
        model = {
            "provider": "anthropic",
            "model": "m",
            "base_url": server.anthropic_base_url,
            "reasoning_effort": "low",
        }
        _write_config(hermes_cli, model, agent={"max_turns": 1})
        env = hermes_cli.variables(ANTHROPIC_API_KEY="sk-test")
        hermes_cli.run("run", "Add 2 and 3.", env=env, ok=False)
        _write_config(hermes_cli, model)
        done = hermes_cli.run("run", "--continue", "Go on.", env=env)
        requests = server.requests

    assert done.stdout.strip() == "Done."
    sent = requests[1].body
    assert sent["thinking"]["type"] == "enabled"
    (assistant,) = [m for m in sent["messages"] if m["role"] == "assistant"]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": signature_of(THOUGHT),
    }
    (transcript,) = (hermes_cli.home / "sessions").glob("*.jsonl")
    assert signature_of(THOUGHT) in transcript.read_text(encoding="utf-8")


def test_a_thinking_that_quotes_a_secret_is_not_kept_and_resuming_still_works(
    hermes_cli: InProcessCli,
) -> None:
    """The transcript redacts what it keeps, and a redacted block no longer matches its
    signature: the blocks of that turn are not kept at all, and the resumed request goes
    without thinking rather than being refused."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    leaking = FakeTurn(
        reasoning=f"The token is {secret}.", tool_calls=[FakeToolCall("no_such_tool", {})]
    )
    with FakeModelServer([leaking, FakeTurn(text="Done.")]) as server:
        model = {
            "provider": "anthropic",
            "model": "m",
            "base_url": server.anthropic_base_url,
            "reasoning_effort": "low",
        }
        _write_config(hermes_cli, model, agent={"max_turns": 1})
        env = hermes_cli.variables(ANTHROPIC_API_KEY="sk-test")
        hermes_cli.run("run", "Look.", env=env, ok=False)
        _write_config(hermes_cli, model)
        done = hermes_cli.run("run", "--continue", "Go on.", env=env)
        requests = server.requests

    (transcript,) = (hermes_cli.home / "sessions").glob("*.jsonl")
    assert secret not in transcript.read_text(encoding="utf-8")
    assert done.stdout.strip() == "Done."
    assert "thinking" not in requests[1].body


def test_a_compaction_keeps_the_blocks_of_the_messages_it_keeps(tmp_path: Path) -> None:
    block = ThinkingBlock(THOUGHT, signature_of(THOUGHT))
    call = Message(
        "assistant", "", tool_calls=(ModelToolCall("toolu_1", "add", "{}"),), thinking=(block,)
    )
    result = Message("tool", "5", tool_call_id="toolu_1", name="add")
    transcript = Transcript(tmp_path / "s.jsonl")
    transcript.start("s", model="m", cwd=str(tmp_path))
    for message in (ASK, Message("assistant", "Sure."), ASK, call, result):
        transcript.add(message)
    transcript.compacted(2, Message("user", "[summary]"), [ASK, call, result])

    assert transcript.history()[2].thinking == (block,)


def test_a_capped_request_with_thinking_stays_within_max_output_tokens() -> None:
    """The budget added to a request's own cap (the vision tool's 1,024) must not pass
    model.max_output_tokens, the most the model writes: with ``max`` (63,999) and the 64,000
    of the models that write the most, 65,023 is refused by the API."""
    with FakeModelServer([FakeTurn(text="A cat.", reasoning=THOUGHT)]) as server:
        settings = _settings(server, reasoning_effort="max", max_output_tokens=64000)
        _run(make_model_provider(settings), _request(ASK, max_tokens=1024))
        (request,) = server.requests

    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 63999}
    assert request.body["max_tokens"] == 64000


@pytest.mark.parametrize(
    "thinking",
    [
        "not a list",
        {"type": "thinking", "thinking": THOUGHT, "signature": "s"},
        [7],
        [{"type": "thinking", "thinking": 5, "signature": ["s"]}],
        [{"type": "redacted_thinking", "data": None}],
        [{"type": "tool_use", "id": "x"}],
        [None],
    ],
)
def test_a_transcript_line_with_malformed_thinking_is_a_clear_error(
    tmp_path: Path, thinking: Any
) -> None:
    """A hand-edited or damaged ``thinking`` field is refused naming the file, the line and
    the field, rather than sent (a changed block makes the API refuse every request of the
    session) or read as something else."""
    path = tmp_path / "s.jsonl"
    transcript = Transcript(path)
    transcript.start("s", model="m", cwd=str(tmp_path))
    transcript.add(ASK)
    line = {"type": "message", "role": "assistant", "content": "5.", "thinking": thinking}
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")

    with pytest.raises(TranscriptError, match=r"s\.jsonl, line 3, .*thinking") as raised:
        transcript.history()
    assert "\n" not in str(raised.value)


def test_thinking_on_a_message_not_the_models_is_a_clear_error(tmp_path: Path) -> None:
    """Blocks on a user or tool message would go in a user turn, which the API refuses."""
    path = tmp_path / "s.jsonl"
    transcript = Transcript(path)
    transcript.start("s", model="m", cwd=str(tmp_path))
    block = {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)}
    line = {"type": "message", "role": "user", "content": "Hi.", "thinking": [block]}
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")

    with pytest.raises(TranscriptError, match=r"line 2, .*thinking.*assistant"):
        transcript.history()


def test_an_answer_cut_in_its_thinking_keeps_no_unsigned_block() -> None:
    """An answer cut at max_tokens in its thinking ends without the block's signature: kept,
    the block made the API refuse every later request of the conversation (its signature
    missing); the message keeps no block, and the next request goes without the message,
    empty now (the API refuses a message of no content, and needs no block on a turn without
    tool calls)."""
    cut = FakeTurn(reasoning=THOUGHT, truncated=True)
    with FakeModelServer([cut, FakeTurn(text="5.", reasoning="Again.")]) as server:
        settings = _settings(server, reasoning_effort="low")
        provider = make_model_provider(settings)
        ((*_, first),) = _run(provider, _request(ASK))
        assert isinstance(first, ModelTurn)
        assert first.stop_reason == "max_tokens"
        again = _request(ASK, first.message, Message("user", "Go on."))
        ((*_, last),) = _run(make_model_provider(settings), again)
        second = server.requests[1]

    assert first.message.thinking == ()
    assert isinstance(last, ModelTurn)
    assert last.message.content == "5."
    assert second.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert [m["role"] for m in second.body["messages"]] == ["user"]


@pytest.mark.parametrize("effort", ["minimal", "low", "medium", "high", "xhigh", "max"])
def test_the_max_output_tokens_suggested_is_one_a_model_takes(effort: str) -> None:
    """The value the refusal says to set passes the check and is no more than the 64,000
    output tokens of the Claude models that write the most: max effort's suggested 68,095
    was refused by the API in its turn."""
    settings = ModelSettings("anthropic", "m", base_url="http://127.0.0.1:9", api_key="k")
    low = replace(settings, reasoning_effort=effort, max_output_tokens=1024)
    with pytest.raises(ConfigError) as raised:
        make_model_provider(low)
    found = re.search(r"hermes config set model\.max_output_tokens (\d+)", str(raised.value))
    assert found is not None
    suggested = int(found.group(1))
    assert suggested <= 64000
    make_model_provider(replace(low, max_output_tokens=suggested))  # accepted

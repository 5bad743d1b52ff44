"""The bundled providers for daily use, against the FakeModelServer: Anthropic's prompt cache
marked on the resent prefix (``model.prompt_cache``), token counts that include what the
servers read from their caches, a reasoning model's thinking kept out of the answer, and
``model.reasoning_effort``."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Config, Environment, Host
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
    ToolSchema,
    Usage,
)
from hermes_core.testing import (
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    HermesCli,
    make_host,
    make_model_provider,
)
from hermes_core.testing._cli_in_process import InProcessCli

ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})
MARK = {"type": "ephemeral"}
KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
# 1,200 tokens of input, 1,000 of them read from the cache and 150 written to it.
CACHED = FakeTurn(text="Again.", usage=Usage(1200, 30, cached_tokens=1000), cache_write_tokens=150)


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _settings(server: FakeModelServer, provider: str, **fields: Any) -> ModelSettings:
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return ModelSettings(provider, "small-model", base_url=base, **fields)


def _run(provider: ModelProvider, *requests: ModelRequest) -> list[list[ModelEvent]]:
    async def main() -> list[list[ModelEvent]]:
        try:
            return [[event async for event in provider.stream(r)] for r in requests]
        finally:
            await provider.aclose()

    return anyio.run(main)


def _request(*messages: Message) -> ModelRequest:
    return ModelRequest("small-model", "Be brief.", messages, tools=(ADD,))


ASK = Message("user", "Add 2 and 3.")
CALL = Message("assistant", "", tool_calls=(ModelToolCall("toolu_1", "add", '{"a": 2}'),))
RESULT = Message("tool", "5", tool_call_id="toolu_1", name="add")
THANKS = Message("user", "Thanks. And 4 and 4?")


def _marked(value: Any) -> list[Any]:
    """Every block of ``value`` that carries a ``cache_control``."""
    if isinstance(value, dict):
        own = [value] if "cache_control" in value else []
        return own + [block for item in value.values() for block in _marked(item)]
    if isinstance(value, list):
        return [block for item in value for block in _marked(item)]
    return []


def test_anthropic_marks_the_tools_the_system_prompt_and_the_last_two_user_messages() -> None:
    """Without breakpoints Anthropic caches nothing: every request of a loop paid the whole
    prefix (tools, system prompt, conversation) again at full price."""
    with FakeModelServer([FakeTurn(text="8.")]) as server:
        _run(
            make_model_provider(_settings(server, "anthropic")),
            _request(ASK, CALL, RESULT, THANKS),
        )
        (request,) = server.requests

    body = request.body
    assert body["tools"][-1]["cache_control"] == MARK
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": MARK}]
    sent = body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    # The tool result and the next question are one user message; the first question the other.
    assert sent[2]["content"][-1] == {"type": "text", "text": THANKS.content, "cache_control": MARK}
    assert sent[0]["content"][-1]["cache_control"] == MARK
    assert not _marked(sent[1])
    assert len(_marked(body)) == 4  # the API's most


def test_the_next_request_reads_the_cache_where_the_last_one_wrote_it() -> None:
    """The previous request's last breakpoint is marked again, at the same place: the next
    request finds its cache whatever number of blocks came after it (Anthropic looks back 20
    blocks from a breakpoint, no further)."""
    with FakeModelServer([FakeTurn(text="5."), FakeTurn(text="8.")]) as server:
        _run(
            make_model_provider(_settings(server, "anthropic")),
            _request(ASK),
            _request(ASK, CALL, RESULT, THANKS),
        )
        first, second = server.requests

    assert first.body["messages"][0]["content"][-1]["cache_control"] == MARK
    assert second.body["messages"][0] == first.body["messages"][0]


def test_prompt_cache_off_sends_no_breakpoint() -> None:
    with FakeModelServer([FakeTurn(text="8.")]) as server:
        settings = _settings(server, "anthropic", prompt_cache=False)
        _run(make_model_provider(settings), _request(ASK, CALL, RESULT, THANKS))
        (request,) = server.requests

    assert _marked(request.body) == []
    assert request.body["system"] == "Be brief."


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_usage_counts_the_whole_input_and_says_what_was_cached(provider: str) -> None:
    """Anthropic's input_tokens leave out the cache's reads and writes: with caching on, the
    stop line and agent.max_tokens counted a request of 1,200 input tokens as 50."""
    with FakeModelServer([CACHED]) as server:
        ((*_, turn),) = _run(make_model_provider(_settings(server, provider)), _request(ASK))

    assert isinstance(turn, ModelTurn)
    assert turn.usage == Usage(1200, 30, cached_tokens=1000)


def _host(server: FakeModelServer, provider: str, env: Environment, **sections: Any) -> Host:
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    model = {"provider": provider, "model": "small-model", "base_url": base}
    config = Config.model_validate({**sections, "model": {**model, **sections.get("model", {})}})
    variables = {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    variables[KEYS[provider]] = "sk-test"
    return make_host(config, replace(env, variables=variables))


async def _one_message(host: Host, text: str) -> list[AgentEvent]:
    agent = Agent.from_host(host)
    conversation = agent.conversation(host.new_session())
    try:
        return [event async for event in conversation.send(text)]
    finally:
        await conversation.aclose()
        await agent.aclose()


def test_agent_max_tokens_counts_the_cached_input(hermes_env: Environment) -> None:
    calling = replace(CACHED, text="", tool_calls=[FakeToolCall("add", {"a": 2, "b": 3})])
    with FakeModelServer([calling, FakeTurn(text="5.")]) as server:
        host = _host(server, "anthropic", hermes_env, agent={"max_tokens": 1000})
        try:
            events = anyio.run(_one_message, host, "Add 2 and 3.")
        finally:
            host.close()

    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.turn_usage) == ("max_tokens", Usage(1200, 30, cached_tokens=1000))


def _write_config(cli: HermesCli, model: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")


def test_the_stop_line_and_the_json_say_what_was_cached(hermes_cli: InProcessCli) -> None:
    with FakeModelServer([CACHED, CACHED]) as server:
        base = server.anthropic_base_url
        _write_config(hermes_cli, {"provider": "anthropic", "model": "m", "base_url": base})
        env = hermes_cli.variables(ANTHROPIC_API_KEY="sk-test")
        plain = hermes_cli.run("run", "Again?", env=env)
        as_json = hermes_cli.run("run", "--json", "Again?", env=env)

    assert plain.stderr.endswith(
        "hermes: stop: answer (1 model request, 1,230 tokens, 1,000 cached)\n"
    )
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    (usage,) = [event for event in events if event["type"] == "usage"]
    assert (usage["input_tokens"], usage["cached_tokens"]) == (1200, 1000)
    final = events[-1]
    assert (final["input_tokens"], final["cached_tokens"], final["turn_cached_tokens"]) == (
        1200,
        1000,
        1000,
    )


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_a_reasoning_models_thinking_is_neither_answer_nor_sent_back(key: str) -> None:
    """DeepSeek, vLLM's reasoning parser, OpenRouter and Ollama stream the thinking beside the
    text: it is no part of the answer, and DeepSeek refuses a request that sends it back."""
    thinking = FakeTurn(text="It is 5.", reasoning="2 and 3 make 5, surely.", reasoning_key=key)
    with FakeModelServer([thinking, FakeTurn(text="8.")]) as server:
        provider = make_model_provider(_settings(server, "openai"))
        first, _ = _run(
            provider,
            _request(ASK),
            _request(ASK, Message("assistant", "It is 5."), THANKS),
        )
        requests = server.requests

    *deltas, turn = first
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "It is 5."
    assert isinstance(turn, ModelTurn)
    assert turn.message.content == "It is 5."
    assert "surely" not in json.dumps(requests[1].body)


def test_reasoning_effort_is_sent_to_an_openai_compatible_server() -> None:
    """o-series and gpt-5 models take reasoning_effort, and refuse max_tokens for
    max_completion_tokens."""
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        settings = _settings(server, "openai", reasoning_effort="high", max_output_tokens=9000)
        _run(make_model_provider(settings), _request(ASK))
        (request,) = server.requests

    assert request.body["reasoning_effort"] == "high"
    assert request.body["max_completion_tokens"] == 9000
    assert "max_tokens" not in request.body


def test_without_reasoning_effort_none_is_sent() -> None:
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        _run(make_model_provider(_settings(server, "openai")), _request(ASK))
        (request,) = server.requests

    assert "reasoning_effort" not in request.body
    assert request.body["max_tokens"] == 4096


def test_the_settings_reach_the_provider_from_the_config(hermes_env: Environment) -> None:
    model = {"reasoning_effort": "low"}
    with FakeModelServer([FakeTurn(text="5.")]) as server:
        host = _host(server, "openai", hermes_env, model=model)
        try:
            anyio.run(_one_message, host, "Add 2 and 3.")
        finally:
            host.close()
        (request,) = server.requests
    assert request.body["reasoning_effort"] == "low"

    with FakeModelServer([FakeTurn(text="5.")]) as server:
        host = _host(server, "anthropic", hermes_env, model={"prompt_cache": False})
        try:
            anyio.run(_one_message, host, "Add 2 and 3.")
        finally:
            host.close()
        (request,) = server.requests
    assert _marked(request.body) == []


def test_an_unknown_reasoning_effort_is_a_configuration_error_naming_the_values(
    hermes_cli: InProcessCli,
) -> None:
    _write_config(hermes_cli, {"provider": "openai", "model": "m", "reasoning_effort": "huge"})
    done = hermes_cli.run("run", "Hi", ok=False)
    assert done.returncode == 2
    assert "model.reasoning_effort" in done.stderr
    assert "'high'" in done.stderr


def test_thinking_written_in_think_tags_is_not_the_answer() -> None:
    """vLLM without its reasoning parser, older Ollama and some proxies leave a reasoning
    model's thinking in the text as ``<think>...</think>``: it was shown as the answer, and the
    message (what the transcript keeps and every next request sends back) held it."""
    thinking = FakeTurn(text="<think>2 and 3 make 5, surely.</think>\n\nIt is 5.")
    with FakeModelServer([thinking]) as server:
        (events,) = _run(make_model_provider(_settings(server, "openai")), _request(ASK))

    *deltas, turn = events
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "It is 5."
    assert isinstance(turn, ModelTurn)
    assert turn.message.content == "It is 5."


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("<think>a</think>\n\nIt is 5.", "It is 5."),
        ("\n<think>\nlong\nthought\n</think>It is 5.", "It is 5."),
        ("<think>cut off by the cap", ""),
        ("It is 5. <think> is a tag.", "It is 5. <think> is a tag."),
        ("<thin", "<thin"),
        ("", ""),
    ],
)
def test_think_tags_are_found_however_the_text_is_cut(text: str, answer: str) -> None:
    from plugins_builtin.openai.think_tags import ThinkTags

    for size in (1, 2, 3, 7, len(text) or 1):
        tags = ThinkTags()
        shown = [tags.feed(text[at : at + size]) for at in range(0, len(text), size)]
        assert "".join(shown) + tags.finish() == answer, size


def test_blank_text_before_the_answer_is_held_in_linear_time() -> None:
    from plugins_builtin.openai.think_tags import ThinkTags

    # Blank text could still come before a <think>, so it is held: each blank piece was added
    # to what was held, copying it (60,000 pieces of 20 spaces took 19 s, the GIL held).
    blank, count = " " * 20, 60_000
    tags = ThinkTags()
    started = time.process_time()
    shown = [tags.feed(blank) for _ in range(count)]
    shown.append(tags.feed("It is 5."))
    elapsed = time.process_time() - started

    assert elapsed < 2.0, f"holding the blank text took {elapsed:.1f} s"
    assert "".join(shown) + tags.finish() == blank * count + "It is 5."
    tags = ThinkTags()
    assert [tags.feed(blank) for _ in range(3)] == ["", "", ""]
    assert tags.feed("<think>a</think>It is 5.") == "It is 5."


def test_anthropic_marks_no_empty_tool_result() -> None:
    """Anthropic refuses ``cache_control`` on an empty text block: a tool that printed
    nothing, ending the request, would have made every request of the loop refused. The turn
    is marked at its last block with content (another call's result), or not at all."""
    empty = Message("tool", "", tool_call_id="toolu_1", name="add")
    two = Message("assistant", "", tool_calls=(*CALL.tool_calls, ModelToolCall("toolu_2", "add")))
    second = Message("tool", "", tool_call_id="toolu_2", name="add")
    with FakeModelServer([FakeTurn(text="5."), FakeTurn(text="5.")]) as server:
        _run(
            make_model_provider(_settings(server, "anthropic")),
            _request(ASK, CALL, empty),
            _request(ASK, two, RESULT, second),
        )
        alone, after = (request.body["messages"][-1]["content"] for request in server.requests)

    assert _marked(alone) == []
    assert [block.get("cache_control") for block in after] == [MARK, None]

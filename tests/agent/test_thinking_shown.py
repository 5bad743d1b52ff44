"""A reasoning model's thinking, shown where the user wants it: the bundled providers stream it
as :class:`ThinkingDelta` s beside the text (``reasoning_content``/``reasoning`` deltas, a
``<think>`` block that opens the text, OpenRouter's ``reasoning_details`` text, Anthropic's
``thinking_delta``; never encrypted data), the loop passes them on as events and keeps them
out of the history and the answer, ``hermes run``/``hermes chat`` show them only with
``--show-thinking`` (dimmed, escaped), ``hermes run --json`` writes them only then. Against
the test kit's ``FakeModelServer`` (the real wire formats and SDKs), the commands as
subprocesses and on a pseudo-terminal."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio
import pexpect
import pytest

from hermes_core import Config, Environment
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Finished,
    Message,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelTurn,
    TextDelta,
    ThinkingDelta,
)
from hermes_core.testing import (
    FakeModelServer,
    FakeTurn,
    HermesCli,
    make_host,
    make_model_provider,
)

pytestmark = pytest.mark.subprocess

ASK = Message("user", "Add 2 and 3.")
THOUGHT = "2 and 3 make 5, surely."
REDACTED = "EncryptedThoughtsTheClientCannotRead=="
OPENROUTER = "http://openrouter.ai/api/v1"
CLAUDE = "anthropic/claude-sonnet-4.5"
KEY = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


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


def _request(*messages: Message, model: str = "small-model") -> ModelRequest:
    return ModelRequest(model, "Be brief.", messages)


def _split(events: list[ModelEvent]) -> tuple[str, str, ModelTurn]:
    *streamed, turn = events
    assert isinstance(turn, ModelTurn)
    text = "".join(e.text for e in streamed if isinstance(e, TextDelta))
    thought = "".join(e.text for e in streamed if isinstance(e, ThinkingDelta))
    return text, thought, turn


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_an_openai_compatible_servers_reasoning_streams_as_thinking(key: str) -> None:
    turn = FakeTurn(text="It is 5.", reasoning=THOUGHT, reasoning_key=key)
    with FakeModelServer([turn, FakeTurn(text="8.")]) as server:
        first, _ = _run(
            make_model_provider(_settings(server, "openai")),
            _request(ASK),
            _request(ASK, Message("assistant", "It is 5."), Message("user", "And 3 more?")),
        )
        requests = server.requests

    text, thought, last = _split(first)
    assert (text, thought) == ("It is 5.", THOUGHT)
    assert last.message.content == "It is 5."
    assert "surely" not in json.dumps(requests[1].body)  # still never sent back


def test_a_think_block_opening_the_text_streams_as_thinking() -> None:
    turn = FakeTurn(text=f"<think>{THOUGHT}</think>\n\nIt is 5.", text_cuts=[3, 9, 20, 31])
    with FakeModelServer([turn]) as server:
        (events,) = _run(make_model_provider(_settings(server, "openai")), _request(ASK))

    text, thought, last = _split(events)
    assert (text, thought) == ("It is 5.", THOUGHT)
    assert last.message.content == "It is 5."


@pytest.mark.parametrize(
    ("text", "thought"),
    [
        ("<think>a</think>\n\nIt is 5.", "a"),
        ("\n<think>\nlong\nthought\n</think>It is 5.", "\nlong\nthought\n"),
        ("<think>cut off by the cap", "cut off by the cap"),
        ("It is 5. <think> is a tag.", ""),
        ("<thin", ""),
    ],
)
def test_think_tags_give_the_thinking_however_the_text_is_cut(text: str, thought: str) -> None:
    from plugins_builtin.openai.think_tags import ThinkTags

    for size in (1, 2, 3, 7, len(text)):
        tags = ThinkTags()
        taken = []
        for at in range(0, len(text), size):
            tags.feed(text[at : at + size])
            taken.append(tags.thought())
        tags.finish()
        taken.append(tags.thought())
        assert "".join(taken) == thought, size


def test_openrouters_reasoning_details_are_shown_once_and_kept_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OpenRouter's Claude sends each piece twice, as ``reasoning`` text and as a signed
    ``reasoning_details`` entry: shown once; the entry is still kept whole to go back."""
    turn = FakeTurn(text="It is 5.", reasoning=THOUGHT, reasoning_key="reasoning_details")
    with FakeModelServer([turn]) as server:
        monkeypatch.setenv("HTTP_PROXY", server.url)  # openrouter.ai's host, served by the fake
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        settings = ModelSettings(
            "openai", CLAUDE, base_url=OPENROUTER, api_key="sk-or-test", reasoning_effort="low"
        )
        (events,) = _run(make_model_provider(settings), _request(ASK, model=CLAUDE))

    text, thought, last = _split(events)
    assert (text, thought) == ("It is 5.", THOUGHT)
    assert [d.to_json()["text"] for d in last.message.reasoning_details] == [THOUGHT]


def test_openrouters_details_alone_show_their_text_and_summary_never_encrypted_data() -> None:
    from plugins_builtin.openai.answer import details_thought

    entries = [
        {"type": "reasoning.summary", "summary": "Adding.", "index": 0},
        {"type": "reasoning.text", "text": " 2 and 3.", "index": 1},
        {"type": "reasoning.encrypted", "data": REDACTED, "index": 2},
    ]
    assert details_thought(entries) == "Adding. 2 and 3."
    assert details_thought("no list") == ""


def test_anthropics_thinking_streams_as_thinking_and_its_redacted_data_never() -> None:
    turn = FakeTurn(text="It is 5.", reasoning=THOUGHT, redacted_thinking=REDACTED)
    with FakeModelServer([turn]) as server:
        settings = _settings(server, "anthropic", reasoning_effort="low")
        (events,) = _run(make_model_provider(settings), _request(ASK))

    text, thought, last = _split(events)
    assert (text, thought) == ("It is 5.", THOUGHT)
    assert REDACTED not in repr([e for e in events if isinstance(e, ThinkingDelta)])
    assert len(last.message.thinking) == 2  # kept to send back, as before


def test_anthropics_thinking_blocks_stream_a_paragraph_apart() -> None:
    """Interleaved thinking: several blocks in one answer, a redacted one between; their
    text is shown a paragraph apart (none before the first), the redacted data never."""
    thoughts = ("2 and 3 make five.", "Now say it.")
    turn = FakeTurn(text="It is 5.", reasoning=thoughts, redacted_thinking=REDACTED)
    with FakeModelServer([turn]) as server:
        settings = _settings(server, "anthropic", reasoning_effort="low")
        (events,) = _run(make_model_provider(settings), _request(ASK))

    text, thought, last = _split(events)
    assert (text, thought) == ("It is 5.", "2 and 3 make five.\n\nNow say it.")
    assert REDACTED not in repr([e for e in events if isinstance(e, ThinkingDelta)])
    kept = [(b.text, b.data) for b in last.message.thinking]
    assert kept == [(thoughts[0], ""), ("", REDACTED), (thoughts[1], "")]


def test_the_loop_passes_thinking_on_and_keeps_it_out_of_the_history_and_answer(
    hermes_env: Environment,
) -> None:
    turn = FakeTurn(text="", reasoning=THOUGHT)
    with FakeModelServer([turn]) as server:
        base = server.openai_base_url
        model = {"provider": "openai", "model": "small-model", "base_url": base}
        config = Config.model_validate({"model": model})
        variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
        variables["OPENAI_API_KEY"] = "sk-test"
        host = make_host(config, replace(hermes_env, variables=variables))

        async def main() -> tuple[list[AgentEvent], list[Message]]:
            agent = Agent.from_host(host)
            conversation = agent.conversation(host.new_session())
            try:
                return [e async for e in conversation.send("Add 2 and 3.")], conversation.messages
            finally:
                await conversation.aclose()
                await agent.aclose()

        try:
            events, messages = anyio.run(main)
        finally:
            host.close()

    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thought == THOUGHT
    assert "surely" not in repr(messages)
    final = events[-1]
    assert isinstance(final, Finished)
    assert (final.stop, final.text) == ("answer", "")  # the thinking is no answer text


def _configure(hermes_cli: HermesCli, server: FakeModelServer, wire: str) -> dict[str, str]:
    base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    model = {"provider": wire, "model": "fake-model", "base_url": base}
    if wire == "anthropic":
        model["reasoning_effort"] = "low"
    hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
    return hermes_cli.variables(**{KEY[wire]: "sk-fake-key-for-tests"})


def _thinking_turn() -> FakeTurn:
    return FakeTurn(text="It is 5.", reasoning=THOUGHT + "\x1b[31m")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_run_shows_no_thinking_unless_asked(hermes_cli: HermesCli, wire: str) -> None:
    with FakeModelServer([_thinking_turn(), _thinking_turn()]) as server:
        env = _configure(hermes_cli, server, wire)
        plain = hermes_cli.run("run", "Add 2 and 3.", env=env)
        as_json = hermes_cli.run("run", "--json", "Add 2 and 3.", env=env)

    assert "surely" not in plain.stdout + plain.stderr
    assert plain.stdout == "It is 5.\n"
    types = {json.loads(line)["type"] for line in as_json.stdout.splitlines()}
    assert "thinking" not in types


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_run_show_thinking_writes_it_on_stderr_and_as_json_events(
    hermes_cli: HermesCli, wire: str
) -> None:
    with FakeModelServer([_thinking_turn(), _thinking_turn()]) as server:
        env = _configure(hermes_cli, server, wire)
        plain = hermes_cli.run("run", "--show-thinking", "Add 2 and 3.", env=env)
        as_json = hermes_cli.run("run", "--json", "--show-thinking", "Add 2 and 3.", env=env)

    assert plain.stdout == "It is 5.\n"
    assert plain.stderr.startswith(THOUGHT + "\x1b[31m\n")  # not a terminal: as the answer
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    thought = "".join(e["text"] for e in events if e["type"] == "thinking")
    assert thought == THOUGHT + "\x1b[31m"
    assert events[-1]["text"] == "It is 5."


def test_chat_show_thinking_shows_it_dimmed_above_the_answer(hermes_cli: HermesCli) -> None:
    with FakeModelServer([_thinking_turn(), _thinking_turn()]) as server:
        env = _configure(hermes_cli, server, "openai")
        hidden = _chat(hermes_cli, env)
        hidden.expect_exact("you> ")
        hidden.sendline("Add 2 and 3.")
        hidden.expect_exact("It is 5.")
        hidden.expect_exact("you> ")
        assert "surely" not in (hidden.before or "")
        hidden.sendline("/exit")
        hidden.expect(pexpect.EOF)

        shown = _chat(hermes_cli, env, "--show-thinking")
        shown.expect_exact("you> ")
        shown.sendline("Add 2 and 3.")
        shown.expect_exact(f"\x1b[2m{THOUGHT}\\x1b[31m")
        shown.expect_exact("\x1b[0m")
        shown.expect_exact("It is 5.")
        shown.expect_exact("you> ")
        shown.sendline("/exit")
        shown.expect(pexpect.EOF)


def _chat(hermes_cli: HermesCli, env: dict[str, str], *options: str) -> pexpect.spawn:
    """``hermes chat`` on a pseudo-terminal (a person at a terminal)."""
    command = hermes_cli.command("chat", *options)
    return pexpect.spawn(
        command[0], command[1:], env=env, cwd=str(hermes_cli.work), encoding="utf-8", timeout=60
    )

"""The bundled model providers, ``openai`` and ``anthropic``, against a FakeModelServer speaking
their wire formats: the provider conformance suite for each (and for the example third-party
plugin), then what is particular to each: the compatibility rules of OpenAI-compatible local
servers, the Messages API's own, keys from ``$HERMES_HOME/.env``, and the SDKs kept out of
startup."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from hermes_core import Config, Environment, Host
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Finished,
    Message,
    ModelError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelTurn,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolSchema,
    http_model_error,
)
from hermes_core.plugin import ModelContext, Tool, ToolAnnotations, hookimpl
from hermes_core.testing import (
    MODEL_PROVIDER_RULES,
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    HermesCli,
    make_host,
    make_model_provider,
    model_provider_conformance,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "model_provider_plugin"
ADD = ToolSchema("add", "Add two numbers.", {"type": "object", "properties": {"a": {}, "b": {}}})


@pytest.mark.parametrize("check", model_provider_conformance(make_model_provider, "openai"))
def test_the_openai_provider_follows_the_contract(check: Callable[[], None]) -> None:
    check()


@pytest.mark.parametrize("check", model_provider_conformance(make_model_provider, "anthropic"))
def test_the_anthropic_provider_follows_the_contract(check: Callable[[], None]) -> None:
    check()


@pytest.fixture
def example_env(hermes_env: Environment) -> Environment:
    """The example plugin installed as a directory plugin of the home (bundled ones absent)."""
    shutil.copytree(EXAMPLE, hermes_env.user_plugins_dir / "httpx-chat")
    return hermes_env


@pytest.mark.parametrize(
    "rule", MODEL_PROVIDER_RULES, ids=[r.__name__.replace("_", "-") for r in MODEL_PROVIDER_RULES]
)
def test_the_example_provider_plugin_passes_the_conformance_suite(
    rule: Callable[..., None], example_env: Environment
) -> None:
    host = make_host(Config.model_validate({"plugins": {"enabled": ["httpx-chat"]}}), example_env)
    try:
        rule(host.create_model_provider, "openai", "httpx-chat")
    finally:
        host.close()


def _settings(server: FakeModelServer, provider: str = "openai", **fields: object) -> ModelSettings:
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return ModelSettings(provider, "small-model", base_url=base, **fields)  # type: ignore[arg-type]


def _run(provider: ModelProvider, request: ModelRequest) -> list[ModelEvent]:
    async def main() -> list[ModelEvent]:
        try:
            return [event async for event in provider.stream(request)]
        finally:
            await provider.aclose()

    return anyio.run(main)


def _ask(text: str = "Add 2 and 3.", tools: tuple[ToolSchema, ...] = (ADD,)) -> ModelRequest:
    return ModelRequest("small-model", "Be brief.", (Message("user", text),), tools=tools)


def test_tool_calls_left_in_the_text_become_calls_for_offered_tools_only() -> None:
    turn = FakeTurn(
        text="Let me add. ",
        tool_calls=[FakeToolCall("add", {"a": 2, "b": 3}), FakeToolCall("rm", {"path": "/"})],
        tool_calls_in_text=True,
    )
    with FakeModelServer([turn]) as server:
        events = _run(make_model_provider(_settings(server)), _ask())

    *deltas, last = events
    assert isinstance(last, ModelTurn)
    shown = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    assert shown == last.message.content
    assert "add" not in shown.replace("Let me add", "")  # the call's markup never streams
    assert '<tool_call>{"name": "rm"' in shown  # a tool nobody offered stays text
    (call,) = last.message.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("add", {"a": 2, "b": 3})
    assert call.id
    assert last.stop_reason == "tool_use"


def test_a_call_tag_split_across_chunks_is_held_back_and_found() -> None:
    from plugins_builtin.openai.text_calls import TextCalls

    calls = TextCalls(frozenset({"add"}))
    pieces = [
        "Sure <to",
        "day. <tool",
        '_call>{"name": "add", ',
        '"arguments": {"a": 1}}</tool',
        "_call> ok",
    ]

    shown = [calls.feed(piece) for piece in pieces]
    rest, found = calls.finish()

    assert shown == ["Sure ", "<today. ", "", "", ""]
    assert (rest, found) == (" ok", [("add", '{"a": 1}')])


def test_an_answer_of_many_unclosed_call_tags_is_read_in_linear_time() -> None:
    from plugins_builtin.openai.text_calls import TextCalls

    # What a model writes may be steered by what it read. A pattern looked for the closing tag
    # after every opening one: 10,000 "<tool_call>" without a close took 9 s, the GIL held.
    calls = TextCalls(frozenset({"add"}))
    for _ in range(10_000):
        assert calls.feed("<tool_call> ") in ("", "<tool_call> ")
    started = time.process_time()
    rest, found = calls.finish()
    elapsed = time.process_time() - started

    assert elapsed < 1.0, f"finding the calls took {elapsed:.1f} s"
    assert (rest, found) == ("<tool_call> " * 10_000, [])


def test_an_answer_streamed_in_many_small_pieces_is_put_together_in_linear_time() -> None:
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

    from plugins_builtin.openai.answer import Answer

    # Each piece of a call's arguments or of an OpenRouter reasoning_details entry was added to
    # the text so far, copying it: 60,000 pieces of 20 characters (1.2 MB, a long file a model
    # writes, or a server streaming its thinking a few characters a chunk) took 14 s.
    piece, count = "x" * 20, 60_000
    answer = Answer(frozenset({"write_file"}))
    started = time.process_time()
    for _ in range(count):
        answer.add_calls(
            [
                ChoiceDeltaToolCall.model_validate(
                    {"index": 0, "id": "c1", "function": {"name": "write_file", "arguments": piece}}
                )
            ]
        )
        answer.add_details([{"type": "reasoning.text", "index": 0, "text": piece}])
    turn = answer.turn([])
    elapsed = time.process_time() - started

    assert elapsed < 2.0, f"putting the answer together took {elapsed:.1f} s"
    (call,) = turn.message.tool_calls
    assert call.arguments == piece * count
    (detail,) = turn.message.reasoning_details
    assert detail.to_json() == {"type": "reasoning.text", "index": 0, "text": piece * count}


def test_a_call_written_in_the_text_in_many_small_pieces_is_read_in_linear_time() -> None:
    from plugins_builtin.openai.text_calls import TextCalls

    # The same for a call a model writes in its text (<tool_call>...</tool_call>): each piece
    # after the opening tag was added to the text held so far, copying it (8 s).
    piece, count = "x" * 20, 60_000
    calls = TextCalls(frozenset({"write_file"}))
    started = time.process_time()
    assert calls.feed('<tool_call>{"name": "write_file", "arguments": {"content": "') == ""
    for _ in range(count):
        assert calls.feed(piece) == ""
    assert calls.feed('"}}</tool_call>') == ""
    rest, found = calls.finish()
    elapsed = time.process_time() - started

    assert elapsed < 2.0, f"reading the call took {elapsed:.1f} s"
    assert (rest, found) == ("", [("write_file", json.dumps({"content": piece * count}))])


def test_a_call_nested_too_deep_to_read_stays_text_and_is_sent_back_as_no_input() -> None:
    from plugins_builtin.anthropic.provider import anthropic_messages
    from plugins_builtin.openai.text_calls import TextCalls

    # Past Python's recursion json.loads raises RecursionError, not ValueError: a call written
    # so in a model's text, or one in the history sent back to Anthropic, ended the turn.
    deep = "[" * 100_000 + "]" * 100_000
    calls = TextCalls(frozenset({"add"}))
    assert calls.feed(f"<tool_call>{deep}</tool_call>") == ""
    assert calls.finish() == (f"<tool_call>{deep}</tool_call>", [])
    history = Message("assistant", "", tool_calls=(ModelToolCall("c1", "add", deep),))
    (sent,) = anthropic_messages(ModelRequest("m", "", (history,)))
    assert sent["content"] == [{"type": "tool_use", "id": "c1", "name": "add", "input": {}}]


def test_without_tools_text_that_looks_like_a_call_is_only_text() -> None:
    turn = FakeTurn(tool_calls=[FakeToolCall("add", {"a": 1})], tool_calls_in_text=True)
    with FakeModelServer([turn]) as server:
        *_, last = _run(make_model_provider(_settings(server)), _ask(tools=()))
        body = server.requests[0].body

    assert isinstance(last, ModelTurn)
    assert last.message.tool_calls == ()
    assert last.message.content.startswith("<tool_call>")
    assert "tools" not in body
    assert "tool_choice" not in body


def test_the_openai_provider_asks_for_usage_and_takes_none() -> None:
    with FakeModelServer([FakeTurn(text="Five.", usage=None)]) as server:
        *_, last = _run(make_model_provider(_settings(server, max_output_tokens=99)), _ask())
        body = server.requests[0].body

    assert isinstance(last, ModelTurn)
    assert last.usage is None
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 99
    assert body["tool_choice"] == "auto"


def test_a_local_server_needs_no_key(hermes_env: Environment) -> None:
    with FakeModelServer([FakeTurn(text="Hi.")]) as server:
        env = replace(hermes_env, variables=_with_bundled(hermes_env))
        *_, last = _run(make_model_provider(_settings(server), env=env), _ask())
        sent = server.requests[0].api_key

    assert isinstance(last, ModelTurn)
    assert sent  # a placeholder: the SDK refuses to run without one, the server ignores it


def _with_bundled(env: Environment) -> dict[str, str]:
    return {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_the_key_comes_from_the_homes_dotenv_and_never_shows(
    provider: str, variable: str, hermes_env: Environment, hermes_home: Path
) -> None:
    (hermes_home / ".env").write_text(f"{variable}=sk-from-dotenv-42\n", encoding="utf-8")
    env = replace(hermes_env, variables=_with_bundled(hermes_env))
    with FakeModelServer([FakeTurn(text="Hi."), FakeTurn(error=401)]) as server:
        host = make_host(Config(), env)
        try:
            built = host.create_model_provider(_settings(server, provider))
            _run(built, _ask())
            with pytest.raises(ModelError) as refused:
                _run(host.create_model_provider(_settings(server, provider)), _ask())
        finally:
            host.close()
        sent = [request.api_key for request in server.requests]

    assert sent == ["sk-from-dotenv-42", "sk-from-dotenv-42"]
    assert variable in str(refused.value)
    assert "sk-from-dotenv-42" not in f"{refused.value} {refused.value!r} {built!r}"


def test_anthropic_merges_tool_results_and_a_following_user_message() -> None:
    call = ModelToolCall("toolu_1", "add", '{"a": 2, "b": 3}')
    messages = (
        Message("user", "Add 2 and 3, then tell me."),
        Message("assistant", "Adding.", tool_calls=(call,)),
        Message("tool", "5", tool_call_id="toolu_1", name="add"),
        Message("user", "And say it in words."),
    )
    request = ModelRequest("small-model", "", messages, tools=(ADD,))
    with FakeModelServer([FakeTurn(text="Five.")]) as server:
        # The prompt cache's marks aside (test_provider_cache_reasoning.py checks them).
        settings = _settings(server, "anthropic", max_output_tokens=321, prompt_cache=False)
        _run(make_model_provider(settings), request)
        body = server.requests[0].body

    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"},
        {"type": "text", "text": "And say it in words."},
    ]
    assert body["max_tokens"] == 321
    assert "system" not in body  # no empty system prompt
    assert body["tools"][0]["input_schema"] == dict(ADD.parameters)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_cut_by_the_server_is_a_retryable_error(provider: str) -> None:
    gate = threading.Event()
    # Held after the first piece of text on either wire: the server then goes away.
    server = FakeModelServer([FakeTurn(text="one two three four", gate=gate, hold_after=4)])
    server.start()
    built = make_model_provider(_settings(server, provider))

    async def main() -> tuple[list[str], BaseException | None]:
        seen: list[str] = []
        try:
            async for event in built.stream(_ask()):
                if isinstance(event, TextDelta) and not seen:
                    seen.append(event.text)
                    await anyio.to_thread.run_sync(server.close)
        except ModelError as error:
            return seen, error
        finally:
            await built.aclose()
        return seen, None

    seen, error = anyio.run(main)

    assert seen
    assert isinstance(error, ModelError)
    assert error.retryable
    assert error.status is None


def _closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (just bound and let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_not_running_at_the_base_url_is_named_with_what_to_check(provider: str) -> None:
    base = f"http://127.0.0.1:{_closed_port()}" + ("/v1" if provider == "openai" else "")
    built = make_model_provider(ModelSettings(provider, "small-model", base_url=base))

    with pytest.raises(ModelError) as raised:
        _run(built, _ask())

    message = str(raised.value)
    assert message.startswith(f"{provider}: model 'small-model' at {base}: ")
    assert "could not connect to the server" in message
    assert "check that the model server runs there" in message
    assert raised.value.retryable
    assert raised.value.status is None


def test_the_retry_wait_is_read_from_every_header_form() -> None:
    def wait(**headers: str) -> float | None:
        error = http_model_error("p", "m", status=429, headers=headers)
        return error.retry_after

    assert wait(**{"retry-after": "3"}) == 3
    assert wait(**{"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert wait(**{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0
    assert wait(**{"retry-after": "soon"}) is None
    assert http_model_error("p", "m", status=400, headers={"retry-after": "3"}).retry_after is None


def test_a_missing_sdk_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeModelServer() as server:
        module = type(make_model_provider(_settings(server))).__module__
        monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed
        monkeypatch.delitem(sys.modules, module)
        with pytest.raises(ModelError, match=re.escape("pip install 'hermes-core-agent[openai]'")):
            make_model_provider(_settings(server))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_missing_sdk_is_refused_in_the_same_words_by_the_build_and_the_ready_check(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = ModelSettings(provider, "small-model", base_url="http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, provider, None)  # as if not installed
    monkeypatch.delitem(sys.modules, f"hermes_plugins.bundled.{provider}.provider", raising=False)

    with pytest.raises(ModelError) as built:
        make_model_provider(settings)
    host = make_host()
    try:
        ready = host.registrations.select("model_provider", provider).ready
        base = host.plugin_context(host.registrations.table("model_provider")[provider].plugin)
        with pytest.raises(ModelError) as checked:
            ready(ModelContext(base.config, base.env, base.settings, model=settings))
    finally:
        host.close()

    said = (
        f"the {provider} model provider needs the {provider} package: "
        f"pip install 'hermes-core-agent[{provider}]'"
    )
    assert str(built.value) == str(checked.value) == said
    assert (checked.value.provider, checked.value.model) == (provider, "small-model")


@pytest.fixture
def cli(tmp_path: Path) -> HermesCli:
    return HermesCli(tmp_path)


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [("--version",), ("plugins", "list")])
def test_startup_imports_neither_sdk(cli: HermesCli, command: tuple[str, ...]) -> None:
    done = cli.run(*command, env=cli.variables(PYTHONPROFILEIMPORTTIME="1"))

    imported = re.findall(r"^import time:.*\|\s*(\S+)\s*$", done.stderr, re.M)
    assert "hermes_core" in imported
    assert [name for name in imported if name.split(".")[0] in ("openai", "anthropic")] == []
    if command == ("plugins", "list"):
        assert re.search(r"^\s*openai\b", done.stdout, re.M), done.stdout
        assert re.search(r"^\s*anthropic\b", done.stdout, re.M), done.stdout


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.timeout(600)
def test_the_example_plugin_passes_mypy_strict_outside_the_repository(tmp_path: Path) -> None:
    plugin = tmp_path / "model_provider_plugin"
    shutil.copytree(EXAMPLE, plugin)

    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(plugin)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_unknown_model_says_what_to_check(provider: str) -> None:
    with FakeModelServer([FakeTurn(error=404)]) as server, pytest.raises(ModelError) as refused:
        _run(make_model_provider(_settings(server, provider)), _ask())

    error = refused.value
    assert (error.status, error.retryable) == (404, False)
    assert f"{provider}: model 'small-model' at {server.url}" in str(error)
    assert "check model.model and model.base_url" in str(error)


def test_an_openai_base_url_without_v1_is_named_with_the_url_meant() -> None:
    """The slip of a first day: llama.cpp's server at http://127.0.0.1:8080, not .../v1; the
    server's 404 ("no route /chat/completions") alone left the user to guess what was wrong."""
    with FakeModelServer() as server, pytest.raises(ModelError) as refused:
        _run(make_model_provider(ModelSettings("openai", "m", base_url=server.url)), _ask())

    assert refused.value.status == 404
    assert (
        "check model.model and model.base_url (an OpenAI-compatible server's URL usually ends "
        f"in /v1: {server.url}/v1)"
    ) in str(refused.value)

    with FakeModelServer([FakeTurn(error=404)]) as server, pytest.raises(ModelError) as refused:
        _run(make_model_provider(_settings(server)), _ask())
    assert "ends in /v1" not in str(refused.value), "it ends in /v1: the model is the one to check"


@pytest.mark.parametrize(
    ("provider", "endpoint", "meant"),
    [
        ("openai", "/v1/chat/completions", "/v1"),
        ("openai", "/v1/models", "/v1"),
        ("anthropic", "/v1/messages", ""),
    ],
)
def test_a_base_url_naming_the_endpoint_itself_is_named_with_the_url_meant(
    provider: str, endpoint: str, meant: str
) -> None:
    """The slip of pasting the endpoint the vendor's page shows (.../v1/chat/completions): the
    URL meant is the one the SDK adds that path to, not that URL with /v1 added again."""
    with FakeModelServer() as server:
        made = make_model_provider(ModelSettings(provider, "m", base_url=f"{server.url}{endpoint}"))
        with pytest.raises(ModelError) as refused:
            _run(made, _ask())

    said = str(refused.value)
    assert refused.value.status == 404
    assert f": {server.url}{meant})" in said
    assert f"{endpoint}/v1)" not in said


def test_an_anthropic_base_url_ending_in_v1_is_named_with_the_url_meant() -> None:
    """The opposite slip: the anthropic SDK adds /v1 itself, so .../v1 asks for /v1/v1/messages."""
    with FakeModelServer() as server:
        provider = make_model_provider(ModelSettings("anthropic", "m", base_url=f"{server.url}/v1"))
        with pytest.raises(ModelError) as refused:
            _run(provider, _ask())

    assert refused.value.status == 404
    assert (
        "check model.model and model.base_url (the anthropic provider's URL is the host alone, "
        f"its SDK adds /v1: {server.url})"
    ) in str(refused.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_slower_than_the_timeout_names_the_setting(provider: str) -> None:
    """A small model on a slow machine: "Request timed out." alone left the user to guess
    which setting waits for it."""
    gate = threading.Event()  # never set: the model thinks forever
    with FakeModelServer([FakeTurn(text="late", gate=gate)]) as server:
        built = make_model_provider(_settings(server, provider, timeout=0.5))
        with pytest.raises(ModelError) as waited:
            _run(built, _ask())

    error = waited.value
    assert (error.status, error.retryable) == (None, True)
    assert f"{provider}: model 'small-model' at {server.url}" in str(error)
    assert "no answer within model.timeout (0.5 s)" in str(error)


class Adder:
    """A plugin with one visible tool, ``add``, for conversations over the real wire."""

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        number = {"type": "number"}
        return [
            Tool(
                "add",
                "Add two numbers.",
                {"type": "object", "properties": {"a": number, "b": number}},
                handler=lambda a, b: str(a + b),
                toolset="math",
                annotations=ToolAnnotations(read_only=True, destructive=False),
                core=True,
            )
        ]


async def _one_message(host: Host, text: str) -> list[AgentEvent]:
    """The events of one user message in a new conversation of ``host``'s agent."""
    agent = Agent.from_host(host)
    conversation = agent.conversation(host.new_session())
    try:
        return [event async for event in conversation.send(text)]
    finally:
        await conversation.aclose()
        await agent.aclose()


def test_an_answer_broken_off_by_the_server_stays_in_the_conversation_marked(
    hermes_env: Environment,
) -> None:
    """The person saw the half answer stream; the conversation (and its transcript) lost it,
    so the next message's request held no trace of what the model had said."""
    gate = threading.Event()  # never set: the server goes away mid-answer
    server = FakeModelServer([FakeTurn(text="The first half, then", gate=gate, hold_after=4)])
    server.start()
    model = {"provider": "openai", "model": "small-model", "base_url": server.openai_base_url}
    config = Config.model_validate({"model": model})
    host = make_host(config, replace(hermes_env, variables=_with_bundled(hermes_env)))

    async def main() -> tuple[list[AgentEvent], list[Message]]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session())
        events: list[AgentEvent] = []
        try:
            async for event in conversation.send("Tell me"):
                events.append(event)
                if isinstance(event, TextDelta) and len(events) == 1:
                    await anyio.to_thread.run_sync(server.close)
            return events, list(conversation.messages)
        finally:
            await conversation.aclose()
            await agent.aclose()

    try:
        events, messages = anyio.run(main)
    finally:
        host.close()
        server.close()
    end = events[-1]
    assert isinstance(end, Finished)
    assert end.stop == "error"
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert shown
    assert end.text == shown
    last = messages[-1]
    assert last.role == "assistant"
    assert last.content == shown + "\n\n[cut off here: the model request failed]"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_connection_closed_mid_answer_is_said_so_not_taken_for_no_answer(
    provider: str, hermes_env: Environment
) -> None:
    """Both SDKs wrap the dropped stream in their APIConnectionError ("Connection error."):
    the error names the address and says the answer was cut off, with the transport's reason;
    the half answer is not sent again (it was shown)."""
    gate = threading.Event()  # never set: the server goes away mid-answer
    server = FakeModelServer([FakeTurn(text="The first half, then", gate=gate, hold_after=4)])
    server.start()
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    config = Config.model_validate(
        {"model": {"provider": provider, "model": "m", "base_url": base}}
    )
    host = make_host(config, replace(hermes_env, variables=_with_bundled(hermes_env)))

    async def main() -> list[AgentEvent]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session())
        events: list[AgentEvent] = []
        try:
            async for event in conversation.send("Tell me"):
                events.append(event)
                if isinstance(event, TextDelta) and len(events) == 1:
                    await anyio.to_thread.run_sync(server.close)
            return events
        finally:
            await conversation.aclose()
            await agent.aclose()

    try:
        events = anyio.run(main)
    finally:
        host.close()
        server.close()
    end = events[-1]
    assert isinstance(end, Finished)
    assert end.stop == "error"
    assert f"{provider}: model 'm' at {base}: the connection was closed mid-answer (" in end.detail
    assert "peer closed connection" in end.detail
    assert not [event for event in events if isinstance(event, Retrying)]


@pytest.mark.parametrize(
    ("provider", "in_text"), [("openai", False), ("openai", True), ("anthropic", False)]
)
def test_a_conversation_over_the_real_wire_retries_calls_and_answers(
    provider: str, in_text: bool, hermes_env: Environment
) -> None:
    """The loop (Agent.from_host) with a bundled provider against the fake server: a 429 is
    retried after the server's wait, a tool call (in the text, as small models write it, or on
    the wire) runs through the host, and its result goes back with the call's id."""
    turns = [
        FakeTurn(error=429, retry_after=0),
        FakeTurn(
            tool_calls=[FakeToolCall("add", {"a": 2, "b": 3}, id="call_add")],
            tool_calls_in_text=in_text,
        ),
        FakeTurn(text="The sum is 5."),
    ]
    with FakeModelServer(turns) as server:
        base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        model = {"provider": provider, "model": "small-model", "base_url": base}
        config = Config.model_validate({"model": model})
        env = replace(hermes_env, variables=_with_bundled(hermes_env))
        host = make_host(config, env, plugins={"adder": Adder()})

        try:
            events = anyio.run(_one_message, host, "What is 2 + 3?")
        finally:
            host.close()
        requests = server.requests

    assert [type(e).__name__ for e in events if isinstance(e, Retrying)] == ["Retrying"]
    (result,) = [e for e in events if isinstance(e, ToolFinished)]
    assert (result.tools, result.text, result.is_error) == (("add",), "5", False)
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "The sum is 5.")
    assert len(requests) == 3
    sent = json.dumps(requests[2].messages)
    assert '"5"' in sent
    if not in_text:
        assert "call_add" in sent


def _chunk(**fields: object) -> str:
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m", **fields})


_BROKEN_OPENAI_STREAMS = {
    "choices-null": [_chunk(choices=None)],
    "delta-null": [_chunk(choices=[{"index": 0, "delta": None, "finish_reason": None}])],
    "name-a-number": [
        _chunk(
            choices=[
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"name": 5}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        )
    ],
    "content-a-number": [_chunk(choices=[{"index": 0, "delta": {"content": 5}}])],
    "a-list": ["[1, 2]"],
    "not-json": ["{not json"],
}


class BrokenModelServer(BaseHTTPRequestHandler):
    """A fake of an OpenAI-compatible model server gone wrong (no model runs here): a 200
    stream of the chunks ``self.server.chunks`` names, then ``[DONE]``."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for data in self.server.chunks:  # type: ignore[attr-defined]
            self.wfile.write(f"data: {data}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.parametrize("shape", _BROKEN_OPENAI_STREAMS)
def test_a_malformed_stream_of_the_model_server_ends_the_turn_with_an_error_naming_it(
    shape: str, hermes_env: Environment
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BrokenModelServer)
    server.chunks = _BROKEN_OPENAI_STREAMS[shape]  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    model = {"provider": "openai", "model": "small-model", "base_url": base, "max_retries": 0}
    env = replace(hermes_env, variables=_with_bundled(hermes_env))
    host = make_host(Config.model_validate({"model": model}), env)

    try:
        events = anyio.run(_one_message, host, "Hello?")
    finally:
        host.close()
        server.shutdown()
        server.server_close()

    end = events[-1]
    assert isinstance(end, Finished)
    assert end.stop == "error"
    assert f"openai: model 'small-model' at {base}: " in end.detail
    assert "the server's answer could not be read" in end.detail
    assert all(isinstance(e.text, str) for e in events if isinstance(e, TextDelta))


def test_a_malformed_answers_quoted_text_is_redacted_before_it_is_cut() -> None:
    from hermes_core.agent._requests import _malformed
    from hermes_core.agent._wire import ModelRequest

    secret = "A1b2C3d4" * 5
    request = ModelRequest(model="small-model", system="", messages=())
    for offset in range(270, 300):  # the key straddles the 300-character cut
        error = _malformed(("openai", ""), request, "x" * offset + " sk-" + secret)
        assert "A1b2" not in str(error), offset

"""A server's token counts in odd shapes: a float, a numeric string, negative, null, a bool,
absurdly large, words. Both SDKs pass on what they cannot make an int of as it is (a float
12.5, the text "many"); the ``openai`` provider then handed it to the loop, which refused the
whole answer as malformed, and the ``anthropic`` provider added it up and raised a TypeError.
A count that reads as a whole number of tokens is taken; any other is unknown, and the
answer is never lost because of it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Config, Environment
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Finished,
    ModelSettings,
    ModelTurn,
    TranscriptStore,
    Usage,
    token_count,
)
from hermes_core.testing import (
    FakeModelProvider,
    FakeModelServer,
    FakeTurn,
    fake_turn,
    make_host,
    make_model_provider,
)
from tests.agent.test_providers import _ask, _run, _settings, _with_bundled

READ = [(1234.0, 1234), ("1234", 1234), (1234, 1234), (0, 0)]
"""Counts read as a number of tokens, and the number."""

UNKNOWN = [-5, None, 12.5, "many", "", 10**15, 1e30, [3], {"n": 3}]
"""Counts read as unknown: negative, null, a fraction, words, absurd (a billion tokens and
more: no model reads or writes that many in a request), no number at all."""


def _counts(provider: str, input_tokens: Any, output_tokens: Any = 7) -> dict[str, Any]:
    if provider == "openai":
        return {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": 7,
        }
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def _turn(provider: str, counts: dict[str, Any]) -> ModelTurn:
    turn = FakeTurn(text="Five.", usage_counts=counts)
    with FakeModelServer([turn]) as server:
        *_, last = _run(make_model_provider(_settings(server, provider)), _ask())
    assert isinstance(last, ModelTurn)
    assert last.message.content == "Five."
    return last


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(("sent", "read"), READ, ids=[repr(sent) for sent, _ in READ])
def test_a_count_of_whole_tokens_is_taken_in_any_json_shape(
    provider: str, sent: Any, read: int
) -> None:
    assert _turn(provider, _counts(provider, sent)).usage == Usage(read, 7)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("sent", UNKNOWN, ids=[repr(sent)[:12] for sent in UNKNOWN])
def test_a_count_that_is_no_number_of_tokens_is_unknown_and_the_answer_kept(
    provider: str, sent: Any
) -> None:
    assert _turn(provider, _counts(provider, sent)).usage == Usage(0, 7)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_cached_count_that_is_no_number_of_tokens_is_unknown(provider: str) -> None:
    counts = _counts(provider, 100)
    if provider == "openai":
        counts["prompt_tokens_details"] = {"cached_tokens": "many"}
    else:
        counts["cache_read_input_tokens"] = -3
    assert _turn(provider, counts).usage == Usage(100, 7)


def test_an_openai_answer_with_no_count_readable_has_no_usage() -> None:
    """As a server that sent none: nothing is counted, and the loop estimates."""
    assert _turn("openai", _counts("openai", "many", None)).usage is None


def test_a_bool_count_is_the_sdks_int_and_never_breaks_the_answer() -> None:
    """Both SDKs read ``true`` as the int 1 before a provider sees it."""
    usage = _turn("openai", _counts("openai", True)).usage
    assert usage is not None
    assert type(usage.input_tokens) is int


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_unreadable_count_never_costs_the_conversation_its_answer(
    provider: str, hermes_env: Environment
) -> None:
    server = FakeModelServer([FakeTurn(text="Five.", usage_counts=_counts(provider, 12.5, "x"))])
    server.start()
    base = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    config = Config.model_validate(
        {"model": {"provider": provider, "model": "m", "base_url": base}}
    )
    host = make_host(config, replace(hermes_env, variables=_with_bundled(hermes_env)))

    async def main() -> list[AgentEvent]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session())
        try:
            return [event async for event in conversation.send("Add 2 and 3.")]
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
    assert (end.stop, end.text) == ("answer", "Five.")


COUNTS = [(3, 3), (3.0, 3), (" 3 ", 3), (True, None), (-1, None), (2.5, None), ("3.0", None)]
COUNTS += [(float("nan"), None), (float("inf"), None), (10**9, 10**9), (10**9 + 1, None)]


@pytest.mark.parametrize(("value", "read"), COUNTS)
def test_token_count_reads_a_whole_number_of_tokens_only(value: object, read: int | None) -> None:
    assert token_count(value) == read


@pytest.mark.parametrize(
    ("counts", "read"),
    [((1234.0, "7", 0), Usage(1234, 7)), (("many", 12.5, -1), Usage(0, 0)), ((9, 2, 3), None)],
)
def test_a_provider_plugins_counts_are_read_by_the_same_rule_and_the_answer_kept(
    counts: tuple[Any, Any, Any], read: Usage | None, hermes_env: Environment, tmp_path: Path
) -> None:
    """A third-party provider passing on its server's counts as they came had the loop refuse
    the whole answer as malformed ("not text, calls and token counts")."""
    usage = Usage(*counts)
    model = FakeModelProvider.scripted(fake_turn("Five.", usage=usage))
    host = make_host(Config(), hermes_env)
    agent = Agent(
        host,
        model,
        ModelSettings(provider="fake", model="fake-1"),
        transcripts=TranscriptStore(tmp_path / "sessions"),
    )

    async def main() -> list[AgentEvent]:
        conversation = agent.conversation(host.new_session())
        try:
            return [event async for event in conversation.send("Add 2 and 3.")]
        finally:
            await conversation.aclose()

    try:
        events = anyio.run(main)
    finally:
        host.close()
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "Five.")
    assert end.usage == (read or usage)

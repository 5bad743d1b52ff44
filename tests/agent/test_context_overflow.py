"""A request past the model's context window: every server's 400 is recognised as one kind of
error (``ContextOverflowError``), and the turn ends with one line naming the problem and what to
do, the transcript keeping what was sent. The real ``hermes run`` (in this process, as
``InProcessCli`` runs it), the bundled providers against the test kit's ``FakeModelServer``,
which answers each vendor's overflow 400 past its ``context_limit`` (no model runs here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core import agent
from hermes_core.agent._wire import ModelError
from hermes_core.testing import FakeModelServer, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

WORDS = "lorem ipsum dolor sit amet " * 40
"""About 270 tokens of text."""


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def configure(
    cli: InProcessCli, server: FakeModelServer, wire: str, **model: Any
) -> dict[str, str]:
    """The config of a model behind ``server`` on ``wire``; the environment with its key."""
    base_url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    config = {"model": {"provider": wire, "model": "fake-model", "base_url": base_url, **model}}
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
    return cli.variables(**{key: "sk-fake-key-for-tests"})


def stored(cli: InProcessCli) -> list[dict[str, Any]]:
    (transcript,) = (cli.home / "sessions").glob("*.jsonl")
    lines = transcript.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_overflow_ends_the_turn_with_one_line_naming_what_to_do(
    cli: InProcessCli, wire: str
) -> None:
    prompt = "Read this: " + WORDS * 30  # about 8,000 tokens
    with FakeModelServer([FakeTurn(text="never sent")], context_limit=4000) as server:
        env = configure(cli, server, wire)
        done = cli.run("run", prompt, env=env, ok=False)

    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("hermes: error:")]
    assert "longer than the model's context window" in line
    assert "model.context_length (128000)" in line
    assert "/compact" in line
    assert "new conversation" in line
    assert "4000" in line  # the server's own words: its limit
    messages = [record for record in stored(cli) if record["type"] == "message"]
    assert [(m["role"], m["content"]) for m in messages] == [("user", prompt)]


def test_an_overflow_said_only_by_the_bodys_code_is_one(cli: InProcessCli) -> None:
    """Groq's 400 says the size only in its ``code`` (``context_length_exceeded``), its message
    being "Please reduce the length of the messages or completion."."""
    groq = FakeTurn(
        error=400,
        error_message="Please reduce the length of the messages or completion.",
        error_code="context_length_exceeded",
    )
    with FakeModelServer([groq]) as server:
        env = configure(cli, server, "openai")
        done = cli.run("run", "hello", env=env, ok=False)

    (line,) = [line for line in done.stderr.splitlines() if line.startswith("hermes: error:")]
    assert "longer than the model's context window" in line
    assert "/compact" in line
    assert "Please reduce the length of the messages" in line


@pytest.mark.parametrize(
    ("status", "detail"),
    [
        (
            400,
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130512 tokens. Please reduce the length of the messages.",
        ),
        (400, "prompt is too long: 208118 tokens > 200000 maximum"),
        (
            400,
            "This model's maximum context length is 4096 tokens. However, you requested 5000 "
            "tokens (4000 in the messages, 1000 in the completion).",
        ),
        (400, "the request exceeds the available context size, try increasing it"),
        (400, "Your input exceeds the context window of this model."),
        (413, "Request exceeds the maximum allowed number of bytes."),
        (
            400,
            "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again",
        ),
        (400, "Input tokens exceed the configured limit of 272000 tokens."),
        (
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
        (
            400,
            "too many tokens: total number of tokens in the prompt cannot exceed 4081 - "
            "received 4432. Try using a shorter prompt, or enabling prompt truncating.",
        ),
        (
            400,
            "Trying to keep the first 15857 tokens when context the overflows. However, the model "
            "is loaded with context length of only 4096 tokens, which is not enough. Try to load "
            "the model with a larger context length, or provide a shorter input",
        ),
    ],
    ids=[
        "openai",
        "anthropic",
        "vllm",
        "llama.cpp",
        "openai-responses",
        "anthropic-413",
        "anthropic-with-max-tokens",
        "openai-input-limit",
        "gemini",
        "cohere",
        "lm-studio",
    ],
)
def test_each_servers_overflow_is_a_context_overflow_error(status: int, detail: str) -> None:
    error = agent.http_model_error("openai", "m", status=status, detail=detail)

    assert isinstance(error, agent.ContextOverflowError)
    assert agent.overflowed(error)
    assert not error.retryable
    assert "longer than the model's context window" in str(error)


def test_a_providers_own_overflow_error_is_recognised_by_its_words() -> None:
    """A third-party provider that builds its ``ModelError`` itself."""
    error = ModelError(
        "mine: HTTP 400: prompt is too long: 9000 tokens > 8192 maximum",
        provider="mine",
        model="m",
        status=400,
    )

    assert agent.overflowed(error)


@pytest.mark.parametrize(
    ("status", "detail"),
    [
        (400, "Invalid 'messages[2].content': expected a string."),
        (429, "maximum context length"),
        (
            400,
            "'max_tokens' or 'max_completion_tokens' is too large: 200000. This model's maximum "
            "context length is 32768 tokens and your request has 100 input tokens "
            "(200000 > 32768 - 100).",
        ),
        (
            400,
            "max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens "
            "for claude-sonnet-4-5",
        ),
        (400, "stop_sequences: too many tokens in one stop sequence"),
    ],
    ids=["bad-message", "rate-limit", "vllm-max-tokens", "anthropic-max-tokens", "stop-sequence"],
)
def test_another_refusal_is_no_overflow(status: int, detail: str) -> None:
    error = agent.http_model_error("openai", "m", status=status, detail=detail)

    assert not isinstance(error, agent.ContextOverflowError)
    assert not agent.overflowed(error)

"""The size of the next request, which decides when a conversation is compacted, starts from
what the server counted of the last one (its reported input tokens, cached or not) and adds
the estimate of only what came since; without such a count (a server that reports none, a
conversation just compacted or taken up again, tools that shrank) the whole request is
estimated. The real ``hermes chat`` (a subprocess), the bundled providers against the test
kit's ``FakeModelServer``, whose reported usage is its own count of each request (no model
runs here)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core import Config, Environment, Host
from hermes_core.agent import Agent, Conversation, Message, ModelSettings, ToolSchema, Usage
from hermes_core.agent._compaction import message_tokens, text_tokens
from hermes_core.agent._request_tools import schema_tokens
from hermes_core.testing import FakeModelProvider, FakeModelServer, fake_turn, make_host
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_model_wire import request_tokens
from hermes_core.testing._fake_provider import FakeAnswer
from tests.agent.test_compaction import answer, configure, summarising

JAPANESE = "この部分の内容を読んで、数字と要点をすべて覚えておいてください。" * 8
"""About 250 characters of Japanese: a token a character by the estimate, about one and a half
to the server (the fake counts the JSON escape of each), as real tokenizers count many of
them."""


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.mark.subprocess
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_chat_the_server_counts_larger_than_estimated_is_compacted_before_a_refusal(
    cli: InProcessCli, wire: str
) -> None:
    """Each answer reports the server's count: the estimate of the next request starts from
    it, so the conversation is compacted before a request passes the window, not after the
    server refused one (a wasted request, and a turn that looked failed)."""
    lines = "".join(f"第{number}部分: {JAPANESE}\n" for number in range(1, 16))
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server, wire)
        done = cli.subprocess_run("chat", input=lines, env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr
    refused = [request.number for request in requests if request_tokens(request.body) > 8000]
    assert refused == []
    assert [request for request in requests if summarising(request)]


# The rule in process: a real host and its tools, the model scripted (FakeModelProvider).


@pytest.fixture
def host(hermes_env: Environment) -> Iterator[Host]:
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    made = make_host(Config(), replace(hermes_env, variables=variables))
    yield made
    made.close()


def talk(host: Host, *answers: FakeAnswer) -> Conversation:
    model = FakeModelProvider.scripted(*answers)
    agent = Agent(host, model, ModelSettings(provider="fake", model="fake-1"))
    return agent.conversation(host.new_session())


def whole(conversation: Conversation, tools: Sequence[ToolSchema]) -> int:
    """The request estimated whole: the system prompt, the tools, every message."""
    messages = sum(message_tokens(message) for message in conversation.messages)
    return text_tokens(conversation.system_prompt) + schema_tokens(tools) + messages


def tools_of(conversation: Conversation) -> tuple[ToolSchema, ...]:
    return conversation.agent.tool_schemas(conversation.session)


async def say(conversation: Conversation, text: str) -> None:
    async for _ in conversation.send(text):
        pass


ANSWER = "Noted: " + "the parts so far " * 20


@pytest.mark.anyio
async def test_the_estimate_is_the_servers_count_and_the_estimate_of_what_came_since(
    host: Host,
) -> None:
    conversation = talk(host, fake_turn(ANSWER, usage=Usage(30_000, 90)))
    await say(conversation, JAPANESE)
    conversation.messages.append(Message("user", JAPANESE))
    tools = tools_of(conversation)

    since = message_tokens(conversation.messages[-2]) + message_tokens(conversation.messages[-1])
    assert conversation.compaction.estimate(tools) == 30_000 + since
    # a tool added since: its schema's estimate is added too
    added = ToolSchema("extra", "An extra tool. " * 10, {"type": "object"})
    more = conversation.compaction.estimate((*tools, added))
    assert more == 30_000 + since + schema_tokens([added])


@pytest.mark.anyio
@pytest.mark.parametrize(
    "usage",
    [None, Usage(0, 5), Usage(10, 5), Usage(10**12, 5)],
    ids=["no usage", "no input tokens", "only what the cache did not hold", "absurdly many"],
)
async def test_without_a_count_to_trust_the_request_is_estimated_whole(
    host: Host, usage: Usage | None
) -> None:
    """No usage (llama.cpp's streams), or a count under half the request's estimate: a server
    that counts only what it did not read from its cache would never let it compact. Nor a
    count absurdly many times the estimate (a server's bug): taken, every request would be due
    for compaction, the conversation summarised as soon as its older part was worth it."""
    conversation = talk(host, fake_turn(ANSWER, usage=usage))
    await say(conversation, JAPANESE)
    tools = tools_of(conversation)

    assert conversation.compaction.estimate(tools) == whole(conversation, tools)


@pytest.mark.anyio
async def test_once_compacted_the_request_is_estimated_whole_until_the_server_counts_again(
    host: Host,
) -> None:
    conversation = talk(
        host,
        fake_turn(ANSWER, usage=Usage(30_000, 90)),
        fake_turn(ANSWER, usage=Usage(30_000, 90)),
        fake_turn("GOAL: remember the parts.", usage=Usage(500, 20)),
    )
    await say(conversation, JAPANESE)
    await say(conversation, JAPANESE)
    compacted = [event async for event in conversation.compact()]
    tools = tools_of(conversation)

    assert [type(event).__name__ for event in compacted][-1] == "Compacted"
    assert conversation.compaction.estimate(tools) == whole(conversation, tools)


@pytest.mark.anyio
async def test_tools_that_lost_more_than_half_their_estimate_make_the_count_stale(
    host: Host,
) -> None:
    """Their real size is not known: subtracted as estimated, it could leave too little."""
    conversation = talk(host, fake_turn(ANSWER, usage=Usage(30_000, 90)))
    await say(conversation, JAPANESE)
    tools = tools_of(conversation)
    before = schema_tokens(tools)
    fewer = tools[: len(tools) // 2]
    while schema_tokens(fewer) * 2 >= before:
        fewer = fewer[:-1]

    assert conversation.compaction.estimate(fewer) == whole(conversation, fewer)


@pytest.mark.anyio
async def test_a_count_by_another_model_is_not_taken(host: Host) -> None:
    """The conversation's model changed since (``/model`` in ``hermes chat``): another
    tokenizer, whose count says little of this model's."""
    conversation = talk(host, fake_turn(ANSWER, usage=Usage(30_000, 90)))
    await say(conversation, JAPANESE)
    agent = conversation.agent
    agent.model = replace(agent.model, model="fake-2")
    tools = tools_of(conversation)

    assert conversation.compaction.estimate(tools) == whole(conversation, tools)

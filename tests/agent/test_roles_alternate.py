"""Every request's user and assistant messages take turns: many local servers (llama.cpp, vLLM)
render a request through the model's chat template, and Mistral's, Gemma's and Llama-2's raise
"Conversation roles must alternate user/assistant/user/assistant/..." otherwise. A compaction's
summary is a user message, and so may be the first message it keeps; a failed turn leaves the
person's message without an answer: the request joins adjacent user messages, the transcript
keeping them as they were. The real ``hermes chat`` and ``hermes run`` (in this process, as
``InProcessCli`` runs them) against the test kit's ``FakeModelServer`` made as strict as such a
template."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_requests import ROLES_MESSAGE, roles_refusal
from tests.agent.test_compaction import (
    SUMMARY,
    WORDS,
    answer,
    configure,
    records,
    sent,
    summarising,
)

pytestmark = pytest.mark.subprocess


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def big_part(number: int) -> str:
    """A message of about 2,200 tokens: past the fifth of an 8,000-token window that a
    compaction keeps whole, so the message it keeps first is the person's."""
    return f"part {number}: " + WORDS * 8


def test_a_strict_fake_server_refuses_roles_that_do_not_alternate_as_a_chat_template_does() -> None:
    user, assistant = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
    calling = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    system = {"role": "system", "content": "s"}

    assert roles_refusal("openai", {"messages": [system, user, assistant, user]}) is None
    assert roles_refusal("openai", {"messages": [user, calling, result, assistant]}) is None
    assert roles_refusal("openai", {"messages": [user, user]}) == ROLES_MESSAGE
    assert roles_refusal("openai", {"messages": [assistant, user]}) == ROLES_MESSAGE
    assert roles_refusal("openai", {"messages": [user, calling, result, user]}) == ROLES_MESSAGE


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_compaction_keeping_a_user_message_first_sends_roles_that_alternate(
    cli: InProcessCli, wire: str
) -> None:
    with FakeModelServer(responder=answer, context_limit=8000, strict_roles=True) as server:
        env = configure(cli, server, wire)
        lines = "".join(big_part(number) + "\n" for number in range(1, 5))
        done = cli.subprocess_run("chat", input=lines, env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr
    assert "alternate" not in done.stderr
    first_summary = next(request for request in requests if summarising(request))
    assert SUMMARY in sent(requests[first_summary.number])  # the request it made room for
    assert "part 4:" in sent(requests[-1])
    # the transcript keeps the summary and the person's message as two messages
    compaction = next(record for record in records(cli) if record["type"] == "compaction")
    assert compaction["kept"][0]["role"] == "user"
    assert compaction["kept"][0]["content"].startswith("part ")


def test_a_message_after_a_failed_turn_is_sent_with_the_one_left_unanswered(
    cli: InProcessCli,
) -> None:
    turns = [FakeTurn(error=400, error_message="scripted refusal"), FakeTurn(text="Both read.")]
    with FakeModelServer(turns, strict_roles=True) as server:
        env = configure(cli, server, model={"context_length": 128000})
        done = cli.subprocess_run("chat", input="first question\nsecond question\n", env=env)
        requests = server.requests

    assert "scripted refusal" in done.stderr
    assert "Both read." in done.stdout, done.stderr
    _, answered = requests
    (user,) = [m for m in answered.messages if m["role"] == "user"]
    assert user["content"] == "first question\n\nsecond question"
    stored = [r for r in records(cli) if r["type"] == "message" and r["role"] == "user"]
    assert [r["content"] for r in stored] == ["first question", "second question"]


def test_a_message_after_a_turn_stopped_at_its_tool_results_is_not_refused(
    cli: InProcessCli,
) -> None:
    """A turn that ends after its tool results, before the model answered them (here
    agent.max_turns; a stop or a failed request alike), leaves the tool results last: a
    Mistral-style template counts the next user message as a second in a row."""
    calling = FakeTurn(tool_calls=[FakeToolCall("no_such_tool", {})])
    with FakeModelServer([calling, FakeTurn(text="Done.")], strict_roles=True) as server:
        env = configure(cli, server, agent={"max_turns": 1})
        stopped = cli.subprocess_run("run", "Look it up.", env=env, ok=False)
        configure(cli, server)
        done = cli.subprocess_run("run", "--continue", "Go on.", env=env, ok=False)
        requests = server.requests

    assert "max_turns" in stopped.stderr
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done."
    roles = [m["role"] for m in requests[-1].messages if m["role"] != "system"]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    stored = [r["role"] for r in records(cli) if r["type"] == "message"]
    assert stored == ["user", "assistant", "tool", "user", "assistant"]

"""A model server that reports no token counts (docs/agent.md): the stop line said "0 tokens"
and ``hermes run --json``'s ``final`` gave 0, a count nobody made. Now the stop line says
"tokens not reported", ``final`` gives ``null`` for the counts no request reported and
``turn_unreported`` the number of such requests; a turn some of whose requests reported
counts says "at least" that many. A request that failed (no answer) still counts 0 tokens.

The real ``hermes run`` in a subprocess with the bundled ``openai`` provider against the test
kit's ``FakeModelServer`` (a scripted HTTP server)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from hermes_core.agent import Usage
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess


def run(cli: HermesCli, turns: list[FakeTurn], *args: str) -> subprocess.CompletedProcess[str]:
    with FakeModelServer(turns) as server:
        config = {
            "model": {
                "provider": "openai",
                "model": "fake-model",
                "base_url": server.openai_base_url,
            },
            "tools": {"tool_search": {"enabled": "on"}},
        }
        cli.config.write_text(json.dumps(config), encoding="utf-8")
        env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        return cli.run("run", *args, "Say hello", env=env)


def final(stdout: str) -> dict[str, Any]:
    (last,) = [
        event for line in stdout.splitlines() if (event := json.loads(line))["type"] == "final"
    ]
    return last


def test_no_counts_reported_is_said_not_shown_as_zero(hermes_cli: HermesCli) -> None:
    done = run(hermes_cli, [FakeTurn(text="Hello.", usage=None)])

    assert done.stdout == "Hello.\n"
    assert done.stderr.splitlines()[-1] == (
        "hermes: stop: answer (1 model request, tokens not reported)"
    )


def test_the_final_event_gives_null_for_counts_no_request_reported(hermes_cli: HermesCli) -> None:
    done = run(hermes_cli, [FakeTurn(text="Hello.", usage=None)], "--json")
    shown = final(done.stdout)

    assert shown["turns"] == 1
    assert shown["turn_unreported"] == 1
    for key in ("input_tokens", "output_tokens", "cached_tokens"):
        assert shown[key] is None, key
        assert shown[f"turn_{key}"] is None, key


def test_counts_some_requests_reported_are_a_lower_bound_saying_so(
    hermes_cli: HermesCli,
) -> None:
    turns = [
        FakeTurn(
            tool_calls=[FakeToolCall("tool_search", {"queries": ["x"]})], usage=Usage(100, 20)
        ),
        FakeTurn(text="Hello.", usage=None),
    ]
    done = run(hermes_cli, turns)
    shown = final(run(hermes_cli, turns, "--json").stdout)

    assert done.stderr.splitlines()[-1] == (
        "hermes: stop: answer (2 model requests, at least 120 tokens: 1 request reported none)"
    )
    assert (shown["turn_input_tokens"], shown["turn_output_tokens"]) == (100, 20)
    assert shown["turn_unreported"] == 1


def test_counts_every_request_reported_are_shown_as_before(hermes_cli: HermesCli) -> None:
    turns = [FakeTurn(text="Hello.", usage=Usage(30, 12))]
    done = run(hermes_cli, turns)
    shown = final(run(hermes_cli, turns, "--json").stdout)

    assert done.stderr.splitlines()[-1] == "hermes: stop: answer (1 model request, 42 tokens)"
    assert (shown["turn_input_tokens"], shown["turn_output_tokens"]) == (30, 12)
    assert (shown["input_tokens"], shown["output_tokens"], shown["cached_tokens"]) == (30, 12, 0)
    assert shown["turn_unreported"] == 0


def chat_usage(cli: HermesCli, turns: list[FakeTurn], typed: str | None = None) -> str:
    """The line ``/usage`` writes in a piped ``hermes chat`` after ``typed`` (one prompt per
    turn when not given)."""
    with FakeModelServer(turns) as server:
        config = {
            "model": {
                "provider": "openai",
                "model": "fake-model",
                "base_url": server.openai_base_url,
            }
        }
        cli.config.write_text(json.dumps(config), encoding="utf-8")
        env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        prompts = typed or "".join(f"prompt {n}\n" for n in range(len(turns)))
        done = cli.run("chat", input=prompts + "/usage\n", env=env)
    (line,) = [line for line in done.stderr.splitlines() if "this conversation:" in line]
    return line


def test_usage_in_a_chat_says_the_counts_were_not_reported(hermes_cli: HermesCli) -> None:
    line = chat_usage(hermes_cli, [FakeTurn(text="One.", usage=None)])

    assert line == (
        "hermes: this conversation: 1 model request, tokens not reported (subagents' included)"
    )


def test_usage_in_a_chat_says_its_counts_are_a_lower_bound(hermes_cli: HermesCli) -> None:
    turns = [FakeTurn(text="One.", usage=Usage(100, 20)), FakeTurn(text="Two.", usage=None)]
    line = chat_usage(hermes_cli, turns)

    assert line == (
        "hermes: this conversation: 2 model requests, at least 100 input tokens, 20 output "
        "tokens: 1 request reported none (subagents' included)"
    )


def test_a_summary_request_that_reported_no_counts_makes_usage_a_lower_bound(
    hermes_cli: HermesCli,
) -> None:
    # /compact's summary request counted as a request but its missing counts did not: the
    # line gave 2 requests' counts as exact for 3 requests.
    turns = [
        FakeTurn(text="One.", usage=Usage(100, 20)),
        FakeTurn(text="Two.", usage=Usage(100, 20)),
        FakeTurn(text="The summary.", usage=None),
    ]
    line = chat_usage(hermes_cli, turns, "prompt 0\nprompt 1\n/compact\n")

    assert line == (
        "hermes: this conversation: 3 model requests, at least 200 input tokens, 40 output "
        "tokens: 1 request reported none (subagents' included)"
    )

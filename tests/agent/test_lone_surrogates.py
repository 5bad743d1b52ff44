"""Text UTF-8 cannot hold (a lone surrogate: undecodable bytes read with ``surrogateescape``, a
JSON ``"\\ud800"``) in any part of a model request, end to end: the real ``hermes run`` and
``--resume`` against the test kit's ``FakeModelServer`` (both wires, their real SDKs), a real
MCP server (``tests/mcp/servers/toolbox.py``) and the real ``terminal`` tool. The request must
arrive, as UTF-8, each lone surrogate sent as U+FFFD; the transcript keeps what was said."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from agent.agent_home import toolbox_server
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

ECHO = "mcp__toolbox__echo"


def _configure(
    hermes_cli: HermesCli, server: FakeModelServer, wire: str, **more: Any
) -> dict[str, str]:
    base_url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    config = {"model": {"provider": wire, "model": "fake-model", "base_url": base_url}, **more}
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
    return hermes_cli.variables(**{key: "sk-fake-key-for-tests"})


def _sent(body: Any) -> str:
    """The request body as the text the server read (each lone surrogate would fail here)."""
    return json.dumps(body, ensure_ascii=False).encode("utf-8").decode("utf-8")


def _answer(hermes_cli: HermesCli, *args: str, env: dict[str, str]) -> str:
    """The final text of ``hermes run --json *args``, else its stderr (never the command
    itself: a report holding a lone surrogate is one pytest-xdist cannot send)."""
    done = hermes_cli.run("run", "--json", *args, env=env, ok=False)
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr}"
    return str([json.loads(line) for line in done.stdout.splitlines()][-1]["text"])


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_prompt_of_bytes_that_are_not_utf8_is_sent_and_taken_up_again(
    hermes_cli: HermesCli, wire: str
) -> None:
    # A prompt in argv with a byte that is not UTF-8 (Python reads it as the lone surrogate
    # \udcff): the request failed, "its stream raised UnicodeEncodeError".
    with FakeModelServer([FakeTurn(text="Heard."), FakeTurn(text="Again.")]) as server:
        env = _configure(hermes_cli, server, wire)
        assert _answer(hermes_cli, os.fsdecode(b"caf\xff au lait"), env=env) == "Heard."
        (transcript,) = (hermes_cli.home / "sessions").glob("*.jsonl")
        again = _answer(hermes_cli, "--resume", transcript.stem, "more", env=env)
        requests = server.requests
    assert again == "Again."
    assert len(requests) == 2
    assert "caf\ufffd au lait" in _sent(requests[0].body)
    assert "caf\ufffd au lait" in _sent(requests[1].body)  # the history, sent again
    # The transcript keeps what was said (its JSON escape), not the replacement.
    assert "caf\\udcff au lait" in transcript.read_text(encoding="utf-8")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_mcp_tool_result_holding_a_lone_surrogate_goes_back_to_the_model(
    hermes_cli: HermesCli, wire: str
) -> None:
    # The server's environment holds a byte that is not UTF-8; its env tool answers with the
    # JSON escape "\udcff", which hermes reads as a lone surrogate.
    server_entry = {**toolbox_server(), "env": {"ODD": "half \udcff here"}}
    call = FakeToolCall("mcp__toolbox__env", {"name": "ODD"})
    turns = [FakeTurn(tool_calls=[call]), FakeTurn(text="Done.")]
    with FakeModelServer(turns) as server:
        allowed = {"allow": ["mcp__toolbox__env"]}
        servers = {"toolbox": server_entry}
        env = _configure(hermes_cli, server, wire, mcp_servers=servers, approvals=allowed)
        answer = _answer(hermes_cli, "What is ODD?", env=env)
        requests = server.requests
    assert answer == "Done."
    assert len(requests) == 2
    assert "half \ufffd here" in _sent(requests[1].body)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_arguments_holding_a_lone_surrogate_reach_an_mcp_server_and_go_back_to_the_model(
    hermes_cli: HermesCli, wire: str
) -> None:
    # The model's arguments hold the JSON escape "\ud800" (valid JSON text): sending them
    # closed the MCP server's connection, and the Anthropic wire sends them back parsed.
    turns = [
        FakeTurn(tool_calls=[FakeToolCall(ECHO, '{"text": "half \\ud800 here"}')]),
        FakeTurn(text="Done."),
    ]
    with FakeModelServer(turns) as server:
        env = _configure(hermes_cli, server, wire, mcp_servers={"toolbox": toolbox_server()})
        answer = _answer(hermes_cli, "Echo it", env=env)
        requests = server.requests
    assert answer == "Done."
    assert len(requests) == 2
    assert "echo: half \ufffd here" in _sent(requests[1].body)


def test_the_terminal_printing_bytes_that_are_not_utf8_goes_back_to_the_model(
    hermes_cli: HermesCli,
) -> None:
    command = {"command": "printf 'caf\\351 \\377\\n'"}
    turns = [FakeTurn(tool_calls=[FakeToolCall("terminal", command)]), FakeTurn(text="Done.")]
    with FakeModelServer(turns) as server:
        allowed = {"allow": ["terminal:*"]}
        env = _configure(hermes_cli, server, "openai", approvals=allowed)
        answer = _answer(hermes_cli, "Print it", env=env)
        requests = server.requests
    assert answer == "Done."
    assert len(requests) == 2
    assert "caf\ufffd \ufffd" in _sent(requests[1].body)

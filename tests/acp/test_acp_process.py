"""``hermes acp`` as an editor runs it: a child process started with the SDK's
``spawn_agent_process``, speaking JSON-RPC over its stdin and stdout. The model is a fake
provider in a directory plugin of the temporary home (no model can run here), scripted from a
JSON file; a noisy plugin and a noisy command check that stdout carries nothing but
JSON-RPC."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pexpect
import pytest
from acp_client import RecordingClient

from hermes_core._cli.acp_cmd import WAITING_ON_A_TERMINAL
from hermes_core.testing import (
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    HermesCli,
    write_dir_plugin,
)
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.subprocess

BUNDLED = ["approvals", "bm25", "code_execution", "files", "skills", "terminal", "todo"]

FAKE_MODEL_PLUGIN = '''"""A fake model provider (no model can run in a test): answers from the JSON
script HERMES_FAKE_SCRIPT names. Noisy on purpose: it prints to stdout at import and when
built."""

import json
import os
from pathlib import Path

from hermes_core.plugin import ModelProviderSpec, hookimpl
from hermes_core.testing import FakeModelProvider, fake_turn

print("fakemodel: imported (this must not reach the client)")


def _answer(item):
    if isinstance(item, str):
        return item
    return fake_turn(item.get("text", ""), *[tuple(call) for call in item.get("calls", [])])


def _build(context):
    os.write(1, b"fakemodel: built (straight to descriptor 1)\\n")
    script = json.loads(Path(context.env.get("HERMES_FAKE_SCRIPT")).read_text())
    return FakeModelProvider.scripted(*[_answer(item) for item in script])


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("fake", factory=_build)]
'''


def _home(hermes_cli: HermesCli, script: list[Any]) -> dict[str, str]:
    write_dir_plugin(hermes_cli.home / "plugins", "fakemodel", FAKE_MODEL_PLUGIN)
    config = {
        "plugins": {"enabled": [*BUNDLED, "fakemodel"]},
        "model": {"provider": "fake", "model": "fake-1"},
    }
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    script_file = hermes_cli.root / "script.json"
    script_file.write_text(json.dumps(script), encoding="utf-8")
    return hermes_cli.variables(HERMES_FAKE_SCRIPT=str(script_file))


@pytest.mark.anyio
async def test_hermes_acp_as_a_child_process_runs_a_prompt_and_keeps_stdout_clean(
    hermes_cli: HermesCli,
) -> None:
    variables = _home(
        hermes_cli,
        [
            {
                "text": "Writing it.",
                "calls": [["terminal", {"command": "echo hi; echo hi > hi.txt"}]],
            },
            "Wrote hi.txt.",
        ],
    )
    wire = hermes_cli.root / "stdout.jsonl"
    command = shlex.join([*hermes_cli.command("acp")])
    # tee keeps a copy of everything hermes writes on its stdout, which the client also reads.
    shell = f"{command} | tee {shlex.quote(str(wire))}"
    # An editor's client: its terminals run the command (the capabilities reach hermes
    # through the initialize it answers before loading the SDK).
    client = RecordingClient(permission="once", terminal=True)
    with (hermes_cli.root / "stderr.log").open("wb") as stderr:
        async with acp.spawn_agent_process(
            client,
            "/bin/sh",
            "-c",
            shell,
            env=variables,
            cwd=hermes_cli.work,
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
        ) as (conn, _process):
            init = await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
            )
            with pytest.raises(acp.RequestError):
                await conn.new_session(cwd="project")
            session = await conn.new_session(cwd=str(hermes_cli.work))
            answer = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("write hi.txt")]
            )
    assert init.agent_info is not None
    assert init.agent_info.name == "hermes"
    assert answer.stop_reason == "end_turn"
    assert (hermes_cli.work / "hi.txt").read_text() == "hi\n"
    assert client.tool_statuses() == [
        ("tool_call", "pending"),
        ("tool_call_update", "in_progress"),
        ("tool_call_update", "in_progress"),  # again, once the person allowed it
        ("tool_call_update", None),  # the editor's terminal, embedded in the tool call
        ("tool_call_update", "completed"),
    ]
    assert client.text() == "Writing it.Wrote hi.txt."
    assert client.requests[0][0] == "terminal/create"
    lines = wire.read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    noise = (hermes_cli.root / "stderr.log").read_text(encoding="utf-8")
    assert "fakemodel: imported" in noise
    assert "fakemodel: built" in noise
    transcripts = list((hermes_cli.home / "sessions").glob("*.jsonl"))
    assert [path.stem for path in transcripts] == [session.session_id]


def test_hermes_acp_on_a_terminal_says_on_stderr_that_it_waits(hermes_cli: HermesCli) -> None:
    stderr = hermes_cli.root / "stderr.txt"
    # stdin and stdout are the pty; stderr goes to a file, to tell the two apart.
    command = f"exec {shlex.join(hermes_cli.command('acp'))} 2>{shlex.quote(str(stderr))}"
    child = pexpect.spawn(
        "bash",
        ["-c", command],
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=60,
    )
    try:
        # Wait for the line (a guard against a hang, not a timing check), then end it as a
        # person would: Ctrl-D, end of input on the terminal.
        give_up = time.monotonic() + 60
        while WAITING_ON_A_TERMINAL not in _text(stderr) and time.monotonic() < give_up:
            assert child.isalive(), _text(stderr)
            time.sleep(0.05)
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert _text(stderr).splitlines().count(WAITING_ON_A_TERMINAL) == 1
    assert "waiting" not in (child.before or ""), "the line went to stdout, the protocol stream"
    assert child.exitstatus == 0, child.before


def _text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


@pytest.mark.anyio
async def test_a_broken_config_is_the_error_of_session_new_not_a_dead_agent(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(
        json.dumps({"tools": {"tool_search": {"threshold_pct": 500}}}), encoding="utf-8"
    )
    failed = await _session_new_error(hermes_cli)
    assert "threshold_pct" in json.dumps(failed.data)
    assert "threshold_pct" in (hermes_cli.root / "stderr.log").read_text(encoding="utf-8")


async def _session_new_error(hermes_cli: HermesCli) -> acp.RequestError:
    """The error ``session/new`` answers a started ``hermes acp`` with (its stderr in
    ``stderr.log``), after ``initialize`` was answered."""
    with (hermes_cli.root / "stderr.log").open("wb") as stderr:
        async with acp.spawn_agent_process(
            RecordingClient(),
            *hermes_cli.command("acp"),
            env=hermes_cli.variables(),
            cwd=hermes_cli.work,
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
        ) as (conn, _process):
            init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            assert init.protocol_version == acp.PROTOCOL_VERSION
            with pytest.raises(acp.RequestError) as failed:
                await conn.new_session(cwd=str(hermes_cli.work))
    return failed.value


@pytest.mark.anyio
async def test_no_model_set_is_the_error_of_session_new_as_for_hermes_run(
    hermes_cli: HermesCli,
) -> None:
    """A first-time editor user who has not set ``model.model`` is told so by ``session/new``,
    as ``hermes run`` tells them, instead of prompts sent for model '' to OpenAI's URL."""
    with FakeModelServer([FakeTurn(text="never asked")]) as server:
        config = {"plugins": {"enabled": BUNDLED}, "model": {"base_url": server.openai_base_url}}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        failed = await _session_new_error(hermes_cli)
        requests = server.requests
    details = failed.data["details"]
    assert "model.model: no model is set" in details
    assert str(hermes_cli.config) in details
    assert "hermes config set model.model" in details
    assert requests == []
    # One line on stderr (the start failed once; it was logged once more per session/new).
    logged = (hermes_cli.root / "stderr.log").read_text(encoding="utf-8")
    assert logged.count("no model is set") == 1, logged


@pytest.mark.anyio
async def test_hermes_acp_runs_a_prompt_against_the_fake_model_server(
    hermes_cli: HermesCli,
) -> None:
    """The editor's path end to end on the real wire: ``hermes acp`` with the bundled
    ``openai`` provider against the test kit's scripted HTTP server."""
    (hermes_cli.work / "notes.txt").write_text("meeting at noon\n", encoding="utf-8")
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        FakeTurn(text="Your notes say: meeting at noon."),
    ]
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        client = RecordingClient(permission="once")
        with (hermes_cli.root / "stderr.log").open("wb") as stderr:
            async with acp.spawn_agent_process(
                client,
                *hermes_cli.command("acp"),
                env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
                cwd=hermes_cli.work,
                transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
            ) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
                )
                session = await conn.new_session(cwd=str(hermes_cli.work))
                answer = await conn.prompt(
                    session_id=session.session_id, prompt=[acp.text_block("What do my notes say?")]
                )
        # Without the model listing of the editor's model picker (test_acp_config_options.py).
        requests = [request for request in server.requests if not request.path.endswith("/models")]
    assert answer.stop_reason == "end_turn"
    assert client.text() == "Your notes say: meeting at noon."
    assert client.tool_statuses()[0] == ("tool_call", "pending")
    assert client.tool_statuses()[-1] == ("tool_call_update", "completed")
    assert len(requests) == 2
    assert requests[0].api_key == "sk-fake-key-for-tests"
    assert "meeting at noon" in json.dumps(requests[1].messages)

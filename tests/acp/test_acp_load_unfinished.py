"""``session/load`` of a session whose ``hermes acp`` ended in the middle of a tool call (the
editor quit while a permission request was open): its transcript holds the model's tool call
and no result. The model APIs refuse a history like that (OpenAI: "an assistant message with
'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"; Anthropic
likewise for a ``tool_use`` without its ``tool_result``), so the loaded session must answer the
call before the model sees it. Real ``hermes acp`` children, the SDK's client, the bundled
``openai`` provider against the test kit's model server, which refuses such a history as
OpenAI does."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import IO, TYPE_CHECKING, Any

import pytest
from acp_client import NEVER, RecordingClient

from hermes_core._acp.toolcalls import fenced
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli
from hermes_core.testing._fake_model import RecordedRequest
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

BUNDLED = ["approvals", "bm25", "files", "terminal"]
GUARD = 60.0
"""Seconds after which a step is taken as hung (a guard, not a timing check)."""


def _unanswered(messages: list[dict[str, Any]]) -> list[str]:
    """The ids of tool calls not answered by a tool message right after their assistant
    message (what the OpenAI API refuses)."""
    missing: list[str] = []
    for index, message in enumerate(messages):
        calls = [call["id"] for call in message.get("tool_calls") or []]
        answered = set()
        for later in messages[index + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        missing += [call for call in calls if call not in answered]
    return missing


def _as_openai(request: RecordedRequest) -> FakeTurn:
    missing = _unanswered(request.messages)
    if missing:
        return FakeTurn(
            error=400,
            error_message="An assistant message with 'tool_calls' must be followed by tool "
            f"messages responding to each 'tool_call_id'. Missing: {', '.join(missing)}",
        )
    if len([m for m in request.messages if m["role"] == "user"]) == 1:
        return FakeTurn(tool_calls=[FakeToolCall("terminal", {"command": "rm -rf build"})])
    return FakeTurn(text="Picking up where we were.")


def _hermes_acp(hermes_cli: HermesCli, client: RecordingClient, stderr: IO[bytes]) -> Any:
    return acp.spawn_agent_process(
        client,
        *hermes_cli.command("acp"),
        env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
        cwd=hermes_cli.work,
        transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
    )


async def _load_and_say(
    hermes_cli: HermesCli, stderr: IO[bytes], session_id: str, text: str
) -> tuple[RecordingClient, list[Any], Any]:
    """A new ``hermes acp``: ``session/load`` of ``session_id``, then ``text`` sent; the
    client, the updates of the load and the prompt's answer."""
    client = RecordingClient()
    async with _hermes_acp(hermes_cli, client, stderr) as (conn, _process):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
        )
        await conn.load_session(cwd=str(hermes_cli.work), session_id=session_id)
        loaded = list(client.updates)
        try:
            answer = await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
        except acp.RequestError as error:
            pytest.fail(f"the prompt after session/load failed: {error.data}")
    return client, loaded, answer


async def test_a_session_left_in_the_middle_of_a_tool_call_loads_and_goes_on(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer(responder=_as_openai) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        first = RecordingClient(permission=NEVER)
        stderr = (hermes_cli.root / "stderr.log").open("wb")
        async with _hermes_acp(hermes_cli, first, stderr) as (conn, process):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=first.capabilities()
            )
            session_id = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[acp.text_block("clean the build")])
            )
            await asyncio.wait_for(first.asked.wait(), GUARD)
            process.stdin.close()  # the editor quits with the question open
            await asyncio.wait_for(process.wait(), GUARD)
            with contextlib.suppress(ConnectionError, acp.RequestError):
                await asyncio.wait_for(turn, GUARD)
        again, loaded, answer = await _load_and_say(hermes_cli, stderr, session_id, "go on")
        after_load = server.requests[-1]
        # Loaded again after a turn: the call left unanswered is now in the middle.
        _, _, later = await _load_and_say(hermes_cli, stderr, session_id, "and now?")
        stderr.close()
        last = server.requests[-1]
    assert answer.stop_reason == "end_turn"
    assert again.text().endswith("Picking up where we were.")
    assert _unanswered(after_load.messages) == []
    [result] = [m for m in after_load.messages if m["role"] == "tool"]
    assert "did not finish" in result["content"]
    assert later.stop_reason == "end_turn"
    assert _unanswered(last.messages) == []
    roles = [m["role"] for m in last.messages if m["role"] != "system"]
    # the openai wire says the unfinished turn ended before the next message (UNANSWERED)
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    [call] = [u for u in loaded if u.session_update == "tool_call"]
    assert call.status == "failed"
    assert call.content[0].content.text == fenced("$ rm -rf build")  # the command, as shown live
    assert "did not finish" in call.content[-1].content.text

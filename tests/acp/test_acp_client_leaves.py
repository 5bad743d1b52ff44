"""The editor closing ``hermes acp``'s stdin in the middle of a turn (a window closed, the editor
quitting): the process ends with status 0 and writes nothing on stderr, no traceback of a task
nobody waits for any more. A real ``hermes acp`` child, the SDK's client, the bundled
``openai`` provider against the test kit's scripted model server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import TYPE_CHECKING

import pytest
from acp_client import NEVER, RecordingClient

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

BUNDLED = ["approvals", "bm25", "files", "terminal"]
GUARD = 60.0
"""Seconds after which a step is taken as hung (a guard, not a timing check)."""


async def _leave_mid_turn(
    hermes_cli: HermesCli, turns: list[FakeTurn], client: RecordingClient, midway: asyncio.Event
) -> tuple[int | None, str]:
    """Start ``hermes acp``, send a prompt, close its stdin once ``midway`` is set; its exit
    status and its whole stderr."""
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        stderr_file = hermes_cli.root / "stderr.log"
        with stderr_file.open("wb") as stderr:
            async with acp.spawn_agent_process(
                client,
                *hermes_cli.command("acp"),
                env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
                cwd=hermes_cli.work,
                transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
            ) as (conn, process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
                )
                session = await conn.new_session(cwd=str(hermes_cli.work))
                turn = asyncio.ensure_future(
                    conn.prompt(session_id=session.session_id, prompt=[acp.text_block("go on")])
                )
                await asyncio.wait_for(midway.wait(), GUARD)
                assert process.stdin is not None
                process.stdin.close()  # the editor is gone
                status = await asyncio.wait_for(process.wait(), GUARD)
                with contextlib.suppress(ConnectionError):
                    await asyncio.wait_for(turn, GUARD)
    return status, stderr_file.read_text(encoding="utf-8")


async def test_the_editor_leaving_while_the_answer_streams_ends_hermes_quietly(
    hermes_cli: HermesCli,
) -> None:
    held = threading.Event()  # never set: the answer stops after its third event
    turns = [FakeTurn(text="word " * 50, gate=held, hold_after=3)]
    client = RecordingClient()
    status, stderr = await _leave_mid_turn(hermes_cli, turns, client, client.updated)
    assert client.kinds()[0] == "agent_message_chunk"
    assert status == 0
    assert "Traceback" not in stderr, stderr
    assert "never retrieved" not in stderr, stderr


async def test_the_editor_leaving_with_a_permission_request_open_ends_hermes_quietly(
    hermes_cli: HermesCli,
) -> None:
    turns = [FakeTurn(tool_calls=[FakeToolCall("terminal", {"command": "rm -rf build"})])]
    client = RecordingClient(permission=NEVER)
    status, stderr = await _leave_mid_turn(hermes_cli, turns, client, client.asked)
    assert len(client.permissions) == 1
    assert status == 0
    assert "Traceback" not in stderr, stderr
    assert "never retrieved" not in stderr, stderr

"""``hermes acp`` as an editor runs it (a child process, the SDK's client) streaming a model's
answer that holds a lone surrogate (its JSON ``"\\ud800"``): the line was written with the
escape, which a strict JSON reader (the SDK's, serde_json's) refuses."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from acp_client import RecordingClient

from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.subprocess


@pytest.mark.anyio
async def test_an_answer_holding_a_lone_surrogate_reaches_the_editor_as_utf8(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(text="half \ud800 here")]) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
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
                    session_id=session.session_id, prompt=[acp.text_block("Say it.")]
                )
    assert answer.stop_reason == "end_turn"
    # ascii(): a report holding a lone surrogate is one pytest-xdist cannot send.
    assert ascii(client.text()) == ascii("half \ufffd here")

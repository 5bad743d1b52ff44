"""A reasoning model's thinking reaches the editor as ``agent_thought_chunk`` updates (the folded
"thinking" area of Zed and other ACP clients) as it streams, apart from the answer's
``agent_message_chunk`` s; a loaded session replays no thoughts (none are kept). ``hermes acp``
as an editor runs it (a child process), with the bundled ``openai`` provider against the test
kit's ``FakeModelServer``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

THOUGHT = "2 and 3 make 5, surely."


@asynccontextmanager
async def hermes_acp(
    hermes_cli: HermesCli, server: FakeModelServer, client: RecordingClient
) -> AsyncIterator[Any]:
    """``hermes acp`` as a child process, initialized, over ``server``'s OpenAI wire."""
    model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
    hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
    with (hermes_cli.root / "stderr.log").open("ab") as stderr:
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
            yield conn


def _texts(updates: list[Any], kind: str) -> str:
    return "".join(u.content.text for u in updates if u.session_update == kind)


async def test_the_thinking_streams_as_thought_chunks_and_a_load_replays_none(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    turn = FakeTurn(text="It is 5.", reasoning=THOUGHT, reasoning_key="reasoning")
    with FakeModelServer([turn]) as server:
        async with hermes_acp(hermes_cli, server, client) as conn:
            session = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            await conn.prompt(session_id=session, prompt=[acp.text_block("Add 2 and 3.")])
        said = list(client.updates)
        again = RecordingClient()
        async with hermes_acp(hermes_cli, server, again) as conn:
            await conn.load_session(cwd=str(hermes_cli.work), session_id=session)
        replayed = list(again.updates)

    assert _texts(said, "agent_thought_chunk") == THOUGHT
    assert _texts(said, "agent_message_chunk") == "It is 5."
    kinds = [u.session_update for u in said if u.session_update.startswith("agent_")]
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
    assert _texts(replayed, "agent_message_chunk") == "It is 5."
    assert "surely" not in _texts(replayed, "agent_thought_chunk")

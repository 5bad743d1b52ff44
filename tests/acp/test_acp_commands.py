"""The slash commands an ACP session offers: ``/compact`` and ``/usage`` are advertised with an
``available_commands_update`` after ``session/new`` and ``session/load`` (the editor offers
them as the person types ``/``), a prompt that is ``/compact`` compacts the conversation, as in
``hermes chat``, instead of being sent to the model as a message, and one that is ``/usage``
answers with the conversation's requests, tokens and context, as ``hermes chat``'s does.
``hermes acp`` as an editor runs it (a child process, the SDK's ``spawn_agent_process``), with
the bundled ``openai`` provider against the test kit's ``FakeModelServer`` (no model can run
here)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core.agent._compaction import SUMMARY_HEADER
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli, RecordedRequest
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

SUMMARY = "GOAL: read the parts. DONE: part 1. NEXT: part 2."


def answer(request: RecordedRequest) -> FakeTurn:
    if not request.tool_names and "summar" in request.system.lower():
        return FakeTurn(text=SUMMARY)
    return FakeTurn(text="Noted.")


@asynccontextmanager
async def hermes_acp(
    hermes_cli: HermesCli, server: FakeModelServer, client: RecordingClient
) -> AsyncIterator[Any]:
    """``hermes acp`` as a child process, initialized, over ``server``'s OpenAI wire."""
    model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
    config = {"plugins": {"enabled": ["files"]}, "model": model}
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
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


def model_requests(server: FakeModelServer) -> list[RecordedRequest]:
    """The requests to the model, without the model listing of the editor's model picker."""
    return [request for request in server.requests if not request.path.endswith("/models")]


async def say(conn: Any, session_id: str, text: str) -> Any:
    return await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])


async def advertised(client: RecordingClient) -> list[tuple[str, str]]:
    """The commands of the first ``available_commands_update``, waited for (it may come just
    after the answer to ``session/new``)."""
    await asyncio.wait_for(client.advertised.wait(), 30)  # a guard, not a timing check
    return [(c.name, c.description) for c in client.commands[0].available_commands]


async def test_compact_is_advertised_and_a_compact_prompt_compacts_the_conversation(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer(responder=answer) as server:
        async with hermes_acp(hermes_cli, server, client) as conn:
            session = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            commands = await advertised(client)
            await say(conn, session, "part 1: the first notes")
            await say(conn, session, "part 2: the second notes")
            client.updates.clear()
            compacted = await say(conn, session, "/compact")
            told = list(client.updates)
            await say(conn, session, "and now?")
        requests = server.requests

    assert [name for name, _ in commands] == ["compact", "usage"]
    assert "summary" in commands[0][1]
    assert compacted.stop_reason == "end_turn"
    thoughts = [u.content.text for u in told if u.session_update == "agent_thought_chunk"]
    assert any(text.startswith("Compacted 2 messages (about ") for text in thoughts), thoughts
    assert all("/compact" not in json.dumps(request.messages) for request in requests)
    last = json.dumps(requests[-1].messages)
    assert SUMMARY_HEADER[:40] in last
    assert SUMMARY in last
    assert "part 1:" not in last
    assert "part 2:" in last


async def test_compact_with_nothing_before_the_last_exchange_says_so(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer(responder=answer) as server:
        async with hermes_acp(hermes_cli, server, client) as conn:
            session = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            client.updates.clear()
            done = await say(conn, session, "/compact")
        requests = model_requests(server)

    assert done.stop_reason == "end_turn"
    assert requests == []
    assert "nothing to compact yet" in client.text().lower()


async def test_a_loaded_session_is_told_its_commands(hermes_cli: HermesCli) -> None:
    with FakeModelServer(responder=answer) as server:
        first = RecordingClient()
        async with hermes_acp(hermes_cli, server, first) as conn:
            session = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            await say(conn, session, "part 1: the first notes")
        client = RecordingClient()
        async with hermes_acp(hermes_cli, server, client) as conn:
            await conn.load_session(cwd=str(hermes_cli.work), session_id=session)
            commands = await advertised(client)

    assert [name for name, _ in commands] == ["compact", "usage"]


async def test_a_usage_prompt_answers_with_the_conversations_counts_and_context(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer(responder=answer) as server:
        async with hermes_acp(hermes_cli, server, client) as conn:
            session = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
            await say(conn, session, "part 1: the first notes")
            client.updates.clear()
            done = await say(conn, session, "/usage")
        requests = model_requests(server)

    assert done.stop_reason == "end_turn"
    assert len(requests) == 1  # /usage is no request
    said = client.text()
    assert said.startswith("This conversation: 1 model request, "), said
    assert "Context: the next request is about " in said
    assert "compacted past 102,400 (80%, agent.compact_at)" in said

"""``session/load``: a session of an earlier ``hermes acp`` taken up again from its transcript,
its history told to the client and the conversation going on from it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio
import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.testing import FakeModelProvider, fake_turn
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.anyio


async def test_a_session_is_loaded_from_its_transcript_and_goes_on(acp_env: Environment) -> None:
    (acp_env.cwd / "notes.txt").write_text("alpha\n", encoding="utf-8")
    first = FakeModelProvider.scripted(
        fake_turn("Looking.", ("read_file", {"path": "notes.txt"})),
        "It says alpha.",
    )
    async with serving(acp_env, first) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "What does notes.txt say?")

    second = FakeModelProvider.scripted("You asked about notes.txt.")
    async with serving(acp_env, second) as served:
        await served.start(acp_env.cwd)  # initialize, and another session
        served.client.updates.clear()
        await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
        replay = list(served.client.updates)
        answer = await served.say(session_id, "What did I ask?")
    assert [update.session_update for update in replay] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    assert replay[0].content.text == "What does notes.txt say?"
    call = replay[2]
    assert (call.kind, call.status, call.title) == ("read", "completed", "read_file `notes.txt`")
    assert "alpha" in call.content[0].content.text
    assert replay[3].content.text == "It says alpha."
    assert answer.stop_reason == "end_turn"
    history = [(m.role, m.content) for m in second.requests[0].messages]
    assert history[0] == ("user", "What does notes.txt say?")
    assert history[-2:] == [("assistant", "It says alpha."), ("user", "What did I ask?")]


async def test_an_unknown_or_open_session_is_not_loaded(acp_env: Environment) -> None:
    async with serving(acp_env, FakeModelProvider.scripted("Hi.")) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "hello")
        for wanted, why in (
            ("0123456789abcdef", "no transcript"),
            ("../../etc/passwd", "no transcript"),
            (session_id, "already open"),
        ):
            with pytest.raises(acp.RequestError) as refused:
                await served.conn.load_session(cwd=str(acp_env.cwd), session_id=wanted)
            assert why in json.dumps(refused.value.data)


async def test_two_loads_of_one_session_at_once_open_it_once(acp_env: Environment) -> None:
    async with serving(acp_env, FakeModelProvider.scripted("Hi.")) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "hello")
    async with serving(acp_env, FakeModelProvider.scripted("Again.")) as served:
        await served.start(acp_env.cwd)
        outcomes: list[str] = []

        async def load() -> None:
            try:
                await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
                outcomes.append("loaded")
            except acp.RequestError as refused:
                outcomes.append(json.dumps(refused.data))

        async with anyio.create_task_group() as group:
            group.start_soon(load)
            group.start_soon(load)
    assert sorted(outcomes)[0] == "loaded"
    assert "already open" in sorted(outcomes)[1]


async def test_a_failed_write_is_loaded_as_not_written(acp_env: Environment) -> None:
    """A ``write_file`` that failed wrote nothing it could name: its replay says the write
    failed and shows the text it was given, never "the text written"."""
    (acp_env.cwd / "taken").mkdir()  # a directory where the write wants a file
    first = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "taken", "content": "new text\n"})),
        "That did not work.",
    )
    async with serving(acp_env, first) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "Write taken.")
    live = [u for u in served.client.updates if u.session_update == "tool_call_update"]
    assert live[-1].status == "failed"
    error = first.requests[1].messages[-1]
    assert error.is_error

    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        await served.start(acp_env.cwd)
        served.client.updates.clear()
        await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
        call = next(u for u in served.client.updates if u.session_update == "tool_call")
    assert call.status == "failed"
    said, result = (item.content.text for item in call.content)
    assert "text written" not in said
    assert said.startswith(f"{acp_env.cwd / 'taken'}: the write failed (its error is below)")
    assert "new text" in said
    assert error.content in result

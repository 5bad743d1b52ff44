"""``session/load`` of calls that share an id: each is told with the result that followed it.
The transcript is written by the real writer (``Transcript``), as the loop writes it."""

from __future__ import annotations

import json
import uuid

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.agent import TranscriptStore
from hermes_core.agent._wire import Message, ModelToolCall
from hermes_core.testing import FakeModelProvider

pytestmark = pytest.mark.anyio


async def test_calls_of_two_turns_with_one_id_are_each_loaded_with_their_own_result(
    acp_env: Environment,
) -> None:
    """A provider may number its calls afresh each turn (``call_0`` again): each call loaded
    shows the result that followed it, not the last one of that id."""
    session_id = uuid.uuid4().hex
    transcript = TranscriptStore(acp_env.home / "sessions").open(session_id)
    transcript.start(session_id, model="fake-1", cwd=str(acp_env.cwd))
    for number, failed in ((1, False), (2, True)):
        call = ModelToolCall("call_0", "terminal", json.dumps({"command": f"echo {number}"}))
        transcript.add(Message("user", f"run {number}"))
        transcript.add(Message("assistant", "", tool_calls=(call,)))
        output = f"output of run {number}"
        transcript.add(
            Message("tool", output, tool_call_id="call_0", name="terminal", is_error=failed)
        )
        transcript.add(Message("assistant", f"Ran {number}."))

    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        await served.start(acp_env.cwd)
        served.client.updates.clear()
        await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
        calls = [u for u in served.client.updates if u.session_update == "tool_call"]
    assert [call.status for call in calls] == ["completed", "failed"]
    shown = [" ".join(item.content.text for item in call.content) for call in calls]
    assert "output of run 1" in shown[0]
    assert "output of run 2" not in shown[0]
    assert "output of run 2" in shown[1]

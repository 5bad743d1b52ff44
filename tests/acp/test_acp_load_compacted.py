"""``session/load`` of a compacted session: the client is told what the person saw (every message
of the transcript) and that the older part was compacted; the model goes on from the summary
and the messages kept, not from the whole history. The transcript is written by the real
writer (``Transcript``), as the loop writes it. A compaction during a prompt is told as a
thought."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.agent import TranscriptStore
from hermes_core.agent._compaction import SUMMARY_HEADER
from hermes_core.agent._wire import Message
from hermes_core.testing import FakeModelProvider
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.anyio


async def test_a_compacted_session_replays_what_was_seen_and_goes_on_from_its_summary(
    acp_env: Environment,
) -> None:
    session_id = uuid.uuid4().hex
    transcript = TranscriptStore(acp_env.home / "sessions").open(session_id)
    transcript.start(session_id, model="fake-1", cwd=str(acp_env.cwd))
    said = [("user", "part 1"), ("assistant", "Noted 1."), ("user", "part 2")]
    for role, text in [*said, ("assistant", "Noted 2.")]:
        transcript.add(Message(role, text))  # type: ignore[arg-type]
    summary = Message("user", f"{SUMMARY_HEADER}\n\nGOAL: read the parts.")
    transcript.compacted(2, summary, [Message("user", "part 2"), Message("assistant", "Noted 2.")])
    transcript.add(Message("user", "part 3"))
    transcript.add(Message("assistant", "Noted 3."))

    model = FakeModelProvider.scripted("Going on.")
    async with serving(acp_env, model) as served:
        await served.start(acp_env.cwd)
        served.client.updates.clear()
        await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
        replay = list(served.client.updates)
        await served.say(session_id, "and now?")

    shown = [(update.session_update, update.content.text) for update in replay]
    assert shown[:6] == [
        ("user_message_chunk", "part 1"),
        ("agent_message_chunk", "Noted 1."),
        ("user_message_chunk", "part 2"),
        ("agent_message_chunk", "Noted 2."),
        ("user_message_chunk", "part 3"),
        ("agent_message_chunk", "Noted 3."),
    ]
    ((kind, note),) = shown[6:]
    assert kind == "agent_thought_chunk"
    assert "compacted" in note
    history = [(m.role, m.content) for m in model.requests[0].messages]
    assert history == [
        ("user", f"{summary.content}\n\npart 2"),  # sent as one: roles take turns
        ("assistant", "Noted 2."),
        ("user", "part 3"),
        ("assistant", "Noted 3."),
        ("user", "and now?"),
    ]


async def test_a_compaction_during_a_prompt_is_told_as_a_thought(acp_env: Environment) -> None:
    big = "lorem ipsum " * 3500  # about 10,000 tokens: three pass 0.8 of the 32,000 window
    model = FakeModelProvider.scripted("One.", "Two.", "GOAL: read the three parts.", "Three.")
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        for number in (1, 2):
            await served.say(session_id, f"part {number}: {big}")
        served.client.updates.clear()
        answer = await served.say(session_id, f"part 3: {big}")
        updates = list(served.client.updates)

    assert answer.stop_reason == "end_turn"
    thoughts = [u.content.text for u in updates if u.session_update == "agent_thought_chunk"]
    (said,) = thoughts
    assert said.startswith("Compacted 4 messages (about ")
    assert "into a summary of " in said
    last = model.requests[-1].messages
    assert last[0].content.startswith(SUMMARY_HEADER)
    assert last[-1].role == "user"
    assert last[-1].content.endswith(f"part 3: {big}")

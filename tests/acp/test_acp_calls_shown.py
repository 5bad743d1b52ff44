"""What a tool call shows in the editor: a call the bridge's ``tool_call`` carries is shown as
the real tool's (title, kind, ``rawInput`` the real arguments), live and loaded alike; a command
run in the editor's terminal, embedded in its call, is not shown again as text below it. Real
ACP client and server over a loopback socket pair, the bundled plugins, a fake model."""

from __future__ import annotations

from typing import Any

import pytest
from acp_client import RecordingClient, serving

from hermes_core import Environment
from hermes_core._acp.toolcalls import fenced
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

DEFERRED = {"tools": {"tool_search": {"defer": ["read_file"]}}}


def _starts(client: RecordingClient) -> list[Any]:
    return [u for u in client.updates if u.session_update == "tool_call"]


async def test_a_call_through_tool_call_shows_the_real_tool_and_its_arguments_live_and_loaded(
    acp_env: Environment,
) -> None:
    """Every shape ``tool_call`` takes (``{name, arguments}``, ``calls`` as a list or as JSON
    text, arguments as JSON text) shows the real tool: its title and kind, and ``rawInput``
    the arguments the tool runs with, never the bridge's own ``{name, arguments}``; a session
    loaded from its transcript shows each call the same."""
    (acp_env.cwd / "notes.txt").write_text("alpha\n", encoding="utf-8")
    real = {"path": "notes.txt", "offset": 1}
    shapes: list[dict[str, Any]] = [
        {"name": "read_file", "arguments": real},
        {"calls": [{"name": "read_file", "arguments": real}]},
        {"calls": '[{"name": "read_file", "arguments": {"path": "notes.txt", "offset": 1}}]'},
        {"name": "read_file", "arguments": '{"path": "notes.txt", "offset": 1}'},
    ]
    model = FakeModelProvider.scripted(
        *(fake_turn("", ("tool_call", shape)) for shape in shapes), "It says alpha."
    )
    async with serving(acp_env, model, config=DEFERRED) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "read notes.txt four ways")
        live = _starts(served.client)
    assert answer.stop_reason == "end_turn"
    assert all("alpha" in request.messages[-1].content for request in model.requests[1:])
    assert [(s.title, s.kind, s.raw_input) for s in live] == [
        ("read_file `notes.txt`", "read", real)
    ] * 4
    async with serving(acp_env, FakeModelProvider.scripted("Loaded."), config=DEFERRED) as served:
        await served.start(acp_env.cwd)
        served.client.updates.clear()
        await served.conn.load_session(cwd=str(acp_env.cwd), session_id=session_id)
        loaded = _starts(served.client)
    assert [(s.title, s.kind, s.raw_input) for s in loaded] == [
        (s.title, s.kind, s.raw_input) for s in live
    ]


def _texts(content: list[Any] | None) -> list[str]:
    return [item.content.text for item in content or [] if item.type == "content"]


async def test_a_command_in_the_editors_terminal_shows_its_output_there_only(
    acp_env: Environment,
) -> None:
    """The embedded terminal shows the command's output; the finished call keeps only what the
    terminal does not show (the exit code the model reads), for a command that succeeds and one
    that fails. The model still reads the whole output."""
    model = FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": "echo from-the-editor; echo second-line"})),
        fake_turn("", ("terminal", {"command": "echo went-wrong; exit 3"})),
        "Ran them.",
    )
    client = RecordingClient(permission="once", terminal=True)
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "run them")
    assert answer.stop_reason == "end_turn"
    assert "from-the-editor\nsecond-line" in model.requests[1].messages[-1].content
    assert "went-wrong" in model.requests[2].messages[-1].content
    ends = [u for u in client.updates if u.session_update == "tool_call_update" and u.status]
    finished = [u for u in ends if u.status in ("completed", "failed")]
    assert [u.status for u in finished] == ["completed", "completed"]
    for update, output, code in zip(
        finished, ("from-the-editor", "went-wrong"), (0, 3), strict=True
    ):
        assert [item.type for item in update.content] == ["terminal", "content"]
        assert _texts(update.content) == [fenced(f"[exit code: {code}]")]
        assert not any(output in text for text in _texts(update.content))

"""Approvals through ``session/request_permission`` and ``session/cancel``: the person in the
editor sees the real tool and the whole command, and only their choice lets it run; a cancel
answers the prompt ``cancelled`` at once, and denies a question still open."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from acp_client import NEVER, RecordingClient, serving

from hermes_core import Environment
from hermes_core.agent import ModelRequest
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = pytest.mark.anyio

COMMAND = "echo made > made.txt; echo 'and a long tail that a prompt must not cut' >> made.txt"


def _shell_then_answer() -> FakeModelProvider:
    return FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": COMMAND})),
        "Done.",
    )


@pytest.mark.parametrize(
    ("choice", "runs"),
    [("once", True), ("session", True), ("always", True), ("deny", False), ("cancelled", False)],
)
async def test_a_permission_answer_decides_whether_the_command_runs(
    acp_env: Environment, choice: str, runs: bool
) -> None:
    client = RecordingClient(permission=choice)
    async with serving(acp_env, _shell_then_answer(), client=client) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "make the file")
    assert answer.stop_reason == "end_turn"
    assert (acp_env.cwd / "made.txt").exists() is runs
    [(tool_call, options)] = client.permissions
    assert tool_call.title == f"terminal: `{COMMAND}`"
    assert tool_call.kind == "execute"
    assert COMMAND in tool_call.content[0].content.text
    assert tool_call.raw_input == {"command": COMMAND}
    started = next(u for u in client.updates if u.session_update == "tool_call")
    assert tool_call.tool_call_id == started.tool_call_id
    assert [(o.option_id, o.kind) for o in options] == [
        ("once", "allow_once"),
        ("session", "allow_always"),
        ("always", "allow_always"),
        ("deny", "reject_once"),
    ]
    final = client.tool_statuses()[-1]
    assert final == ("tool_call_update", "completed" if runs else "failed")


async def test_a_session_answer_is_not_asked_again(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": "echo one >> log.txt"})),
        fake_turn("", ("terminal", {"command": "echo one >> log.txt"})),
        "Twice.",
    )
    client = RecordingClient(permission="session")
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "twice")
    assert len(client.permissions) == 1
    assert (acp_env.cwd / "log.txt").read_text() == "one\none\n"


async def test_a_file_write_is_asked_with_its_diff(acp_env: Environment) -> None:
    (acp_env.cwd / "app.py").write_text("print('old')\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "app.py", "content": "print('new')\n"})),
        "Rewritten.",
    )
    client = RecordingClient(permission="deny")
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "rewrite app.py")
    [(tool_call, _)] = client.permissions
    assert tool_call.kind == "edit"
    diff = next(item for item in tool_call.content if item.type == "diff")
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(acp_env.cwd / "app.py"),
        "print('old')\n",
        "print('new')\n",
    )
    assert (acp_env.cwd / "app.py").read_text() == "print('old')\n"


async def test_cancel_during_a_slow_model_step_answers_cancelled_at_once(
    acp_env: Environment,
) -> None:
    streaming = asyncio.Event()

    def slow(request: ModelRequest) -> str:
        streaming.set()
        return "A very long answer that streams slowly, word after word, forever."

    model = FakeModelProvider(responder=slow, delay=30.0, chunk=4)
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        prompt = asyncio.ensure_future(served.say(session_id, "tell me everything"))
        await streaming.wait()
        cancelled_at = time.monotonic()
        await served.conn.cancel(session_id=session_id)
        answer = await asyncio.wait_for(prompt, timeout=10)
        waited = time.monotonic() - cancelled_at
        # The session goes on: the next prompt runs.
        model.responder = None
        model.answers.append("Fine.")
        model.delay = 0
        again = await served.say(session_id, "short then")
    assert answer.stop_reason == "cancelled"
    assert waited < 5  # a 30 s chunk was cut: the acceptance's 1 s is benchmarks/acp_start.py's
    assert again.stop_reason == "end_turn"


async def test_cancel_while_permission_is_pending_denies_and_nothing_runs(
    acp_env: Environment,
) -> None:
    client = RecordingClient(permission=NEVER)
    async with serving(acp_env, _shell_then_answer(), client=client) as served:
        session_id = await served.start(acp_env.cwd)
        prompt = asyncio.ensure_future(served.say(session_id, "make the file"))
        await client.asked.wait()
        await served.conn.cancel(session_id=session_id)
        answer = await asyncio.wait_for(prompt, timeout=10)
    assert answer.stop_reason == "cancelled"
    assert not (acp_env.cwd / "made.txt").exists()
    assert client.tool_statuses()[-1] == ("tool_call_update", "failed")


async def test_an_always_answer_is_saved_to_the_config(acp_env: Environment) -> None:
    client = RecordingClient(permission="always")
    async with serving(acp_env, _shell_then_answer(), client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "make the file")
    saved = Path(acp_env.home / "config.yaml").read_text(encoding="utf-8")
    assert "terminal" in saved


async def test_a_command_hiding_its_end_behind_a_carriage_return_is_shown_whole(
    acp_env: Environment,
) -> None:
    hidden = "echo harmless\r; touch pwned.txt"
    model = FakeModelProvider.scripted(fake_turn("", ("terminal", {"command": hidden})), "Ok.")
    client = RecordingClient(permission="deny")
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "run it")
    [(tool_call, _)] = client.permissions
    assert tool_call.title == "terminal: `echo harmless\\r; touch pwned.txt`"
    assert "\r" not in tool_call.content[0].content.text
    assert "touch pwned.txt" in tool_call.content[0].content.text
    assert not (acp_env.cwd / "pwned.txt").exists()

"""A client that offers its file system and terminals: ``write_file`` and ``patch`` write
through ``fs/write_text_file``, ``terminal`` runs through ``terminal/create``, after the same
checks, approvals and hooks as hermes' own writes and commands. The recording client carries
the requests out on the real disk and with real processes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient, serving

from hermes_core import Environment, Session
from hermes_core.plugin import ActivityEvent, ToolCall, hookimpl
from hermes_core.testing import FakeModelProvider, fake_turn
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.anyio


class Watcher:
    """Records what the hooks and the activity log see."""

    def __init__(self) -> None:
        self.pre: list[str] = []
        self.activity: list[str] = []

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.pre.append(call.name)

    @hookimpl
    def hermes_tool_activity(self, event: ActivityEvent) -> None:
        self.activity.append(event.name)


def _editor(permission: str = "once") -> RecordingClient:
    return RecordingClient(permission=permission, fs=True, terminal=True)


async def test_write_file_goes_through_fs_write_text_file(acp_env: Environment) -> None:
    watcher = Watcher()
    model = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "docs/notes.md", "content": "# Notes\n"})),
        "Written.",
    )
    client = _editor()
    async with serving(acp_env, model, client=client, plugins={"watcher": watcher}) as served:
        session_id = await served.start(acp_env.cwd)
        (acp_env.cwd / "docs").mkdir()
        answer = await served.say(session_id, "write notes")
    target = acp_env.cwd / "docs" / "notes.md"
    assert answer.stop_reason == "end_turn"
    assert client.requests == [
        ("fs/write_text_file", {"path": str(target), "content": "# Notes\n"})
    ]
    assert target.read_text() == "# Notes\n"
    assert len(client.permissions) == 1
    assert watcher.pre == ["write_file"]
    assert watcher.activity == ["write_file"]
    done = [u for u in client.updates if u.session_update == "tool_call_update"][-1]
    assert done.status == "completed"
    assert [item.type for item in done.content] == ["diff", "content"]
    assert "created docs/notes.md (8 bytes)" in done.content[1].content.text


async def test_patch_writes_the_edited_file_through_the_client(acp_env: Environment) -> None:
    (acp_env.cwd / "app.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn("", ("patch", {"path": "app.py", "old_text": "y = 2", "new_text": "y = 3"})),
        "Patched.",
    )
    client = _editor()
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "bump y")
    app = str(acp_env.cwd / "app.py")
    assert client.requests == [
        ("fs/read_text_file", {"path": app}),
        ("fs/write_text_file", {"path": app, "content": "x = 1\ny = 3\n"}),
    ]
    assert "patched app.py at line 2" in model.requests[1].messages[-1].content


async def test_unsaved_changes_in_the_editor_are_read_and_patched(acp_env: Environment) -> None:
    (acp_env.cwd / "app.py").write_text("x = 1\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn("", ("read_file", {"path": "app.py"})),
        fake_turn("", ("patch", {"path": "app.py", "old_text": "y = 2", "new_text": "y = 3"})),
        "Patched the unsaved line.",
    )
    client = _editor()
    client.buffers[str(acp_env.cwd / "app.py")] = "x = 1\ny = 2  # typed, not saved\n"
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "bump the y I just typed")
    assert "y = 2  # typed, not saved" in model.requests[1].messages[-1].content
    assert (acp_env.cwd / "app.py").read_text() == "x = 1\ny = 3  # typed, not saved\n"


async def test_a_denied_or_outside_write_never_reaches_the_client(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "../outside.txt", "content": "no"})),
        fake_turn("", ("write_file", {"path": "inside.txt", "content": "no"})),
        "Refused twice.",
    )
    client = _editor(permission="deny")
    async with serving(
        acp_env, model, client=client, config={"approvals": {"allow": []}}
    ) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "write both")
    assert client.requests == []
    assert not (acp_env.cwd.parent / "outside.txt").exists()
    assert not (acp_env.cwd / "inside.txt").exists()
    results = [m for m in model.requests[-1].messages if m.role == "tool"]
    assert all(result.is_error for result in results)


async def test_terminal_runs_through_terminal_create_and_is_embedded(
    acp_env: Environment,
) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": "echo from-the-editor; pwd"})),
        "Ran it.",
    )
    client = _editor()
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "run it")
    assert answer.stop_reason == "end_turn"
    methods = [method for method, _ in client.requests]
    assert methods == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    created = client.requests[0][1]
    assert created["args"] == ["-c", "echo from-the-editor; pwd"]
    assert created["command"].endswith("sh")
    assert created["cwd"] == str(acp_env.cwd)
    result = model.requests[1].messages[-1].content
    assert "from-the-editor" in result
    assert str(acp_env.cwd) in result
    assert result.endswith("[exit code: 0]")
    embedded = [
        item
        for update in client.updates
        if update.session_update == "tool_call_update" and update.content
        for item in update.content
        if item.type == "terminal"
    ]
    assert embedded
    assert embedded[0].terminal_id == "term-1"
    assert client.tool_statuses()[-1] == ("tool_call_update", "completed")


async def test_without_the_capabilities_hermes_writes_and_runs_itself(
    acp_env: Environment,
) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "here.txt", "content": "local\n"})),
        fake_turn("", ("terminal", {"command": "cat here.txt"})),
        "Done.",
    )
    client = RecordingClient(permission="once")
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "write then read")
    assert client.requests == []
    assert (acp_env.cwd / "here.txt").read_text() == "local\n"
    assert "local" in model.requests[2].messages[-1].content


async def test_cancel_kills_a_command_running_in_the_editor(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": "echo started; sleep 60"})),
        "Never reached.",
    )
    client = _editor()
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        prompt = asyncio.ensure_future(served.say(session_id, "wait a minute"))
        await _embedded(client)
        await served.conn.cancel(session_id=session_id)
        answer = await asyncio.wait_for(prompt, timeout=20)
    assert answer.stop_reason == "cancelled"
    methods = [method for method, _ in client.requests]
    assert methods[0] == "terminal/create"
    assert "terminal/kill" in methods
    assert methods[-1] == "terminal/release"
    assert client.terminals["term-1"].process.returncode is not None
    assert client.tool_statuses()[-1] == ("tool_call_update", "failed")


async def _embedded(client: RecordingClient) -> None:
    """Until the agent has embedded the editor's terminal in its tool call."""
    while not any(
        update.session_update == "tool_call_update" and update.content for update in client.updates
    ):
        await client.updated.wait()
        client.updated.clear()


class RefusingEditor(RecordingClient):
    """An editor that fails ``fs/read_text_file`` as Zed's fails it (an internal error whose
    ``data`` is the reason, as a string) and ``fs/write_text_file`` as the Python SDK's does."""

    async def read_text_file(self, session_id: str, path: str, **kwargs: object) -> Any:
        raise acp.RequestError(-32603, "Internal error", f"{path}: the buffer is read-only")

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        raise OSError(f"{path}: no space left on the device")  # the SDK sends {"details"}


async def test_a_client_that_fails_a_read_or_a_write_is_named_with_its_reason(
    acp_env: Environment,
) -> None:
    """The reason the editor gives (JSON-RPC ``data``: a string from Zed, ``{"details"}`` from
    the SDK) and the path reach the model and the person, not a bare "Internal error"."""
    (acp_env.cwd / "notes.txt").write_text("alpha\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn(
            "",
            ("read_file", {"path": "notes.txt"}),
            ("write_file", {"path": "new.txt", "content": "x\n"}),
        ),
        "Failed.",
    )
    client = RefusingEditor(permission="once", fs=True)
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "read and write")
    read, write = (message.content for message in model.requests[1].messages[-2:])
    assert read.startswith("read_file: the client could not read notes.txt: Internal error: ")
    assert "the buffer is read-only" in read
    assert write.startswith("write_file: the client could not write new.txt: Internal error: ")
    assert "no space left on the device" in write


async def test_a_write_through_the_client_into_a_new_directory_is_made_as_hermes_makes_it(
    acp_env: Environment,
) -> None:
    """hermes' own ``write_file`` creates the missing directories; through the editor (which
    may not: ``fs/write_text_file`` only writes a file) the model reads the same result."""
    model = FakeModelProvider.scripted(
        fake_turn("", ("write_file", {"path": "new dir/sub/notes.md", "content": "# N\n"})),
        "Written.",
    )
    client = _editor()
    async with serving(acp_env, model, client=client) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "write notes")
    target = acp_env.cwd / "new dir" / "sub" / "notes.md"
    assert client.requests == [("fs/write_text_file", {"path": str(target), "content": "# N\n"})]
    assert target.read_text(encoding="utf-8") == "# N\n"
    assert "created new dir/sub/notes.md" in model.requests[1].messages[-1].content

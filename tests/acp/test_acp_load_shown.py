"""``session/load`` shows each tool call as the live turn showed it: the same title, kind,
locations, arguments and status, an edit's diff, a command's ``$ cmd`` line, then its result.
What the transcript does not hold is said, not invented: a write that replaced a file shows
the text written, as its earlier text was not kept. Real ``hermes acp`` children, the SDK's
client, the bundled ``openai`` provider against the test kit's model server."""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core._acp.toolcalls import fenced
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

BUNDLED = ["approvals", "bm25", "files", "terminal"]
SHOWN = ("title", "kind", "status", "locations", "raw_input", "content")


def _hermes_acp(hermes_cli: HermesCli, client: RecordingClient, stderr: IO[bytes]) -> Any:
    return acp.spawn_agent_process(
        client,
        *hermes_cli.command("acp"),
        env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
        cwd=hermes_cli.work,
        transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
    )


def _calls(updates: list[Any]) -> list[dict[str, Any]]:
    """Each tool call as the editor ends up showing it: its ``tool_call`` with every later
    ``tool_call_update``'s fields laid over it (ACP: a field sent replaces the one shown)."""
    calls: dict[str, dict[str, Any]] = {}
    for update in updates:
        if update.session_update not in ("tool_call", "tool_call_update"):
            continue
        fields = update.model_dump(exclude_none=True, exclude={"session_update", "field_meta"})
        calls.setdefault(update.tool_call_id, {}).update(fields)
    return [{key: call.get(key) for key in SHOWN} for call in calls.values()]


async def test_a_loaded_session_shows_its_tool_calls_as_they_were_shown_live(
    hermes_cli: HermesCli,
) -> None:
    work = hermes_cli.work
    (work / "app.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    calls = [
        FakeToolCall("write_file", {"path": "notes.md", "content": "# Notes\n"}),
        FakeToolCall("write_file", {"path": "app.py", "content": "x = 1\ny = 2\nz = 3\n"}),
        FakeToolCall("patch", {"path": "app.py", "old_text": "y = 2", "new_text": "y = 4"}),
        FakeToolCall("terminal", {"command": "echo ran > ran.txt; echo done"}),
    ]
    turns = [FakeTurn(text="Editing.", tool_calls=calls), FakeTurn(text="Edited.")]
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        live = RecordingClient(permission="once")
        with (hermes_cli.root / "stderr.log").open("wb") as stderr:
            async with _hermes_acp(hermes_cli, live, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=live.capabilities()
                )
                session_id = (await conn.new_session(cwd=str(work))).session_id
                answer = await conn.prompt(
                    session_id=session_id, prompt=[acp.text_block("edit and run")]
                )
            loaded = RecordingClient()
            async with _hermes_acp(hermes_cli, loaded, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=loaded.capabilities(),
                )
                await conn.load_session(cwd=str(work), session_id=session_id)
    assert answer.stop_reason == "end_turn"
    assert (work / "app.py").read_text(encoding="utf-8") == "x = 1\ny = 4\nz = 3\n"
    shown, replayed = _calls(live.updates), _calls(loaded.updates)
    assert [call["status"] for call in shown] == ["completed"] * 4
    created, replaced, patched, command = shown
    assert [item["type"] for item in created["content"]] == ["diff", "content"]
    assert created["content"][0].get("old_text") is None  # a new file
    assert replaced["content"][0]["old_text"] == "x = 1\ny = 2\n"
    assert (patched["content"][0]["old_text"], patched["content"][0]["new_text"]) == (
        "y = 2",
        "y = 4",
    )
    assert command["content"][0]["content"]["text"] == fenced("$ echo ran > ran.txt; echo done")
    assert "done" in command["content"][-1]["content"]["text"]
    # The replay: everything alike but the replaced file's earlier text, which was not kept.
    assert len(replayed) == 4
    for index in (0, 2, 3):
        assert replayed[index] == shown[index]
    again = replayed[1]
    assert {key: again[key] for key in SHOWN if key != "content"} == {
        key: replaced[key] for key in SHOWN if key != "content"
    }
    note, result = again["content"]
    assert note["type"] == "content"
    assert "earlier text was not kept" in note["content"]["text"]
    assert note["content"]["text"].endswith(fenced("x = 1\ny = 2\nz = 3\n"))
    assert result == replaced["content"][-1]


def _bridged(name: str, arguments: dict[str, Any]) -> FakeToolCall:
    """A call of ``name`` made through the bridge's ``tool_call``."""
    return FakeToolCall("tool_call", {"name": name, "arguments": arguments})


async def test_a_write_through_tool_call_is_loaded_as_a_direct_write_is(
    hermes_cli: HermesCli,
) -> None:
    """``write_file`` deferred, so the model reaches it with ``tool_call``: the replay unwraps
    the bridge as the live turn did. The write that created its file shows the diff shown
    live (all of it new), not the note for a replaced file; the one that replaced a file
    shows that note."""
    work = hermes_cli.work
    (work / "app.py").write_text("x = 1\n", encoding="utf-8")
    calls = [
        _bridged("write_file", {"path": "notes.md", "content": "# Notes\n"}),
        _bridged("write_file", {"path": "app.py", "content": "x = 2\n"}),
    ]
    turns = [FakeTurn(text="Writing.", tool_calls=calls), FakeTurn(text="Written.")]
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {
            "plugins": {"enabled": BUNDLED},
            "model": model,
            "tools": {"tool_search": {"defer": ["write_file"]}},
        }
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        live = RecordingClient(permission="once")
        with (hermes_cli.root / "stderr.log").open("wb") as stderr:
            async with _hermes_acp(hermes_cli, live, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=live.capabilities()
                )
                session_id = (await conn.new_session(cwd=str(work))).session_id
                answer = await conn.prompt(session_id=session_id, prompt=[acp.text_block("write")])
            loaded = RecordingClient()
            async with _hermes_acp(hermes_cli, loaded, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=loaded.capabilities(),
                )
                await conn.load_session(cwd=str(work), session_id=session_id)
    assert answer.stop_reason == "end_turn"
    assert (work / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    shown, replayed = _calls(live.updates), _calls(loaded.updates)
    assert [call["status"] for call in shown] == ["completed"] * 2, shown
    created, replaced = shown
    assert created["title"] == "write_file `notes.md`"
    assert created["kind"] == "edit"
    assert [item["type"] for item in created["content"]] == ["diff", "content"]
    assert created["content"][0].get("old_text") is None  # a new file
    assert replaced["content"][0]["old_text"] == "x = 1\n"
    assert len(replayed) == 2
    assert replayed[0] == created
    note, result = replayed[1]["content"]
    assert "earlier text was not kept" in note["content"]["text"]
    assert result == replaced["content"][-1]


def _texts(content: list[Any]) -> list[str]:
    return [item.content.text for item in content if item.type == "content"]


async def test_a_command_in_the_editors_terminal_is_not_shown_again_beside_it(
    hermes_cli: HermesCli,
) -> None:
    """The editor offers its terminal: the command runs in it, embedded in the call, and the
    editor shows that terminal with its command and output, so the call's content holds no
    ``$ cmd`` line beside it (before the terminal exists it does, as without one) and, once
    it has ended, not the output again: only the exit code. Loaded later, with no terminal to
    show, the call shows its ``$ cmd`` line and the whole result again."""
    command = "echo from-the-editor"
    turns = [
        FakeTurn(text="Running.", tool_calls=[FakeToolCall("terminal", {"command": command})]),
        FakeTurn(text="Ran."),
    ]
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        live = RecordingClient(permission="once", terminal=True)
        with (hermes_cli.root / "stderr.log").open("wb") as stderr:
            async with _hermes_acp(hermes_cli, live, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION, client_capabilities=live.capabilities()
                )
                session_id = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
                answer = await conn.prompt(session_id=session_id, prompt=[acp.text_block("run")])
            loaded = RecordingClient()
            async with _hermes_acp(hermes_cli, loaded, stderr) as (conn, _process):
                await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=loaded.capabilities(),
                )
                await conn.load_session(cwd=str(hermes_cli.work), session_id=session_id)
    assert answer.stop_reason == "end_turn"
    assert live.requests[0][0] == "terminal/create"
    contents = [
        update.content
        for update in live.updates
        if update.session_update in ("tool_call", "tool_call_update") and update.content
    ]
    assert fenced(f"$ {command}") in _texts(contents[0])  # the pending call: no terminal yet
    with_terminal = [c for c in contents if any(item.type == "terminal" for item in c)]
    assert with_terminal
    for content in with_terminal:
        assert fenced(f"$ {command}") not in _texts(content), content
    [call] = _calls(live.updates)
    assert call["status"] == "completed"
    assert [item["type"] for item in call["content"]] == ["terminal", "content"]
    assert call["content"][1]["content"]["text"] == fenced("[exit code: 0]")
    [again] = _calls(loaded.updates)
    assert again["content"][0]["content"]["text"] == fenced(f"$ {command}")
    assert again["content"][1]["content"]["text"] == fenced("from-the-editor\n[exit code: 0]")

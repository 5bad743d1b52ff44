"""A tool call's status around ``session/request_permission``, as an editor following the
updates shows it: ACP's ``pending`` is "awaiting approval" (the permission request's
``toolCall`` says so), ``in_progress`` is "running". A call the person allows is running again
before it completes; a denied one fails without running. A real ``hermes acp`` child, the
SDK's client, the bundled ``openai`` provider against the test kit's scripted model server."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
    from acp import schema
else:  # imported at first use: every pytest worker collects this file
    acp, schema = Imported("acp"), Imported("acp.schema")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

BUNDLED = ["approvals", "bm25", "files", "terminal"]


@dataclass
class Timeline(RecordingClient):
    """A client that also keeps, in the order received, the status each update and each
    permission request gives the tool call (what an editor shows for it)."""

    statuses: list[tuple[str, str | None]] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update in ("tool_call", "tool_call_update"):
            self.statuses.append((update.session_update, update.status))
        await super().session_update(session_id, update, **kwargs)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.statuses.append(("request_permission", tool_call.status))
        return await super().request_permission(session_id, tool_call, options, **kwargs)


@pytest.mark.parametrize(
    ("choice", "after"),
    [
        ("once", [("tool_call_update", "in_progress"), ("tool_call_update", "completed")]),
        ("session", [("tool_call_update", "in_progress"), ("tool_call_update", "completed")]),
        ("deny", [("tool_call_update", "failed")]),
    ],
)
async def test_an_allowed_call_is_in_progress_again_once_the_person_allowed_it(
    hermes_cli: HermesCli, choice: str, after: list[tuple[str, str]]
) -> None:
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("terminal", {"command": "echo made > made.txt"})]),
        FakeTurn(text="Done."),
    ]
    client = Timeline(permission=choice)
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"plugins": {"enabled": BUNDLED}, "model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
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
                    session_id=session.session_id, prompt=[acp.text_block("make the file")]
                )
    assert answer.stop_reason == "end_turn"
    assert (hermes_cli.work / "made.txt").exists() is (choice != "deny")
    asked = client.statuses.index(("request_permission", "pending"))
    assert client.statuses[asked + 1 :] == after

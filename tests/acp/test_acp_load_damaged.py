"""``session/load`` of a transcript a crash or a hand damaged. A process killed while it wrote
a message leaves the last line cut: that message is lost (transcripts promise no more) and the
session loads with the rest. A line that is no message elsewhere refuses the load, naming the
file and the line, with no traceback on stderr. Real ``hermes acp`` children, the SDK's client,
the bundled ``openai`` provider against the test kit's model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

BUNDLED = ["approvals", "bm25", "files", "terminal"]


def _hermes_acp(hermes_cli: HermesCli, client: RecordingClient, stderr: IO[bytes]) -> Any:
    return acp.spawn_agent_process(
        client,
        *hermes_cli.command("acp"),
        env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
        cwd=hermes_cli.work,
        transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
    )


async def _session(hermes_cli: HermesCli, server: FakeModelServer, stderr: IO[bytes]) -> Path:
    """A session of one exchange, made by a first ``hermes acp``; its transcript."""
    model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
    config = {"plugins": {"enabled": BUNDLED}, "model": model}
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    client = RecordingClient()
    async with _hermes_acp(hermes_cli, client, stderr) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session_id = (await conn.new_session(cwd=str(hermes_cli.work))).session_id
        await conn.prompt(session_id=session_id, prompt=[acp.text_block("the port is 6543")])
    return hermes_cli.home / "sessions" / f"{session_id}.jsonl"


async def _load(
    hermes_cli: HermesCli, transcript: Path, stderr: IO[bytes]
) -> tuple[RecordingClient, Any]:
    """``session/load`` of ``transcript``'s session in a new ``hermes acp``, then a prompt;
    the client and the prompt's answer."""
    client = RecordingClient()
    async with _hermes_acp(hermes_cli, client, stderr) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        await conn.load_session(cwd=str(hermes_cli.work), session_id=transcript.stem)
        answer = await conn.prompt(session_id=transcript.stem, prompt=[acp.text_block("and?")])
    return client, answer


async def test_a_last_line_cut_by_a_crash_is_lost_and_the_session_loads(
    hermes_cli: HermesCli,
) -> None:
    turns = [FakeTurn(text="Noted."), FakeTurn(text="Still 6543.")]
    with (
        FakeModelServer(turns) as server,
        (hermes_cli.root / "stderr.log").open("wb") as stderr,
    ):
        transcript = await _session(hermes_cli, server, stderr)
        with transcript.open("a", encoding="utf-8") as cut:
            cut.write('{"type": "message", "time": 1796583921.2, "role": "us')
        client, answer = await _load(hermes_cli, transcript, stderr)
        last = server.requests[-1]
    assert answer.stop_reason == "end_turn"
    told = [u.session_update for u in client.updates[:2]]
    assert told == ["user_message_chunk", "agent_message_chunk"]
    assert [m["content"] for m in last.messages if m["role"] != "system"] == [
        "the port is 6543",
        "Noted.",
        "and?",
    ]


async def test_a_damaged_line_refuses_the_load_naming_the_file_and_the_line(
    hermes_cli: HermesCli,
) -> None:
    with (
        FakeModelServer([FakeTurn(text="Noted.")]) as server,
        (hermes_cli.root / "stderr.log").open("wb") as stderr,
    ):
        transcript = await _session(hermes_cli, server, stderr)
        lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[1] = '{"type": "message", "role": \n'  # a hand's edit
        transcript.write_text("".join(lines), encoding="utf-8")
        with pytest.raises(acp.RequestError) as refused:
            await _load(hermes_cli, transcript, stderr)
    assert refused.value.code == -32602
    said = json.dumps(refused.value.data)
    assert str(transcript) in said
    assert "line 2" in said
    assert "Traceback" not in (hermes_cli.root / "stderr.log").read_text(encoding="utf-8")


async def test_a_subagents_transcript_is_refused_naming_its_parent(
    hermes_cli: HermesCli,
) -> None:
    # As hermes chat --resume refuses it: a child's conversation went on in its parent's,
    # which holds its result; taken up alone it would be a conversation nobody held.
    with (
        FakeModelServer([FakeTurn(text="Noted."), FakeTurn(text="Again.")]) as server,
        (hermes_cli.root / "stderr.log").open("wb") as stderr,
    ):
        transcript = await _session(hermes_cli, server, stderr)
        lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
        header = json.loads(lines[0])
        lines[0] = json.dumps({**header, "parent": "0123abcd"}) + "\n"
        transcript.write_text("".join(lines), encoding="utf-8")
        with pytest.raises(acp.RequestError) as refused:
            await _load(hermes_cli, transcript, stderr)
    assert refused.value.code == -32602
    said = json.dumps(refused.value.data)
    assert "subagent" in said
    assert "0123abcd" in said

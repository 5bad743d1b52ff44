"""``session/load`` of a big transcript: a conversation compacted many times is told to the
client and taken up without holding the whole file. ``hermes acp`` as a real child process
driven by the SDK's client; the transcript written by the real writer (:class:`Transcript`);
the child's peak memory is the kernel's usage of that process alone (``wait4``, in a small
parent that runs it on the client's pipes)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from acp_client import RecordingClient

from hermes_core.testing import HermesCli
from hermes_core.testing._imported import Imported
from tests.acp.test_acp_process import _home
from tests.agent.test_cli_resume_big import MiB, compacted_often
from tests.agent.test_cli_sessions import write

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

# Runs its arguments on its own stdin and stdout and writes their peak resident memory (KiB).
MEASURED = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


async def loaded_peak(
    hermes_cli: HermesCli, variables: dict[str, str], session: str
) -> tuple[int, RecordingClient]:
    """``hermes acp`` loading ``session``: its peak resident memory in bytes and the client."""
    peak = hermes_cli.root / f"peak-{session}"
    client = RecordingClient()
    with (hermes_cli.root / f"stderr-{session}.log").open("wb") as stderr:
        async with acp.spawn_agent_process(
            client,
            sys.executable,
            "-c",
            MEASURED,
            str(peak),
            *hermes_cli.command("acp"),
            env=variables,
            cwd=hermes_cli.work,
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 60.0},
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
            )
            await conn.load_session(cwd=str(hermes_cli.work), session_id=session)
    return int(peak.read_text()) * 1024, client


async def test_loading_a_big_compacted_transcript_keeps_memory_flat(
    hermes_cli: HermesCli,
) -> None:
    variables = _home(hermes_cli, [])  # never asked: no prompt is sent
    write(hermes_cli, "aaa111", "the start", "ok")
    path = write(hermes_cli, "bbb222", "the start", "ok")
    exchanges = compacted_often(path, 48 * MiB)
    floor, _ = await loaded_peak(hermes_cli, variables, "aaa111")
    peak, client = await loaded_peak(hermes_cli, variables, "bbb222")
    assert peak - floor < 16 * MiB, f"{peak - floor} bytes more than a small one's"
    kinds = [update.session_update for update in client.updates]
    assert kinds.count("user_message_chunk") == exchanges + 1
    assert kinds.count("agent_message_chunk") == exchanges + 1
    told = [update.content.text for update in client.updates]
    assert told[-2:] == ["the last question", "the last answer"]

"""A tool's progress reports (``report_progress``) are shown in its tool call while it runs."""

from __future__ import annotations

import pytest
from acp_client import serving

from hermes_core import Config, Environment
from hermes_core._acp.toolcalls import fenced
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl, report_progress
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = pytest.mark.anyio


class Slowpoke:
    """A tool of the ``files`` toolset (granted to ACP sessions) that reports each step."""

    @hookimpl
    def hermes_tools(self, config: Config, env: Environment) -> list[Tool]:
        def crunch(steps: int) -> str:
            for step in range(1, steps + 1):
                report_progress(step, steps, f"file {step} of {steps}")
            return f"crunched {steps} files"

        return [
            Tool(
                "crunch",
                "Crunch files, reporting each.",
                {"type": "object", "properties": {"steps": {"type": "integer"}}},
                handler=crunch,
                toolset="files",
                annotations=ToolAnnotations(read_only=True, destructive=False),
                core=True,
            )
        ]


async def test_progress_reports_are_shown_in_the_running_tool_call(
    acp_env: Environment,
) -> None:
    model = FakeModelProvider.scripted(fake_turn("", ("crunch", {"steps": 3})), "Crunched.")
    async with serving(acp_env, model, plugins={"slowpoke": Slowpoke()}) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "crunch three")
        updates = [u for u in served.client.updates if u.session_update == "tool_call_update"]
    shown = [u.content[-1].content.text for u in updates if u.status is None and u.content]
    assert shown
    assert shown[-1] == fenced("file 3 of 3")
    assert [u.status for u in updates][-1] == "completed"
    assert updates[-1].content[-1].content.text == fenced("crunched 3 files")

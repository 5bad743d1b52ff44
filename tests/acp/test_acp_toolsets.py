"""The ``hermes-acp`` grant: an ACP session sees the file, terminal, execute_code, delegation
and tool-search tools, and not what does not fit an editor (``todo_list`` here, messaging,
cron, ``clarify``, the connectors' ``manage_connections``)."""

from __future__ import annotations

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = pytest.mark.anyio


async def test_an_acp_session_gets_the_hermes_acp_tools_only(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("todo_list", {"items": [{"content": "x", "status": "pending"}]})),
        "No todo list here.",
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "plan it")
    offered = {schema.name for schema in model.requests[0].tools}
    assert {"read_file", "write_file", "patch", "search_files", "terminal", "execute_code"} <= (
        offered
    )
    assert not offered & {"todo_list", "manage_connections", "clarify", "send_message", "cron"}
    refused = model.requests[1].messages[-1]
    assert refused.is_error
    assert "todo_list" in refused.content

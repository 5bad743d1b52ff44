"""A listing with tools hermes cannot use: a real server (``servers/badtools.py``) lists, next
to good tools, one that breaks the MCP schema. The good tools register; the bad one is skipped
with one warning, in one line, naming the server, the tool and what is wrong; the tool manifest
stays valid. A listing that is not a listing at all makes the server unavailable with a reason
in one line."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from realservers import ToolsSeen, badtools_entry, call, wait_until

from hermes_core._config import Config, McpServerConfig
from hermes_core._host import Host
from hermes_core._mcp import McpSupervisor
from hermes_core._mcp.startup import McpStartup
from hermes_core._paths import Environment

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

OBJECT = {"type": "object", "properties": {}}
GOOD = [{"name": "ok", "inputSchema": OBJECT}, {"name": "also_ok", "inputSchema": OBJECT}]


def listing(tmp_path: Path, tools: Any) -> Path:
    path = tmp_path / "listing.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


def with_bad(bad: dict[str, Any]) -> list[dict[str, Any]]:
    """The good tools with ``bad`` between them (at index 1)."""
    return [GOOD[0], bad, GOOD[1]]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def nested(levels: int) -> dict[str, Any]:
    """An input schema nested ``levels`` objects deep (``properties`` within ``properties``)."""
    schema: dict[str, Any] = {}
    for _ in range(levels // 2):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


BAD_TOOLS = [
    pytest.param(
        {"description": "nameless", "inputSchema": OBJECT},
        "tools[1] (no name)",
        "name",
        id="no-name",
    ),
    pytest.param(
        {"name": "", "inputSchema": OBJECT}, "tools[1] (no name)", "name", id="empty-name"
    ),
    pytest.param(
        {"name": "nope", "inputSchema": "nope"}, "'nope'", "inputSchema", id="schema-not-an-object"
    ),
    pytest.param(
        {"name": "req", "inputSchema": {"type": "object", "required": "x"}},
        "'req'",
        "required",
        id="required-not-a-list",
    ),
    pytest.param(
        {"name": "deep", "inputSchema": nested(194)},
        "'deep'",
        "inputSchema",
        id="schema-194-deep",
    ),
    # server-everything's simulate-research-query: it runs only as a task (MCP 2025-11-25),
    # which hermes cannot start, and every call answered "-32601 ... requires task
    # augmentation" while search offered the tool to the model.
    pytest.param(
        {"name": "task_only", "inputSchema": OBJECT, "execution": {"taskSupport": "required"}},
        "'task_only'",
        "execution.taskSupport",
        id="task-required",
    ),
]


ERAS = [pytest.param(False, id="2026-07-28"), pytest.param(True, id="2025-11-25")]


@pytest.mark.parametrize("legacy", ERAS)
@pytest.mark.parametrize(("bad", "named", "field"), BAD_TOOLS)
async def test_a_tool_that_breaks_the_schema_is_skipped_with_one_warning_the_others_register(
    env: Environment,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    bad: dict[str, Any],
    named: str,
    field: str,
    legacy: bool,
) -> None:
    seen = ToolsSeen()
    entry = badtools_entry(listing(tmp_path, with_bad(bad)), legacy=legacy)
    with caplog.at_level(logging.WARNING):
        async with McpSupervisor({"bad": entry}, env, on_tools_changed=seen) as mcp:
            status = mcp.status()["bad"]
            assert (status.state, status.protocol_version) == (
                "connected",
                "2025-11-25" if legacy else "2026-07-28",
            )
            assert seen.names("bad") == ["mcp__bad__also_ok", "mcp__bad__ok"]
            answer = await call(seen.tool("mcp__bad__ok"))
    assert answer.text_content == "called ok"
    warned = warnings_of(caplog)
    assert len(warned) == 1, warned
    (warning,) = warned
    assert "'bad'" in warning
    assert named in warning
    assert field in warning
    assert "\n" not in warning
    assert "pydantic" not in warning
    assert "cannot connect" not in warning


async def test_a_tool_skipped_again_when_the_server_is_listed_again_is_warned_about_once(
    env: Environment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # server-everything says its tools changed right after it is listed: each command that
    # started it printed the same warning twice (20 lines for 10 such servers).
    seen = ToolsSeen()
    bad = {"name": "nope", "inputSchema": "nope"}
    entry = badtools_entry(listing(tmp_path, with_bad(bad)), changed=True)
    with caplog.at_level(logging.WARNING):
        async with McpSupervisor({"bad": entry}, env, on_tools_changed=seen):
            await wait_until(lambda: "mcp__bad__later" in seen.names("bad"), "the second listing")
    warned = warnings_of(caplog)
    assert len(warned) == 1, warned
    assert "'nope'" in warned[0]


async def test_a_tool_with_an_empty_name_leaves_the_manifest_valid(
    env: Environment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entry = badtools_entry(listing(tmp_path, with_bad({"name": "", "inputSchema": OBJECT})))
    config = Config.model_validate({"mcp_servers": {"bad": entry.model_dump()}})
    read_only = McpStartup(read_only=True)
    async with Host(config, env, mcp_startup=read_only) as host:
        assert host.mcp_status()["bad"].state == "connected"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        async with Host(config, env, mcp_startup=read_only) as host:
            assert host.mcp_status()["bad"].state == "known"
            tools = sorted(tool.name for tool in host.registry if tool.name.startswith("mcp__"))
    assert tools == ["mcp__bad__also_ok", "mcp__bad__ok"]
    assert warnings_of(caplog) == []


async def test_a_listing_that_is_not_a_list_makes_the_server_unavailable_with_a_one_line_reason(
    env: Environment, tmp_path: Path
) -> None:
    entry: McpServerConfig = badtools_entry(listing(tmp_path, "nope"))
    async with McpSupervisor({"bad": entry}, env) as mcp:
        status = mcp.status()["bad"]
    assert status.state == "unavailable"
    reason = status.reason or ""
    assert reason.startswith("cannot connect: ")
    assert reason.count("cannot connect") == 1
    assert "tools" in reason
    assert "\n" not in reason
    assert "pydantic.dev" not in reason

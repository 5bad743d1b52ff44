"""Tool manifests that cannot be trusted, through a real ``Host`` and real servers: a
truncated, corrupt or wrong-version manifest is ignored with one warning naming its file, the
server is connected as if there were none and its manifest written again; nothing else
changes (the tools, the other server's manifest)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from realservers import toolbox_entry

from hermes_core._config import Config, McpServerConfig
from hermes_core._host import Host
from hermes_core._mcp.manifests import MANIFEST_FORMAT, ManifestStore
from hermes_core._mcp.startup import McpStartup
from hermes_core._paths import Environment

pytestmark = pytest.mark.anyio

SERVERS = {"box": toolbox_entry(), "toolbox": toolbox_entry()}
READ_ONLY = McpStartup(read_only=True)


def config_of(servers: dict[str, McpServerConfig]) -> Config:
    return Config.model_validate(
        {"mcp_servers": {name: entry.model_dump() for name, entry in servers.items()}}
    )


async def started(env: Environment) -> tuple[dict[str, str], list[str]]:
    """Start a read-only host on :data:`SERVERS`: each server's state, and the MCP tools."""
    async with Host(config_of(SERVERS), env, mcp_startup=READ_ONLY) as host:
        states = {name: status.state for name, status in host.mcp_status().items()}
        tools = sorted(tool.name for tool in host.registry if tool.name.startswith("mcp__"))
        return states, tools


def truncated(text: str) -> str:
    return text[: len(text) // 2]


def corrupt(text: str) -> str:
    return "\x00\x9c" + text[::-1]


def wrong_version(text: str) -> str:
    data = json.loads(text)
    data["format"] = MANIFEST_FORMAT + 1
    return json.dumps(data)


@pytest.mark.slow
@pytest.mark.parametrize("spoil", [truncated, corrupt, wrong_version])
async def test_a_bad_manifest_is_ignored_with_one_warning_and_rebuilt_nothing_else_changes(
    env: Environment, caplog: pytest.LogCaptureFixture, spoil: Callable[[str], str]
) -> None:
    store = ManifestStore(env.cache_dir / "mcp")
    _, tools_before = await started(env)  # both servers listed and their manifests written
    box_file = store.path("box", SERVERS["box"])
    toolbox_file = store.path("toolbox", SERVERS["toolbox"])
    toolbox_bytes = toolbox_file.read_bytes()
    box_file.write_text(spoil(box_file.read_text(encoding="utf-8")), encoding="utf-8")

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        states, tools_after = await started(env)

    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert str(box_file) in warnings[0].getMessage()
    assert "is ignored" in warnings[0].getMessage()
    # The server the bad file stood for was connected; the other one answered from its own.
    assert states == {"box": "connected", "toolbox": "known"}
    assert tools_after == tools_before
    rebuilt = store.load("box", SERVERS["box"])
    assert rebuilt is not None
    assert rebuilt.tools is not None
    assert toolbox_file.read_bytes() == toolbox_bytes


@pytest.mark.subprocess
async def test_a_manifest_of_another_entry_is_never_read(env: Environment) -> None:
    store = ManifestStore(env.cache_dir / "mcp")
    await started(env)
    moved = {**SERVERS, "box": toolbox_entry(env={"HERMES_TEST_NOTE": "moved"})}
    assert store.path("box", moved["box"]) != store.path("box", SERVERS["box"])
    assert store.load("box", moved["box"]) is None


async def test_a_cache_that_cannot_be_written_changes_nothing_but_a_warning(
    env: Environment, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would be", encoding="utf-8")
    variables = {**env.variables, "HERMES_CACHE_DIR": str(blocked)}
    with caplog.at_level(logging.WARNING):
        states, tools = await started(replace(env, variables=variables))
    assert states == {"box": "connected", "toolbox": "connected"}
    assert "mcp__box__echo" in tools
    # One warning naming the file, not one per server read and written ("File exists").
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"{blocked} is not a directory, so hermes keeps no cache files under it this run; nothing "
        "is lost (the file is left as it is, and what they would hold is made again): move the "
        "file, or set HERMES_CACHE_DIR to a directory"
    ]


async def test_a_manifest_saved_before_the_schema_cap_is_not_read_for_a_tool_over_it(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A manifest written by a hermes-core without the cap may hold a 3 MB schema; reading does
    # not check schemas again, so such a file must not be read: the server is asked once more.
    from hermes_core._mcp import manifests

    store = ManifestStore(env.cache_dir / "mcp")
    await started(env)
    current = store.path("box", SERVERS["box"])
    data = json.loads(current.read_text(encoding="utf-8"))
    current.unlink()
    huge = {
        "type": "object",
        "properties": {f"f{i}": {"type": "string", "description": "d" * 1_000} for i in range(200)},
    }
    data["tools"].append({"name": "huge", "description": "Too large.", "inputSchema": huge})
    with monkeypatch.context() as before_the_cap:
        before_the_cap.setattr(manifests, "MANIFEST_FORMAT", 1)
        data["format"], data["key"] = 1, manifests.manifest_key(SERVERS["box"])
        store.path("box", SERVERS["box"]).write_text(json.dumps(data), encoding="utf-8")

    states, tools = await started(env)

    assert "mcp__box__huge" not in tools
    assert states == {"box": "connected", "toolbox": "known"}

"""Real servers as tools: the PyPI time and git servers, npm's server-everything and the local
toolbox, registered through ``on_tools_changed`` and called through the Tool handler."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from realservers import (
    ToolsSeen,
    call,
    everything_entry,
    time_entry,
    toolbox_entry,
)

from hermes_core._config import McpServerConfig
from hermes_core._mcp import McpSupervisor
from hermes_core._mcp.results import TOOL_ERROR
from hermes_core._mcp.supervisor import FILTERED
from hermes_core._paths import Environment

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def test_time_server_tools_are_registered_as_mcp_tools(env: Environment) -> None:
    seen = ToolsSeen()
    entry = time_entry(timeout=30, connect_timeout=20)
    async with McpSupervisor({"time": entry}, env, on_tools_changed=seen):
        assert seen.names("time") == ["mcp__time__convert_time", "mcp__time__get_current_time"]
        tool = seen.tool("mcp__time__get_current_time")
        assert (tool.toolset, tool.source, tool.source_name) == ("mcp-time", "mcp", "time")
        assert tool.meta["mcp_name"] == "get_current_time"
        assert tool.timeout > 20 + 30  # the wait for its start, then the call
        assert "timezone" in tool.parameters["properties"]
        result = await call(tool, timezone="UTC")
    assert not result.is_error
    assert result.structured["timezone"] == "UTC"
    assert '"timezone": "UTC"' in result.text_content


async def test_time_server_annotations_are_kept(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"time": time_entry()}, env, on_tools_changed=seen):
        hints = seen.tool("mcp__time__convert_time").annotations
    assert (hints.read_only, hints.destructive, hints.idempotent, hints.open_world) == (
        True,
        False,
        True,
        False,
    )


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=Test"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    (repo / "README").write_text("hello\n", encoding="utf-8")
    subprocess.run([*git, "-C", str(repo), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "first"], check=True)
    return repo


async def test_git_server_tools_are_called_through_the_handler(
    env: Environment, git_repo: Path
) -> None:
    entry = McpServerConfig(
        command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(git_repo)]
    )
    seen = ToolsSeen()
    async with McpSupervisor({"git": entry}, env, on_tools_changed=seen):
        assert {"mcp__git__git_status", "mcp__git__git_log", "mcp__git__git_reset"} <= set(
            seen.names("git")
        )
        assert seen.tool("mcp__git__git_reset").annotations.destructive
        assert not seen.tool("mcp__git__git_status").annotations.destructive
        (git_repo / "new.txt").write_text("x\n", encoding="utf-8")
        status = await call(seen.tool("mcp__git__git_status"), repo_path=str(git_repo))
        log = await call(seen.tool("mcp__git__git_log"), repo_path=str(git_repo))
    assert not status.is_error
    assert "new.txt" in status.text_content
    assert "first" in log.text_content


async def test_everything_server_of_the_older_protocol_era_is_normalized(
    env: Environment,
) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"everything": everything_entry()}, env, on_tools_changed=seen) as mcp:
        assert mcp.status()["everything"].protocol_version == "2025-11-25"
        assert "mcp__everything__get-structured-content" in seen.names()
        assert seen.tool("mcp__everything__echo").toolset == "mcp-everything"
        echo = await call(seen.tool("mcp__everything__echo"), message="hello")
        structured = await call(
            seen.tool("mcp__everything__get-structured-content"), location="New York"
        )
        image = await call(seen.tool("mcp__everything__get-tiny-image"))
    assert echo.text_content == "Echo: hello"
    assert set(structured.structured) >= {"temperature", "conditions", "humidity"}
    assert [block["type"] for block in image.content].count("image") == 1
    image_block = next(block for block in image.content if block["type"] == "image")
    assert image_block["mimeType"] == "image/png"
    assert image_block["data"]


async def test_all_pages_of_the_listing_are_registered(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, env, on_tools_changed=seen):
        names = seen.names("box")
    # toolbox.py lists two tools per page: seven tools are four pages.
    assert names == sorted(
        f"mcp__box__{n}"
        for n in ("echo", "add", "sleep", "fail", "env", "header", "delete_everything")
    )


async def test_missing_destructive_hint_counts_as_destructive(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, env, on_tools_changed=seen):
        assert seen.tool("mcp__box__add").annotations.destructive
        assert seen.tool("mcp__box__add").annotations.open_world
        assert not seen.tool("mcp__box__echo").annotations.destructive


async def test_structured_content_and_text_become_one_result(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, env, on_tools_changed=seen):
        result = await call(seen.tool("mcp__box__add"), a=2, b=40)
    assert (result.text_content, result.structured, result.is_error) == ("42", {"sum": 42}, False)


async def test_tool_error_result_is_an_error_result(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, env, on_tools_changed=seen):
        result = await call(seen.tool("mcp__box__fail"))
    assert result.is_error
    assert result.error_code == TOOL_ERROR
    assert result.error_message == "this tool always fails"


async def test_filtered_tool_is_neither_listed_nor_callable(env: Environment) -> None:
    entry = toolbox_entry(include=["e*", "add", "fail"], exclude=["env", "fa*"])
    seen = ToolsSeen()
    async with McpSupervisor({"box": entry}, env, on_tools_changed=seen) as mcp:
        assert seen.names("box") == ["mcp__box__add", "mcp__box__echo"]
        refused = await mcp.call_tool("box", "fail", {})
        excluded = await mcp.call_tool("box", "env", {"name": "PATH"})
        by_name = mcp.refusal_for("mcp__box__sleep")
        status = mcp.status()["box"]
    assert refused.error_code == FILTERED
    assert "'fail'" in (refused.error_message or "")
    assert "filtered out" in (refused.error_message or "")
    assert "exclude pattern 'fa*'" in (refused.error_message or "")
    assert "exclude pattern 'env'" in (excluded.error_message or "")
    assert by_name is not None
    assert by_name.error_code == FILTERED
    assert (status.tool_count, status.filtered_count) == (2, 5)


async def test_pattern_matching_nothing_is_warned_about(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    entry = toolbox_entry(include=["echo", "no_such_*"])
    with caplog.at_level(logging.WARNING, logger="hermes_core._mcp"):
        async with McpSupervisor({"box": entry}, env) as mcp:
            status = mcp.status()["box"]
    assert status.unmatched_patterns == ("no_such_*",)
    assert any(
        "'no_such_*' matches none" in record.getMessage() and "box" in record.getMessage()
        for record in caplog.records
    )


async def test_stdio_child_gets_expanded_env_and_not_the_parent_environment(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_TEST_PARENT_SECRET", "must-not-leak")
    env.dotenv_path.write_text("API_KEY=from-dotenv\n", encoding="utf-8")
    entry = toolbox_entry(env={"GREETING": "${WHO:-world}", "KEY": "${API_KEY}"})
    seen = ToolsSeen()
    async with McpSupervisor({"box": entry}, env, on_tools_changed=seen):
        env_tool = seen.tool("mcp__box__env")
        greeting = await call(env_tool, name="GREETING")
        key = await call(env_tool, name="KEY")
        leaked = await call(env_tool, name="HERMES_TEST_PARENT_SECRET")
    assert (greeting.text_content, key.text_content) == ("world", "from-dotenv")
    assert leaked.text_content == "<unset>"


async def test_stdio_child_gets_the_safe_variables_of_the_hosts_environment_not_the_processes(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An embedder's hosts each have their own Environment: a host's servers see its HOME and
    # USER, and no SHELL when it has none, whatever the process holds.
    monkeypatch.setenv("HOME", "/the/process/home")
    monkeypatch.setenv("USER", "process-user")
    monkeypatch.setenv("SHELL", "/bin/process-shell")
    own = dataclasses.replace(
        env, variables={**env.variables, "HOME": str(env.home), "USER": "host-user"}
    )
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, own, on_tools_changed=seen):
        env_tool = seen.tool("mcp__box__env")
        home = await call(env_tool, name="HOME")
        user = await call(env_tool, name="USER")
        shell = await call(env_tool, name="SHELL")
    assert (home.text_content, user.text_content) == (str(env.home), "host-user")
    assert shell.text_content == "<unset>"


async def test_unset_variable_makes_the_server_unavailable_with_the_key(
    env: Environment,
) -> None:
    entry = toolbox_entry(env={"KEY": "${HERMES_TEST_NEVER_SET}"})
    async with McpSupervisor({"box": entry}, env) as mcp:
        status = mcp.status()["box"]
        result = await mcp.call_tool("box", "echo", {"text": "x"})
    assert status.state == "unavailable"
    assert "mcp_servers.box.env.KEY" in (status.reason or "")
    assert "${HERMES_TEST_NEVER_SET} is not set" in (status.reason or "")
    assert result.is_error
    assert "'box'" in (result.error_message or "")


async def test_disabled_server_is_not_started(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor(
        {"box": toolbox_entry(enabled=False)}, env, on_tools_changed=seen
    ) as mcp:
        status = mcp.status()["box"]
        result = await mcp.call_tool("box", "echo", {"text": "x"})
    assert status.state == "disabled"
    assert seen.history == []
    assert "disabled" in (result.error_message or "")

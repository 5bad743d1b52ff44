"""MCP servers through a real ``Host``: registered, listed, searched, described and called
through the bridge, filtered, supervised, and cleaned up. The servers are real: PyPI's
``mcp-server-time`` and ``mcp-server-git``, npm's ``server-everything``, and the test toolbox."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from realservers import (
    TOOLBOX,
    child_pids,
    everything_entry,
    hanging_entry,
    time_entry,
    toolbox_entry,
    wait_until,
)

from hermes_core._config import Config, McpServerConfig
from hermes_core._host import Host
from hermes_core._mcp.supervisor import FILTERED
from hermes_core._paths import Environment
from hermes_core._session import Session
from hermes_core._tools import ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

CONTEXT = 200_000


def host_config(servers: dict[str, McpServerConfig]) -> Config:
    """A configuration with these servers whose tools the approval policy lets run."""
    return Config.model_validate(
        {
            "mcp_servers": {name: entry.model_dump() for name, entry in servers.items()},
            "approvals": {"allow": ["mcp__*"]},
        }
    )


def answer(result: ToolResult) -> Any:
    """The JSON a bridge tool answered."""
    return json.loads(result.text_content)


async def search(host: Host, session: Session, query: str) -> list[str]:
    found = answer(await host.dispatch("tool_search", {"queries": [query]}, session))
    matches: list[str] = found["results"][0]["matches"]
    return matches


async def bridge_call(host: Host, session: Session, name: str, **arguments: Any) -> ToolResult:
    return await host.dispatch("tool_call", {"name": name, "arguments": arguments}, session)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=Test"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README").write_text("hello\n", encoding="utf-8")
    subprocess.run([*git, "-C", str(repo), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "first"], check=True)
    return repo


@pytest.mark.slow
async def test_real_servers_are_registered_searched_described_and_called(
    env: Environment, git_repo: Path
) -> None:
    git = McpServerConfig(
        command=time_entry().command, args=["-m", "mcp_server_git", "--repository", str(git_repo)]
    )
    config = host_config({"time": time_entry(), "git": git, "everything": everything_entry()})
    async with Host(config, env) as host:
        session = host.new_session()
        states = {name: status.state for name, status in host.mcp_status().items()}
        assert states == {"time": "connected", "git": "connected", "everything": "connected"}
        clock = host.registry.get("mcp__time__get_current_time")
        assert clock is not None
        assert (clock.toolset, clock.source) == ("mcp-time", "mcp")
        status = host.registry.get("mcp__git__git_status")
        assert status is not None
        assert status.toolset == "mcp-git"
        echo = host.registry.get("mcp__everything__echo")
        assert echo is not None
        assert echo.toolset == "mcp-everything"

        assembly = host.assemble(CONTEXT, session)
        names = [tool.name for tool in assembly.tools]
        assert "tool_search" in names
        assert not any(name.startswith("mcp__") for name in names)  # deferred behind the bridge

        assert "mcp__time__get_current_time" in await search(host, session, "current time")
        assert "mcp__git__git_status" in await search(host, session, "git working tree status")
        assert "mcp__everything__echo" in await search(host, session, "echo a message back")

        described = answer(
            await host.dispatch("tool_describe", {"names": ["mcp__git__git_status"]}, session)
        )
        parameters = described["tools"]["mcp__git__git_status"]["parameters"]
        assert "repo_path" in parameters["properties"]

        now = await bridge_call(host, session, "mcp__time__get_current_time", timezone="UTC")
        assert not now.is_error
        assert now.structured["timezone"] == "UTC"
        tree = await bridge_call(host, session, "mcp__git__git_status", repo_path=str(git_repo))
        assert not tree.is_error
        assert "On branch main" in tree.text_content
        echoed = await bridge_call(host, session, "mcp__everything__echo", message="hi there")
        assert not echoed.is_error
        assert "hi there" in echoed.text_content


async def test_filtered_tool_is_not_listed_not_found_and_refused_clearly(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    box = toolbox_entry(exclude=["delete_*", "no_such_tool_*"])
    caplog.set_level(logging.WARNING, logger="hermes_core._mcp")
    async with Host(host_config({"box": box}), env) as host:
        session = host.new_session()
        assert "mcp__box__delete_everything" not in host.registry
        assert "mcp__box__echo" in host.registry
        assembly = host.assemble(CONTEXT, session)
        assert "delete_everything" not in assembly.listing
        assert "delete_everything" not in json.dumps([tool.name for tool in assembly.tools])
        found = await search(host, session, "pretends to delete everything")
        assert "mcp__box__delete_everything" not in found

        refused = await bridge_call(host, session, "mcp__box__delete_everything")
        assert refused.is_error
        assert "filtered out (exclude pattern 'delete_*' matches it in mcp_servers.box)" in (
            refused.text_content
        )
        direct = await host.dispatch("mcp__box__delete_everything", {}, session)
        assert direct.error_code == FILTERED
    assert "the include/exclude pattern 'no_such_tool_*' matches none of its tools" in caplog.text


async def test_unknown_name_still_gets_the_usual_answer(env: Environment) -> None:
    async with Host(host_config({"box": toolbox_entry()}), env) as host:
        session = host.new_session()
        result = await bridge_call(host, session, "mcp__box__ech")
    assert result.error_code == "UNKNOWN_TOOL"
    assert "unknown tool 'mcp__box__ech'" in result.text_content


@pytest.mark.slow
async def test_killed_server_is_unavailable_then_reconnects_and_leaves_no_child(
    env: Environment,
) -> None:
    marker = "mcp_server_time"
    async with Host(
        host_config({"time": time_entry()}), env, mcp_reconnect=True, mcp_backoff=0.2
    ) as host:
        session = host.new_session()
        [pid] = child_pids(marker)
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda: host.mcp_status()["time"].state == "unavailable", "time down")

        failed = await bridge_call(host, session, "mcp__time__get_current_time", timezone="UTC")
        assert failed.is_error
        assert "'time'" in failed.text_content
        assert "unavailable" in failed.text_content
        listing = host.assemble(CONTEXT, session).listing
        reason = host.mcp_status()["time"].reason
        assert reason
        assert f"time (2 tools unavailable: {reason})" in listing

        await wait_until(lambda: host.mcp_status()["time"].state == "connected", "time back")
        again = await bridge_call(host, session, "mcp__time__get_current_time", timezone="UTC")
        assert not again.is_error
        assert again.structured["timezone"] == "UTC"
        assert child_pids(marker) != [pid]
    assert child_pids(marker) == []


async def test_a_host_reconnects_a_dead_server_only_when_asked_to_supervise(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    marker = str(TOOLBOX)
    with caplog.at_level(logging.WARNING, logger="hermes_core._mcp"):
        async with Host(host_config({"box": toolbox_entry()}), env, mcp_backoff=0.2) as host:
            [pid] = child_pids(marker)
            os.kill(pid, signal.SIGKILL)
            await wait_until(lambda: host.mcp_status()["box"].state == "unavailable", "down")
            await anyio.sleep(1)  # five backoffs of 0.2 s would have reconnected it
            status = host.mcp_status()["box"]
            children = child_pids(marker)
    assert status.state == "unavailable"
    assert status.retry_in is None
    assert children == []
    warned = [r.getMessage() for r in caplog.records if "is unavailable" in r.getMessage()]
    assert len(warned) == 1
    assert "reconnecting" not in warned[0]


@pytest.mark.slow
async def test_call_past_its_timeout_is_an_error_and_the_server_stays_usable(
    env: Environment,
) -> None:
    box = toolbox_entry(timeout=1)
    async with Host(host_config({"box": box}), env) as host:
        session = host.new_session()
        slow = await bridge_call(host, session, "mcp__box__sleep", seconds=30)
        assert slow.is_error
        assert "box" in slow.text_content
        echoed = await bridge_call(host, session, "mcp__box__echo", text="still here")
        assert echoed.text_content == "echo: still here"


async def test_a_result_past_max_result_chars_is_cut_saying_so(env: Environment) -> None:
    box = toolbox_entry(max_result_chars=1000)
    async with Host(host_config({"box": box}), env) as host:
        session = host.new_session()
        long = await bridge_call(host, session, "mcp__box__echo", text="x" * 5000)
        short = await bridge_call(host, session, "mcp__box__echo", text="fits")
        summed = await bridge_call(host, session, "mcp__box__add", a=2, b=3)

    assert not long.is_error
    texts = [block["text"] for block in long.content]
    assert texts[0] == "echo: " + "x" * 994  # the first 1,000 characters
    assert texts[-1] == (
        "[... this result was longer than mcp_servers.box.max_result_chars (1,000): 4,006 of its "
        "5,006 characters were cut; ask the tool for less (a page, a filter, a range)]"
    )
    assert short.text_content == "echo: fits"
    assert summed.structured == {"sum": 5}  # small structured content is kept


@pytest.mark.slow
async def test_hanging_server_does_not_keep_the_others_from_working(env: Environment) -> None:
    hang = McpServerConfig(
        command=time_entry().command,
        args=["-c", "import time\nwhile True: time.sleep(3600)", "hermes-host-hang"],
        connect_timeout=1,
    )
    async with Host(host_config({"hang": hang, "time": time_entry()}), env) as host:
        session = host.new_session()
        statuses = host.mcp_status()
        assert statuses["time"].state == "connected"
        assert statuses["hang"].state == "unavailable"
        assert "connect_timeout" in (statuses["hang"].reason or "")
        now = await bridge_call(host, session, "mcp__time__get_current_time", timezone="UTC")
        assert not now.is_error
        refused = await bridge_call(host, session, "mcp__hang__anything")
        assert "'hang'" in refused.text_content
    assert child_pids("hermes-host-hang") == []


async def test_a_host_cancelled_while_starting_leaves_no_child_process(env: Environment) -> None:
    # The hanging server keeps the start waiting for its 30 s connect_timeout; the caller gives
    # up first, as a signal or a deadline would.
    config = host_config({"box": toolbox_entry(), "hang": hanging_entry(connect_timeout=30)})
    entered = False
    with anyio.move_on_after(3) as scope:
        async with Host(config, env):
            entered = True
    assert scope.cancelled_caught
    assert not entered
    assert child_pids(str(TOOLBOX)) == []
    assert child_pids("hermes-hang-marker") == []

"""Supervision: a dead server is unavailable at once and comes back; a hanging server does not
hold up the others; timeouts leave the server usable; shutdown leaves no child behind."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest
from realservers import (
    TOOLBOX,
    ToolsSeen,
    call,
    child_pids,
    hanging_entry,
    live_pids,
    mute_entry,
    spawner_entry,
    toolbox_entry,
    wait_until,
)

from hermes_core._mcp import McpSupervisor, ServerStatus
from hermes_core._mcp.results import TIMEOUT, UNAVAILABLE
from hermes_core._mcp.startup import McpStartup
from hermes_core._paths import Environment
from hermes_core._tools import Tool

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

HANG_TIMEOUT = 60
"""The hanging server's connect_timeout where a test must never wait it out."""


def one_child(marker: str) -> int:
    pids = child_pids(marker)
    assert len(pids) == 1, f"expected one child running {marker!r}, found {pids}"
    return pids[0]


@pytest.mark.slow
async def test_killed_server_is_unavailable_at_once_and_reconnects(env: Environment) -> None:
    seen = ToolsSeen()
    at_withdrawal: list[ServerStatus] = []
    manager: McpSupervisor | None = None

    def on_change(server: str, tools: list[Tool]) -> None:
        seen(server, tools)
        if not tools and manager is not None:
            at_withdrawal.append(manager.status()[server])

    manager = McpSupervisor(
        {"box": toolbox_entry()}, env, on_tools_changed=on_change, backoff_base=0.2
    )
    async with manager:
        first_pid = one_child(str(TOOLBOX))
        os.kill(first_pid, signal.SIGKILL)
        after_kill = await call(seen.tool("mcp__box__echo"), text="are you there")
        await wait_until(lambda: bool(at_withdrawal), "the tools of 'box' to be withdrawn")
        await wait_until(lambda: bool(seen.names("box")), "'box' to reconnect")
        again = await call(seen.tool("mcp__box__echo"), text="back")
        second_pid = one_child(str(TOOLBOX))
    assert child_pids(str(TOOLBOX)) == []
    assert after_kill.is_error
    assert after_kill.error_code == UNAVAILABLE
    assert "MCP server 'box'" in (after_kill.error_message or "")
    withdrawn = at_withdrawal[0]
    assert withdrawn.state == "unavailable"
    assert withdrawn.reason == "the server closed the connection"
    assert withdrawn.tool_count == 7, "the listing shows how many tools went away"
    assert again.text_content == "echo: back"
    assert second_pid != first_pid


async def test_call_to_unavailable_server_names_server_and_reason(env: Environment) -> None:
    seen = ToolsSeen()
    # A long backoff keeps the server down while the test looks at it.
    async with McpSupervisor(
        {"box": toolbox_entry()}, env, on_tools_changed=seen, backoff_base=600
    ) as mcp:
        echo = seen.tool("mcp__box__echo")
        os.kill(one_child(str(TOOLBOX)), signal.SIGKILL)
        await wait_until(lambda: mcp.status()["box"].state == "unavailable", "'box' to drop")
        result = await call(echo, text="x")
        status = mcp.status()["box"]
        listing = mcp.unavailable()
    assert result.error_code == UNAVAILABLE
    assert result.error_message == (
        "MCP server 'box' is unavailable: the server closed the connection."
    )
    assert status.retry_in is not None
    assert status.retry_in > 0
    assert listing == {"box": (7, "the server closed the connection")}


async def test_shutdown_leaves_no_child_process(env: Environment) -> None:
    servers = {
        "box": toolbox_entry(),
        "hang": hanging_entry(connect_timeout=1),
    }
    async with McpSupervisor(servers, env):
        assert child_pids(str(TOOLBOX))
    assert child_pids(str(TOOLBOX)) == []
    assert child_pids("hermes-hang-marker") == []


@pytest.mark.slow
async def test_shutdown_ends_the_processes_a_server_started(
    env: Environment, tmp_path: Path
) -> None:
    answering, silent = str(tmp_path / "grandchild-a"), str(tmp_path / "grandchild-s")
    servers = {
        "spawn": spawner_entry(answering),
        "mute": spawner_entry(silent, silent=True, connect_timeout=2),
    }
    async with anyio.create_task_group() as group:
        # The silent server's child lives only until its connect_timeout ends the server's
        # process group, while the start waits: it is looked for during the start, not after.
        group.start_soon(wait_until, lambda: bool(live_pids(silent)), "the silent server's child")
        async with McpSupervisor(servers, env, backoff_base=600) as mcp:
            await wait_until(lambda: bool(live_pids(answering)), "the answering server's child")
            states = {name: status.state for name, status in mcp.status().items()}
    assert states == {"spawn": "connected", "mute": "unavailable"}
    assert live_pids(answering) == []
    assert live_pids(silent) == []


@pytest.mark.slow
@pytest.mark.parametrize("change", ["remove", "replace"])
async def test_removing_or_replacing_a_server_ends_the_processes_it_started(
    env: Environment, tmp_path: Path, change: str
) -> None:
    first, second = str(tmp_path / "first-grandchild"), str(tmp_path / "second-grandchild")
    async with McpSupervisor({"spawn": spawner_entry(first)}, env) as mcp:
        await wait_until(lambda: bool(live_pids(first)), "the server's child")
        if change == "remove":
            await mcp.remove("spawn")
        else:
            await mcp.add("spawn", spawner_entry(second))
        after_change = live_pids(first)
        await wait_until(lambda: change == "remove" or bool(live_pids(second)), "the new child")
    assert after_change == []
    assert live_pids(second) == []


async def test_a_server_that_dies_is_unavailable_at_once_and_the_processes_it_started_end(
    env: Environment, tmp_path: Path
) -> None:
    # The child inherited the server's output, so the output does not end when the server
    # dies: the server's exit itself must be noticed.
    marker = str(tmp_path / "grandchild")
    async with McpSupervisor({"spawn": spawner_entry(marker)}, env, backoff_base=600) as mcp:
        await wait_until(lambda: bool(live_pids(marker)), "the server's child")
        os.kill(one_child(str(tmp_path)), signal.SIGKILL)
        await wait_until(lambda: mcp.status()["spawn"].state == "unavailable", "'spawn' to drop")
        await wait_until(lambda: live_pids(marker) == [], "the orphaned child to end")
        status = mcp.status()["spawn"]
    assert status.reason == "the server closed the connection"


async def test_hanging_server_does_not_delay_the_others(env: Environment) -> None:
    hang_state_when_box_connected: list[str] = []
    manager: McpSupervisor | None = None

    def on_change(server: str, tools: list[Tool]) -> None:
        if server == "box" and tools and manager is not None:
            hang_state_when_box_connected.append(manager.status()["hang"].state)

    # The start waits for "box" only, so nothing waits out "hang"'s connect_timeout, which is
    # far longer than a Python MCP server's start on a loaded machine: were the connects made
    # one after the other, "box" would connect only once "hang" had used it up.
    manager = McpSupervisor(
        {"hang": mute_entry(connect_timeout=HANG_TIMEOUT), "box": toolbox_entry()},
        env,
        on_tools_changed=on_change,
        startup=McpStartup(wait_only=frozenset({"box"})),
    )
    with anyio.fail_after(HANG_TIMEOUT / 2):
        async with manager:
            statuses = manager.status()
    assert hang_state_when_box_connected == ["connecting"]
    assert statuses["box"].state == "connected"
    assert statuses["hang"].state == "connecting"


async def test_a_server_silent_past_its_connect_timeout_is_unavailable_naming_it(
    env: Environment,
) -> None:
    async with McpSupervisor({"hang": mute_entry(connect_timeout=1)}, env) as manager:
        status = manager.status()["hang"]
    assert status.state == "unavailable"
    assert (
        status.reason == "no answer within connect_timeout (1 s, mcp_servers.hang.connect_timeout)"
    )


async def test_call_past_timeout_is_an_error_and_server_stays_usable(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry(timeout=1)}, env, on_tools_changed=seen) as mcp:
        pid = one_child(str(TOOLBOX))
        slow = await call(seen.tool("mcp__box__sleep"), seconds=120)
        after = await call(seen.tool("mcp__box__echo"), text="still here")
        state = mcp.status()["box"].state
        same_pid = one_child(str(TOOLBOX))
    assert slow.error_code == TIMEOUT
    assert "MCP server 'box'" in (slow.error_message or "")
    assert "timeout of 1 s" in (slow.error_message or "")
    assert after.text_content == "echo: still here"
    assert state == "connected"
    assert same_pid == pid


async def test_servers_are_added_and_removed_while_running(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({}, env, on_tools_changed=seen) as mcp:
        status = await mcp.add("box", toolbox_entry())
        added = seen.names("box")
        result = await call(seen.tool("mcp__box__echo"), text="hi")
        await mcp.remove("box")
        after_remove = (seen.names("box"), list(mcp.status()), child_pids(str(TOOLBOX)))
    assert status.state == "connected"
    assert "mcp__box__echo" in added
    assert result.text_content == "echo: hi"
    assert after_remove == ([], [], [])


@pytest.mark.slow
async def test_adding_an_existing_name_replaces_the_server(env: Environment) -> None:
    seen = ToolsSeen()
    async with McpSupervisor({"box": toolbox_entry()}, env, on_tools_changed=seen) as mcp:
        await mcp.add("box", toolbox_entry(include=["echo"]))
        names = seen.names("box")
        children = child_pids(str(TOOLBOX))
    assert names == ["mcp__box__echo"]
    assert len(children) == 1


async def test_server_that_exits_at_start_is_unavailable_and_retried(env: Environment) -> None:
    entry = hanging_entry().model_copy(update={"args": ["-c", "raise SystemExit(3)"]})
    async with McpSupervisor({"broken": entry}, env, backoff_base=600) as mcp:
        status = mcp.status()["broken"]
    assert status.state == "unavailable"
    assert status.reason is not None
    assert status.reason.startswith("cannot connect:")
    assert status.retry_in is not None


async def test_a_failing_server_backs_off_doubling_then_comes_back_and_its_status_tells_each_step(
    env: Environment, tmp_path: Path
) -> None:
    ready = tmp_path / "ready"
    # Fails at once until the file ``ready`` exists, then runs the toolbox.
    script = (
        "import os, runpy, sys\n"
        f"if not os.path.exists({str(ready)!r}): sys.exit(3)\n"
        f"sys.argv = [{str(TOOLBOX)!r}]\n"
        f"runpy.run_path({str(TOOLBOX)!r}, run_name='__main__')"
    )
    entry = toolbox_entry().model_copy(update={"args": ["-c", script]})
    seen = ToolsSeen()
    states: set[str] = set()
    async with McpSupervisor({"flaky": entry}, env, on_tools_changed=seen, backoff_base=1.0) as mcp:

        def status() -> ServerStatus:
            found = mcp.status()["flaky"]
            states.add(found.state)
            return found

        first = status()
        assert first.state == "unavailable"
        assert first.reason is not None
        assert first.reason.startswith("cannot connect:")
        assert first.retry_in is not None
        assert 0 <= first.retry_in <= 1.0
        assert first.tool_count == 0
        assert first.failed_at is not None
        assert not first.recorded, "the failure happened in this process"
        # The second failure waits twice as long.
        longer: list[ServerStatus] = []

        def backs_off_longer() -> bool:
            found = status()
            if found.retry_in is not None and found.retry_in > 1.0:
                longer.append(found)
            return bool(longer)

        await wait_until(backs_off_longer, "the second attempt of 'flaky' to fail and back off")
        second = longer[0]
        assert second.state == "unavailable"
        assert second.retry_in is not None
        assert second.retry_in <= 2.0
        assert seen.names("flaky") == []
        ready.touch()
        await wait_until(lambda: status().state == "connected", "'flaky' to come back")
        back = status()
        again = await call(seen.tool("mcp__flaky__echo"), text="back")
    assert states <= {"unavailable", "connecting", "connected"}
    assert back.reason is None
    assert back.retry_in is None
    assert back.failed_at is None
    assert back.stderr_tail == ()
    assert back.tool_count == 7
    assert again.text_content == "echo: back"


async def test_child_ignoring_sigterm_is_killed_at_shutdown(env: Environment) -> None:
    stubborn = hanging_entry(connect_timeout=1).model_copy(
        update={
            "args": [
                "-c",
                "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "while True: time.sleep(3600)",
                "hermes-stubborn-marker",
            ]
        }
    )
    async with McpSupervisor({"stubborn": stubborn}, env, backoff_base=600):
        pass
    assert child_pids("hermes-stubborn-marker") == []


def test_manager_is_built_outside_the_event_loop(env: Environment) -> None:
    manager = McpSupervisor({"box": toolbox_entry(), "off": toolbox_entry(enabled=False)}, env)
    status = manager.status()
    assert status["off"].state == "disabled"
    assert status["off"].reason == "disabled (mcp_servers.off.enabled is false)"
    assert status["box"].state == "connecting"
    assert status["box"].tool_count == 0


async def test_refusal_names_a_dead_server_whose_tool_names_were_shortened(
    env: Environment,
) -> None:
    seen = ToolsSeen()
    # A 40-character server name pushes every tool name past 64 characters: each is shortened
    # with a hash suffix, so only the published names, not a prefix, lead back to the server.
    server = "s" * 40
    async with McpSupervisor(
        {server: toolbox_entry()}, env, on_tools_changed=seen, backoff_base=600
    ) as mcp:
        names = sorted(seen.current[server])
        os.kill(one_child(str(TOOLBOX)), signal.SIGKILL)
        await wait_until(lambda: mcp.status()[server].state == "unavailable", "the server to drop")
        refusal = mcp.refusal_for(names[0])
        unknown = mcp.refusal_for("mcp__other__echo")
    assert len(names[0]) <= 64
    assert not names[0].startswith(f"mcp__{server}__echo")
    assert refusal is not None
    assert refusal.error_code == UNAVAILABLE
    assert f"MCP server '{server}' is unavailable" in (refusal.error_message or "")
    assert unknown is None

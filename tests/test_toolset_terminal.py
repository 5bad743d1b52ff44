"""The terminal toolset: terminal and process_manage run real shell commands."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from builders import Harness, build_harness, processes_gone, stopped_after

from hermes_core._session import Session

pytestmark = pytest.mark.subprocess


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Harness]:
    config = {
        "approvals": {"allow": ["terminal", "process_manage"]},
        "plugins": {"entries": {"terminal": {"max_output_bytes": 2000, "default_timeout": 5}}},
    }
    harness = build_harness(tmp_path, config=config)
    yield harness
    harness.close()


def test_terminal_runs_in_the_session_directory_and_reports_the_exit_code(shell: Harness) -> None:
    result = shell.call("terminal", {"command": "pwd; echo oops >&2; exit 3"})

    assert not result.is_error
    assert str(shell.env.cwd) in result.text_content
    assert "oops" in result.text_content
    assert result.text_content.endswith("[exit code: 3]")
    assert result.structured["exit_code"] == 3


def test_terminal_keeps_the_head_and_tail_of_long_output(shell: Harness) -> None:
    result = shell.call("terminal", {"command": "seq 1 20000"})

    assert result.structured["truncated"] is True
    assert result.text_content.startswith("1\n2\n3\n")
    assert "20000" in result.text_content
    assert "bytes of output left out" in result.text_content
    assert len(result.text_content) < 2200


def test_terminal_timeout_kills_the_whole_process_group(shell: Harness) -> None:
    marker = shell.env.cwd / "survived"

    result = shell.call(
        "terminal", {"command": f"(sleep 3; touch {marker}) & sleep 30", "timeout": 1}
    )

    assert result.structured["timed_out"] is True
    assert "timed out after 1 s" in result.text_content
    time.sleep(3.5)
    assert not marker.exists()


def test_terminal_uses_the_environment_it_was_given(shell: Harness) -> None:
    result = shell.call("terminal", {"command": 'echo "home=$HERMES_HOME"'})

    assert f"home={shell.env.home}" in result.text_content


def test_process_manage_starts_lists_reads_and_kills(shell: Harness) -> None:
    session = shell.session()
    try:
        started = shell.call(
            "process_manage",
            {"action": "start", "command": "echo ready; sleep 30"},
            session,
        )
        process_id = started.structured["id"]
        for _ in range(100):
            output = shell.call(
                "process_manage", {"action": "read", "process_id": process_id}, session
            )
            if "ready" in output.text_content:
                break
            time.sleep(0.05)
        listed = shell.call("process_manage", {"action": "list"}, session)
        killed = shell.call("process_manage", {"action": "kill", "process_id": process_id}, session)
        unknown = shell.call("process_manage", {"action": "read", "process_id": "p999"}, session)
    finally:
        shell.manager.get_plugin("terminal").hermes_session_end(session)

    assert "ready" in output.text_content
    assert listed.structured[0]["status"] == "running"
    assert "exited" in killed.text_content
    assert unknown.is_error
    assert process_id in unknown.text_content


def test_session_end_stops_background_processes(shell: Harness) -> None:
    session = Session(cwd=shell.env.cwd)
    started = shell.call("process_manage", {"action": "start", "command": "sleep 30"}, session)
    assert not started.is_error

    shell.manager.get_plugin("terminal").hermes_session_end(session)

    listed = shell.call("process_manage", {"action": "list"}, session)
    assert listed.structured[0]["status"].startswith("exited")


def test_terminal_tools_are_core_destructive_and_open_world(shell: Harness) -> None:
    terminal = shell.registry.get("terminal")
    manage = shell.registry.get("process_manage")

    assert terminal is not None
    assert manage is not None
    assert terminal.core
    assert terminal.annotations.destructive
    assert terminal.annotations.open_world
    assert manage.toolset == terminal.toolset == "terminal"


def test_terminal_timeout_kills_members_that_ignore_sigterm(shell: Harness) -> None:
    argv = ["sleep", f"60.{os.getpid()}{time.monotonic_ns() % 1000}1"]

    result = shell.call(
        "terminal",
        {"command": f"(trap '' TERM; exec {' '.join(argv)}) & sleep 60", "timeout": 1},
    )

    assert result.structured["timed_out"] is True
    assert processes_gone(argv)


def test_terminal_kills_what_the_command_left_in_the_background(shell: Harness) -> None:
    argv = ["sleep", f"60.{os.getpid()}{time.monotonic_ns() % 1000}2"]

    result = shell.call("terminal", {"command": f"{' '.join(argv)} & echo started"})

    assert "started" in result.text_content
    assert result.structured["timed_out"] is False
    assert processes_gone(argv)


def unique_sleep(tag: str) -> list[str]:
    return ["sleep", f"30.{os.getpid()}{time.monotonic_ns() % 100000}{tag}"]


def test_a_command_whose_call_is_cancelled_is_stopped_at_once(shell: Harness) -> None:
    argv = unique_sleep("3")

    async def scenario() -> None:
        with anyio.move_on_after(1):  # a caller giving up: a script's timeout, the host closing
            await shell.dispatcher.dispatch(
                "terminal", {"command": f"{' '.join(argv)}; echo done", "timeout": 60}, session
            )

    session = shell.session()
    started = time.monotonic()
    anyio.run(scenario)

    # 1 s to the cancel; the 2 s grace must not be waited out for a killed member that lingers
    # as a zombie until PID 1 reaps it (it did, here: 3.0 s)
    assert time.monotonic() - started < 2.5
    assert processes_gone(argv)


def test_the_users_stop_ends_a_running_command(shell: Harness) -> None:
    argv = unique_sleep("4")
    session = shell.session()
    arguments = {"command": f"echo started; {' '.join(argv)}", "timeout": 60}

    started = time.monotonic()
    result = stopped_after(shell, "terminal", arguments, session, 1.0)

    assert time.monotonic() - started < 3
    assert result.error_code == "INTERRUPTED"
    assert result.text_content.startswith("started\n")
    assert "the user interrupted the turn" in result.text_content
    assert processes_gone(argv)
    assert shell.activity()[-1]["status"] == "interrupted"


def test_each_call_is_a_new_shell_and_the_model_is_told_so(shell: Harness) -> None:
    (shell.env.cwd / "sub").mkdir()
    session = shell.session()

    shell.call("terminal", {"command": "cd sub && export LEFT=1"}, session)
    after = shell.call("terminal", {"command": 'pwd; echo "LEFT=$LEFT"'}, session)
    tool = shell.registry.get("terminal")

    assert after.text_content.splitlines()[:2] == [str(shell.env.cwd), "LEFT="]
    # A model used to a shell that keeps its directory would otherwise run the next command
    # in the wrong place.
    assert tool is not None
    assert "cd and variables do not carry over" in tool.description


def test_a_command_over_the_kernels_argument_limit_says_so_and_what_to_do(
    shell: Harness,
) -> None:
    command = "echo " + "x" * 200_000 + " | wc -c"

    ran = shell.call("terminal", {"command": command})
    started = shell.call("process_manage", {"action": "start", "command": command})

    for result in (ran, started):
        assert result.error_code == "TOOL_ERROR"
        assert "Errno" not in result.text_content
        assert f"{len(command.encode())} bytes" in result.text_content
        assert "write_file" in result.text_content

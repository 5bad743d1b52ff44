"""The log file of a stdio server's standard error: appended per run, bounded, private, and the
last lines of the run kept for errors (real files in a temporary directory)."""

from __future__ import annotations

import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from hermes_core._config import McpServerConfig
from hermes_core._mcp.connection import McpConnectError, open_connection
from hermes_core._mcp.serverlog import TAIL_LINES, ServerLog, server_log_path
from hermes_core._paths import Environment


def test_the_log_of_a_server_is_mcp_name_log_in_the_log_directory(tmp_path: Path) -> None:
    env = Environment(home=tmp_path / "home", cwd=tmp_path)
    assert server_log_path(env, "git") == tmp_path / "home" / "logs" / "mcp-git.log"


def test_in_a_shared_hermes_log_dir_each_home_logs_its_servers_in_a_folder_of_its_own(
    tmp_path: Path,
) -> None:
    shared = {"HERMES_LOG_DIR": str(tmp_path / "logs")}
    one = Environment(home=tmp_path / "one" / ".hermes", cwd=tmp_path, variables=shared)
    two = Environment(home=tmp_path / "two" / ".hermes", cwd=tmp_path, variables=shared)

    paths = [server_log_path(env, "git") for env in (one, two)]

    assert paths[0] != paths[1]
    assert [path.parent.parent for path in paths] == [tmp_path / "logs"] * 2
    assert [path.name for path in paths] == ["mcp-git.log"] * 2
    assert paths[0].parent.name.startswith("hermes-")


def test_runs_are_appended_each_after_a_started_line(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "mcp-box.log"
    for run in ("first", "second"):
        log = ServerLog(path)
        log.start(f"box ({run})")
        log.write(f"{run} run says hello\n".encode())
        log.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line.split(" hermes started ")[-1] for line in lines[::2]] == [
        "box (first)",
        "box (second)",
    ]
    assert lines[1::2] == ["first run says hello", "second run says hello"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_log_is_bounded_by_rotating_into_one_older_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp-chatty.log"
    log = ServerLog(path, max_bytes=200)
    log.start("chatty")
    for number in range(20):
        log.write(f"line {number:02d} {'x' * 40}\n".encode())
    log.close()
    older = path.with_name("mcp-chatty.log.1")
    assert path.stat().st_size <= 200
    assert older.stat().st_size <= 200
    assert "line 19" in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp-chatty.log", "mcp-chatty.log.1"]
    # A new run over a full file starts a new one.
    path.write_bytes(b"y" * 300)
    again = ServerLog(path, max_bytes=200)
    again.start("chatty")
    again.close()
    assert older.read_bytes() == b"y" * 300
    assert path.read_text(encoding="utf-8").startswith("--- ")


def test_the_tail_is_the_last_lines_of_this_run(tmp_path: Path) -> None:
    path = tmp_path / "mcp-box.log"
    earlier = ServerLog(path)
    earlier.start("box")
    earlier.write(b"from an earlier run\n")
    earlier.close()
    log = ServerLog(path)
    log.start("box")
    assert log.tail == ()
    log.write(b"".join(f"line {n}\n".encode() for n in range(10)))
    log.write(b"Traceback: no newline yet")
    log.close()
    assert len(log.tail) == TAIL_LINES
    assert log.tail[-2:] == ("line 9", "Traceback: no newline yet")
    assert "from an earlier run" not in log.tail


def test_an_unwritable_log_is_one_warning_and_the_tail_is_still_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "logs"
    blocker.write_text("a file where the log directory should be", encoding="utf-8")
    log = ServerLog(blocker / "mcp-box.log")
    with caplog.at_level(logging.WARNING, logger="hermes_core._mcp"):
        log.start("box")
        log.write(b"still remembered\n")
        log.write(b"and this\n")
        log.close()
    assert log.tail == ("still remembered", "and this")
    warnings = [r.getMessage() for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(warnings) == 1
    assert str(blocker / "mcp-box.log") in warnings[0]


def open_files(path: Path) -> list[str]:
    """This process's open file descriptors on ``path``, from ``/proc/self/fd``."""
    found: list[str] = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if os.readlink(fd) == str(path):
                found.append(fd.name)
        except OSError:
            continue
    return found


@pytest.mark.subprocess
@pytest.mark.anyio
async def test_a_failed_connect_carries_the_last_lines_and_closes_the_log(env: Environment) -> None:
    crash = "import sys; print('about to fail', file=sys.stderr); raise SystemExit(4)"
    entry = McpServerConfig(command=sys.executable, args=["-c", crash])
    with pytest.raises(McpConnectError) as caught:
        async with open_connection("crash", entry, env):
            pass
    log = server_log_path(env, "crash")
    assert (
        caught.value.reason == "cannot connect: the server exited with status 4 before it answered"
    )
    assert caught.value.log_path == log
    assert caught.value.stderr_tail == ("about to fail",)
    assert open_files(log) == []

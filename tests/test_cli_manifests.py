"""Tool manifests seen from the ``hermes`` command: read-only commands answered from the cache
without starting servers, a changed entry or ``--refresh`` reconnecting, a hanging server
recorded and not waited for again, known tools of a broken server, ``hermes mcp list``'s state
and manifest age, and connect progress on a terminal only.

The servers are real: ``mcp-server-time`` behind a shell script that appends a line to a marker
file each time it starts (so a test counts the processes started) and fails on purpose while a
``broken`` file exists; the hanging server is a script that marks its start and sleeps.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

TIME_TOOL = "mcp__time__get_current_time"
BROKEN_REASON = "the time server is broken on purpose"
BROKEN_SEEN = "exited with status 3"
"""How the reason of its failed connect describes the broken server (its message goes to its
log file)."""


def time_script(root: Path) -> Path:
    """``mcp-server-time`` started through a script that marks each start in ``root/time.starts``
    and fails with :data:`BROKEN_REASON` while ``root/broken`` exists."""
    script = root / "time-server.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$$" >> "{root / "time.starts"}"\n'
        f'if [ -e "{root / "broken"}" ]; then echo "{BROKEN_REASON}" >&2; exit 3; fi\n'
        f'exec "{sys.executable}" -m mcp_server_time "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def hang_script(root: Path) -> Path:
    """A "server" that marks its start in ``root/hang.starts`` and never answers."""
    script = root / "hang-server.sh"
    script.write_text(
        f'#!/bin/sh\necho "$$" >> "{root / "hang.starts"}"\nexec sleep 3600\n', encoding="utf-8"
    )
    script.chmod(0o755)
    return script


def starts(cli: HermesCli, server: str) -> int:
    """How many times the marked script of ``server`` has started."""
    marker = cli.root / f"{server}.starts"
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def configure(
    cli: HermesCli, *, timezone: str = "UTC", hang: bool = False, hang_timeout: float = 3
) -> None:
    servers: dict[str, object] = {
        "time": {"command": str(time_script(cli.root)), "args": ["--local-timezone", timezone]}
    }
    if hang:
        servers["hang"] = {"command": str(hang_script(cli.root)), "connect_timeout": hang_timeout}
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")


def found_names(cli: HermesCli, *args: str) -> list[str]:
    result = cli.json("tools", "search", "current time", "--json", *args)
    return [name for query in result["results"] for name in query["matches"]]


def test_a_second_tools_search_starts_no_server_and_finds_its_tools(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli)
    assert TIME_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "time") == 1
    assert TIME_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "time") == 1


def test_a_server_whose_entry_changed_is_not_answered_from_the_old_manifest(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, timezone="UTC")
    found_names(hermes_cli)
    configure(hermes_cli, timezone="Europe/Paris")
    assert TIME_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "time") == 2
    # The new entry's listing answers from now on.
    assert TIME_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "time") == 2


def test_refresh_reconnects_a_server_whose_manifest_is_fresh(hermes_cli: HermesCli) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    assert TIME_TOOL in found_names(hermes_cli, "--refresh")
    assert starts(hermes_cli, "time") == 2


def test_after_its_first_timeout_a_read_only_command_no_longer_waits_for_a_hanging_server(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, hang=True)
    first = hermes_cli.run("tools", "search", "current time")
    assert "'hang' is unavailable (no answer within connect_timeout (3 s" in first.stderr
    assert starts(hermes_cli, "hang") == 1
    again = hermes_cli.run("tools", "search", "current time")
    assert TIME_TOOL in again.stdout
    assert "'hang' is unavailable (no answer within connect_timeout" in again.stderr
    assert "retry_interval" in again.stderr
    assert starts(hermes_cli, "hang") == 1
    listed = json.loads(hermes_cli.run("mcp", "list", "--json", ok=False).stdout)
    hang = next(row for row in listed if row["name"] == "hang")
    assert (hang["status"], hang["recorded"]) == ("unavailable", True)
    assert "connect_timeout" in hang["reason"]
    assert starts(hermes_cli, "hang") == 1


def test_a_known_tool_whose_server_turned_out_broken_returns_an_error_naming_server_and_reason(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    (hermes_cli.root / "broken").touch()
    assert TIME_TOOL in found_names(hermes_cli)  # still known, still searchable
    done = hermes_cli.run(
        "tools", "call", TIME_TOOL, '{"timezone": "UTC"}', "--yes", "--json", ok=False
    )
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["is_error"] is True
    text = json.dumps(result)
    assert "'time'" in text
    assert BROKEN_SEEN in text


def test_mcp_list_shows_a_server_known_from_its_manifest_with_the_manifests_age(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    rows = hermes_cli.json("mcp", "list", "--json")
    assert [(row["name"], row["status"], row["tool_count"]) for row in rows] == [
        ("time", "known", 2)
    ]
    assert 0 <= rows[0]["manifest_age"] < 600
    table = hermes_cli.run("mcp", "list").stdout.splitlines()
    assert table[0].split()[5] == "manifest"
    assert table[1].split()[:3] == ["time", "stdio", "known"]
    assert starts(hermes_cli, "time") == 1


def _run_on_terminal(cli: HermesCli, *args: str) -> str:
    """``hermes *args`` with stdout and stderr on a pseudo-terminal; everything it drew."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        cli.command(*args),
        cwd=cli.work,
        env=cli.variables(TERM="xterm", COLUMNS="120"),
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
    )
    os.close(terminal)
    seen = b""
    give_up = time.monotonic() + 120  # a guard against a hang, not a performance check
    while time.monotonic() < give_up:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    os.close(controller)
    return seen.decode(errors="replace")


def test_connect_progress_shows_on_a_terminal_and_never_in_a_pipe(hermes_cli: HermesCli) -> None:
    configure(hermes_cli)
    drawn = _run_on_terminal(hermes_cli, "tools", "search", "current time", "--refresh")
    assert "time: connecting" in drawn
    piped = hermes_cli.run("tools", "search", "current time", "--refresh")
    assert "connecting" not in piped.stdout + piped.stderr
    assert TIME_TOOL in piped.stdout


@pytest.mark.parametrize(
    "command", [("tools", "list"), ("tools", "assemble"), ("tools", "describe", TIME_TOOL)]
)
def test_other_read_only_commands_start_no_server_whose_manifest_is_fresh(
    hermes_cli: HermesCli, command: tuple[str, ...]
) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    done = hermes_cli.run(*command, "--json")
    assert TIME_TOOL in done.stdout
    assert starts(hermes_cli, "time") == 1


def test_tools_call_waits_for_its_own_server_alone_not_for_one_that_hangs(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, hang=True, hang_timeout=40)  # neither server has a manifest
    began = time.monotonic()
    done = hermes_cli.run("tools", "call", TIME_TOOL, '{"timezone": "UTC"}', "--yes", "--json")
    took = time.monotonic() - began
    assert json.loads(done.stdout)["is_error"] is False
    assert took < 20, f"the call took {took:.1f} s; the hanging server's connect_timeout is 40 s"

"""Tool manifests seen from the ``hermes`` command: read-only commands answered from the cache
without starting servers, a changed entry or ``--refresh`` reconnecting, a hanging server
recorded and not waited for again, known tools of a broken server, ``hermes mcp list``'s state
and manifest age, and connect progress on a terminal only.

The servers are real: the toolbox MCP server (``tests/mcp/servers/toolbox.py``, on the standard
library) behind a shell script that appends a line to a marker file each time it starts (so a
test counts the processes started) and fails on purpose while a ``broken`` file exists; the
hanging server is a script that marks its start and sleeps.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from terminal_runs import run_on_terminal

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` in this process: the servers are real subprocesses, the command is not (the
    terminal test and :func:`test_the_command_as_a_subprocess_answers_from_the_manifest` run
    the real one)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


TOOLBOX = Path(__file__).resolve().parent / "mcp" / "servers" / "toolbox.py"
BOX_TOOL = "mcp__box__echo"
BOX_CALL = '{"text": "hi"}'
QUERY = "echo the text back"
BROKEN_REASON = "the box server is broken on purpose"
BROKEN_SEEN = "exited with status 3"
"""How the reason of its failed connect describes the broken server (its message goes to its
log file)."""


def box_script(root: Path) -> Path:
    """The toolbox server started through a script that marks each start in ``root/box.starts``
    and fails with :data:`BROKEN_REASON` while ``root/broken`` exists."""
    script = root / "box-server.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$$" >> "{root / "box.starts"}"\n'
        f'if [ -e "{root / "broken"}" ]; then echo "{BROKEN_REASON}" >&2; exit 3; fi\n'
        f'exec "{sys.executable}" "{TOOLBOX}"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def hang_script(root: Path) -> Path:
    """A "server" that marks its start in ``root/hang.starts`` and never answers (it reads its
    input, and exits once that closes: its end does not wait out a grace period)."""
    script = root / "hang-server.sh"
    script.write_text(
        f'#!/bin/sh\necho "$$" >> "{root / "hang.starts"}"\nwhile read -r _; do :; done\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def starts(cli: HermesCli, server: str) -> int:
    """How many times the marked script of ``server`` has started."""
    marker = cli.root / f"{server}.starts"
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def configure(
    cli: HermesCli, *, note: str = "first", hang: bool = False, hang_timeout: float = 3
) -> None:
    """Server ``box`` (``note``: a variable of its entry, to change the entry), and ``hang``."""
    servers: dict[str, object] = {
        "box": {"command": str(box_script(cli.root)), "env": {"HERMES_TEST_NOTE": note}}
    }
    if hang:
        servers["hang"] = {"command": str(hang_script(cli.root)), "connect_timeout": hang_timeout}
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")


def found_names(cli: HermesCli, *args: str) -> list[str]:
    result = cli.json("tools", "search", QUERY, "--json", *args)
    return [name for query in result["results"] for name in query["matches"]]


def test_a_second_tools_search_starts_no_server_and_finds_its_tools(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli)
    assert BOX_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "box") == 1
    assert BOX_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "box") == 1


def test_the_command_as_a_subprocess_answers_from_the_manifest(
    hermes_cli: InProcessCli,
) -> None:
    configure(hermes_cli)
    first = hermes_cli.subprocess_run("tools", "search", QUERY, "--json")
    again = hermes_cli.subprocess_run("tools", "search", QUERY, "--json")
    assert BOX_TOOL in first.stdout
    assert BOX_TOOL in again.stdout
    assert starts(hermes_cli, "box") == 1


def test_a_server_whose_entry_changed_is_not_answered_from_the_old_manifest(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, note="first")
    found_names(hermes_cli)
    configure(hermes_cli, note="changed")
    assert BOX_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "box") == 2
    # The new entry's listing answers from now on.
    assert BOX_TOOL in found_names(hermes_cli)
    assert starts(hermes_cli, "box") == 2


def test_refresh_reconnects_a_server_whose_manifest_is_fresh(hermes_cli: HermesCli) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    assert BOX_TOOL in found_names(hermes_cli, "--refresh")
    assert starts(hermes_cli, "box") == 2


def test_after_its_first_timeout_a_read_only_command_no_longer_waits_for_a_hanging_server(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, hang=True)
    first = hermes_cli.run("tools", "search", QUERY)
    assert "'hang' is unavailable (no answer within connect_timeout (3 s" in first.stderr
    assert starts(hermes_cli, "hang") == 1
    again = hermes_cli.run("tools", "search", QUERY)
    assert BOX_TOOL in again.stdout
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
    assert BOX_TOOL in found_names(hermes_cli)  # still known, still searchable
    done = hermes_cli.run("tools", "call", BOX_TOOL, BOX_CALL, "--yes", "--json", ok=False)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["is_error"] is True
    text = json.dumps(result)
    assert "'box'" in text
    assert BROKEN_SEEN in text


def test_mcp_list_shows_a_server_known_from_its_manifest_with_the_manifests_age(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    rows = hermes_cli.json("mcp", "list", "--json")
    assert [(row["name"], row["status"], row["tool_count"]) for row in rows] == [
        ("box", "known", 7)
    ]
    assert 0 <= rows[0]["manifest_age"] < 600
    table = hermes_cli.run("mcp", "list").stdout.splitlines()
    assert table[0].split()[5] == "manifest"
    assert table[1].split()[:3] == ["box", "stdio", "known"]
    assert starts(hermes_cli, "box") == 1


def test_connect_progress_shows_on_a_terminal_and_never_in_a_pipe(hermes_cli: HermesCli) -> None:
    configure(hermes_cli)
    drawn, _ = run_on_terminal(hermes_cli, "tools", "search", QUERY, "--refresh")
    assert "box: connecting" in drawn
    piped = hermes_cli.run("tools", "search", QUERY, "--refresh")
    assert "connecting" not in piped.stdout + piped.stderr
    assert BOX_TOOL in piped.stdout


@pytest.mark.parametrize(
    "command", [("tools", "list"), ("tools", "assemble"), ("tools", "describe", BOX_TOOL)]
)
def test_other_read_only_commands_start_no_server_whose_manifest_is_fresh(
    hermes_cli: HermesCli, command: tuple[str, ...]
) -> None:
    configure(hermes_cli)
    found_names(hermes_cli)
    done = hermes_cli.run(*command, "--json")
    assert BOX_TOOL in done.stdout
    assert starts(hermes_cli, "box") == 1


def test_tools_call_waits_for_its_own_server_alone_not_for_one_that_hangs(
    hermes_cli: HermesCli,
) -> None:
    configure(hermes_cli, hang=True, hang_timeout=40)  # neither server has a manifest
    began = time.monotonic()
    done = hermes_cli.run("tools", "call", BOX_TOOL, BOX_CALL, "--yes", "--json")
    took = time.monotonic() - began
    assert json.loads(done.stdout)["is_error"] is False
    assert took < 20, f"the call took {took:.1f} s; the hanging server's connect_timeout is 40 s"


@pytest.mark.parametrize("known", [False, True], ids=["tools-unknown", "tools-known"])
def test_a_server_fixed_after_a_failed_connect_answers_the_next_call(
    hermes_cli: HermesCli, known: bool
) -> None:
    configure(hermes_cli)
    if known:
        found_names(hermes_cli)
    broken = hermes_cli.root / "broken"
    broken.touch()
    failed = hermes_cli.run("tools", "call", BOX_TOOL, BOX_CALL, "--yes", "--json", ok=False)
    assert failed.returncode == 1
    assert BROKEN_SEEN in failed.stdout
    broken.unlink()
    fixed = hermes_cli.run("tools", "call", BOX_TOOL, BOX_CALL, "--yes", "--json")
    assert json.loads(fixed.stdout)["is_error"] is False, fixed.stdout
    started = starts(hermes_cli, "box")
    # The connect cleared the recorded failure: a read-only command answers from the new
    # listing, without a word about the failure and without starting the server.
    again = hermes_cli.run("tools", "search", QUERY)
    assert BOX_TOOL in again.stdout
    assert "unavailable" not in again.stderr
    assert starts(hermes_cli, "box") == started


def configure_slow_toolbox(cli: HermesCli, **fields: object) -> Path:
    """Server ``box`` (with ``fields``): the toolbox server behind a script that takes 4 s to
    start while the returned file exists; its tools are listed first (a fast start, the
    default timeouts) so that the manifest knows them."""
    slow = cli.root / "slow"
    script = cli.root / "slow-server.sh"
    script.write_text(
        f'#!/bin/sh\nif [ -e "{slow}" ]; then sleep 4; fi\nexec "{sys.executable}" "{TOOLBOX}"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    entry: dict[str, object] = {"command": str(script)}
    cli.config.write_text(json.dumps({"mcp_servers": {"box": entry}}), encoding="utf-8")
    assert "mcp__box__echo" in cli.run("tools", "list", "--json").stdout
    # The timeouts are no part of the manifest's key: the listing stays known.
    entry.update(fields)
    cli.config.write_text(json.dumps({"mcp_servers": {"box": entry}}), encoding="utf-8")
    slow.touch()
    return slow


def call_box(cli: HermesCli, tool: str, arguments: str) -> dict[str, object]:
    done = cli.run("tools", "call", f"mcp__box__{tool}", arguments, "--yes", "--json", ok=False)
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.slow  # about 8 s: a slow-starting server and a timed-out call
def test_a_calls_timeout_does_not_count_the_start_of_its_server(hermes_cli: HermesCli) -> None:
    configure_slow_toolbox(hermes_cli, timeout=3)
    result = call_box(hermes_cli, "echo", '{"text": "after a slow start"}')
    assert result["is_error"] is False, result
    assert "echo: after a slow start" in json.dumps(result)


def test_a_call_past_its_timeout_names_the_server_and_the_timeout(hermes_cli: HermesCli) -> None:
    configure_slow_toolbox(hermes_cli, timeout=2).unlink()
    result = call_box(hermes_cli, "sleep", '{"seconds": 30}')
    assert (result["is_error"], result["error_code"]) == (True, "TIMEOUT")
    message = json.dumps(result)
    assert "'box'" in message
    assert "mcp_servers.box.timeout" in message


def test_a_server_that_starts_past_connect_timeout_fails_the_call_naming_connect_timeout(
    hermes_cli: HermesCli,
) -> None:
    configure_slow_toolbox(hermes_cli, timeout=30, connect_timeout=2)
    result = call_box(hermes_cli, "echo", '{"text": "never"}')
    assert result["is_error"] is True
    message = json.dumps(result)
    assert "'box'" in message
    assert "mcp_servers.box.connect_timeout" in message

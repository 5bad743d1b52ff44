"""Only the server a call needs is started, and a recorded failure ends with its cause.

Every test runs the real ``hermes`` command as a subprocess. The servers are the real
``toolbox.py`` started through ``sh``, which first touches a marker file of the server's own:
a marker that exists means hermes started that server. The ``sh`` ignores SIGTERM until the
marker is written, so a server started and ended at once still leaves its marker.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from realservers import TOOLBOX

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

LATE = Path(__file__).resolve().parents[1] / "serve" / "servers" / "late.py"
"""A server that never answers while its ready file does not exist."""
SERVERS = ("alpha", "bravo", "charlie", "delta", "echo")
MARKED = 'trap "" TERM; touch "$1"; trap - TERM; shift; exec "$@"'


def marked_entry(marker: Path, **fields: Any) -> dict[str, Any]:
    """A stdio entry running the toolbox behind ``sh``, which touches ``marker`` first."""
    return {
        "command": "/bin/sh",
        "args": ["-c", MARKED, "sh", str(marker), sys.executable, str(TOOLBOX)],
        **fields,
    }


def five_servers(tmp_path: Path) -> tuple[HermesCli, dict[str, Path]]:
    """A home configured with the five marked servers, and each server's marker."""
    cli = InProcessCli(tmp_path)
    markers = {name: tmp_path / "markers" / name for name in SERVERS}
    (tmp_path / "markers").mkdir()
    servers = {name: marked_entry(marker) for name, marker in markers.items()}
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")
    (cli.work / "notes.txt").write_text("hello from the project\n", encoding="utf-8")
    return cli, markers


def started(markers: dict[str, Path]) -> list[str]:
    return sorted(name for name, marker in markers.items() if marker.exists())


def test_a_core_tool_call_starts_no_server(tmp_path: Path) -> None:
    cli, markers = five_servers(tmp_path)
    done = cli.run("tools", "call", "read_file", json.dumps({"path": "notes.txt"}))
    assert "hello from the project" in done.stdout
    assert started(markers) == []


@pytest.mark.slow
def test_a_core_tool_call_starts_no_server_whose_tools_are_known(tmp_path: Path) -> None:
    cli, markers = five_servers(tmp_path)
    cli.run("mcp", "list")  # every server listed once: their manifests are saved
    assert started(markers) == list(SERVERS)
    for marker in markers.values():
        marker.unlink()
    done = cli.run("tools", "call", "read_file", json.dumps({"path": "notes.txt"}))
    assert "hello from the project" in done.stdout
    assert started(markers) == []


@pytest.mark.slow
def test_a_call_of_an_mcp_tool_starts_its_server_only(tmp_path: Path) -> None:
    cli, markers = five_servers(tmp_path)
    done = cli.run("tools", "call", "mcp__charlie__echo", json.dumps({"text": "hi"}))
    assert "hi" in done.stdout
    assert started(markers) == ["charlie"]
    for marker in markers.values():
        marker.unlink(missing_ok=True)
    # Known from its manifest now: the call starts it again, and still no other.
    done = cli.run("tools", "call", "mcp__charlie__echo", json.dumps({"text": "again"}))
    assert "again" in done.stdout
    assert started(markers) == ["charlie"]


@pytest.mark.slow
def test_a_fixed_variable_is_used_at_once_not_reported_as_unset(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    marker = tmp_path / "started"
    entry = marked_entry(marker)
    entry["args"] = [*entry["args"][:-1], "${TOOLBOX_SCRIPT}"]
    cli.config.write_text(json.dumps({"mcp_servers": {"box": entry}}), encoding="utf-8")

    failed = cli.run("mcp", "list", "--json", ok=False)
    assert failed.returncode == 1
    [row] = json.loads(failed.stdout)
    assert row["status"] == "unavailable"
    assert "${TOOLBOX_SCRIPT} is not set" in row["reason"]

    # Fixed in the environment: the next command starts the server at once.
    fixed = cli.run("mcp", "list", "--json", env=cli.variables(TOOLBOX_SCRIPT=str(TOOLBOX)))
    [row] = json.loads(fixed.stdout)
    assert row["status"] == "connected", row
    assert "not set" not in fixed.stderr
    assert marker.exists()


@pytest.mark.slow
def test_a_variable_fixed_in_the_dotenv_is_used_at_once(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    entry = marked_entry(tmp_path / "started")
    entry["args"] = [*entry["args"][:-1], "${TOOLBOX_SCRIPT}"]
    cli.config.write_text(json.dumps({"mcp_servers": {"box": entry}}), encoding="utf-8")
    assert "is not set" in cli.run("tools", "search", "echo", ok=False).stderr

    (cli.home / ".env").write_text(f"TOOLBOX_SCRIPT={TOOLBOX}\n", encoding="utf-8")
    found = cli.run("tools", "search", "echo the text", "--json")
    assert "mcp__box__echo" in found.stdout
    assert "not set" not in found.stderr


def test_a_failure_whose_cause_is_unchanged_is_still_served(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    marker = tmp_path / "started"
    entry = marked_entry(marker)
    entry["args"] = [*entry["args"][:-1], "${TOOLBOX_SCRIPT}"]
    cli.config.write_text(json.dumps({"mcp_servers": {"box": entry}}), encoding="utf-8")
    cli.run("mcp", "list", ok=False)
    again = cli.run("mcp", "list", "--json", ok=False)
    [row] = json.loads(again.stdout)
    assert row["status"] == "unavailable"
    assert row["recorded"] is True
    assert "not set" in row["reason"]
    assert not marker.exists()


@pytest.mark.slow
def test_a_search_waits_briefly_for_a_hung_server_without_a_manifest(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    box = {"command": sys.executable, "args": [str(TOOLBOX)]}
    cli.config.write_text(json.dumps({"mcp_servers": {"box": box}}), encoding="utf-8")
    cli.run("mcp", "list")  # box is known from its manifest; nothing is known of the hung one
    hung = {"command": sys.executable, "args": [str(LATE), str(tmp_path / "never")]}
    servers = {"box": box, "hung": {**hung, "connect_timeout": 30}}
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")

    begun = time.monotonic()
    found = cli.run("tools", "call", "tool_search", json.dumps({"queries": ["echo the text"]}))
    took = time.monotonic() - begun
    assert "mcp__box__echo" in found.stdout
    # Not the hung server's 30 s connect_timeout: a few seconds (5 and a CLI's start).
    assert took < 20, f"tool_search took {took:.1f} s"


@pytest.mark.slow
def test_a_script_calling_an_mcp_tool_starts_that_server_only(tmp_path: Path) -> None:
    cli, markers = five_servers(tmp_path)
    code = 'from hermes_tools import call\nprint(call("mcp__delta__echo", text="from a script"))\n'
    done = cli.run("tools", "call", "execute_code", json.dumps({"code": code}), "--yes")
    assert "from a script" in done.stdout
    assert started(markers) == ["delta"]

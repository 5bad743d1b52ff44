"""Text that comes from outside (an MCP server's tool listing, a cloned project's plugin.yaml)
never reaches the terminal as control characters: ``hermes mcp test``, ``tools describe`` and
``plugins info`` show them escaped, as the tables of ``columns`` do. An OSC 52 sequence would
write the user's clipboard; a CSI one could clear the screen or hide a line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.testing._cli_in_process import InProcessCli

REPO_ROOT = Path(__file__).resolve().parents[1]
BADTOOLS = REPO_ROOT / "tests" / "mcp" / "servers" / "badtools.py"

HOSTILE = "Reads a note\x1b]52;c;ZWNobyBwd25lZA==\x07\x9b2J\u202eetoN"
SHOWN = "Reads a note\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x9b2J\\u202eetoN"


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _no_control_characters(text: str) -> None:
    # split at "\n" only: splitlines() would also take a raw \r, \x1c or \x85 for a break
    assert all(char.isprintable() for line in text.split("\n") for char in line), repr(text)


@pytest.mark.subprocess
def test_a_servers_tool_description_is_shown_escaped_by_mcp_test_and_tools_describe(
    cli: InProcessCli, tmp_path: Path
) -> None:
    listing = tmp_path / "listing.json"
    schema = {"type": "object", "properties": {}}
    listing.write_text(
        json.dumps([{"name": "note", "description": HOSTILE, "inputSchema": schema}]),
        encoding="utf-8",
    )
    cli.config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "notes": {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
                }
            }
        ),
        encoding="utf-8",
    )

    probed = cli.run("mcp", "test", "notes").stdout
    described = cli.run("tools", "describe", "mcp__notes__note").stdout

    for out in (probed, described):
        _no_control_characters(out)
        assert SHOWN in out


def test_a_project_plugins_manifest_is_shown_escaped_by_plugins_info(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    # A cloned repository's plugin is gated (its code never runs), but its manifest is read.
    manifest = {"description": HOSTILE, "author": "Ann\x1b[2J"}
    hermes_dir_plugin(cli.work / ".hermes" / "plugins", "notes", "", manifest=manifest)

    out = cli.run("plugins", "info", "notes").stdout

    _no_control_characters(out)
    assert f"description:     {SHOWN}\n" in out
    assert "author:          Ann\\x1b[2J\n" in out


def test_a_server_name_of_a_projects_mcp_json_is_shown_escaped_by_import_agent(
    cli: InProcessCli,
) -> None:
    # A cloned repository's .mcp.json: the name is refused (not a server name), and said so.
    servers = {"notes" + HOSTILE: {"command": "notes"}}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    done = cli.run("import-agent", "claude-code", "--project", "--dry-run")

    _no_control_characters(done.stdout + done.stderr)
    assert f"skipped: notes{SHOWN} from project scope" in done.stdout


def test_a_secret_moved_from_a_projects_mcp_json_is_named_escaped_by_import_agent(
    cli: InProcessCli,
) -> None:
    # The variable's name in .mcp.json is the repository's text too: the line saying where its
    # secret goes names it.
    secret = "sk-" + "a1b2c3d4" * 5
    servers = {"notes": {"command": "notes", "env": {"TOKEN" + HOSTILE: secret}}}
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    done = cli.run("import-agent", "claude-code", "--project", "--dry-run")

    _no_control_characters(done.stdout + done.stderr)
    assert f"notes.env.TOKEN{SHOWN} -> ${{" in done.stdout

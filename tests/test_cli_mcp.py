"""``hermes mcp``: run as a real subprocess against real servers, a temporary HERMES_HOME and a
real config.yaml."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from ruamel.yaml import YAML

from hermes_core.config import load_config
from hermes_core.host import Host
from hermes_core.paths import Environment
from hermes_core.testing import HermesCli
from hermes_core.tools import ToolResult

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOLBOX = REPO_ROOT / "tests" / "mcp" / "servers" / "toolbox.py"
TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

COMMENTED = """\
# my hermes settings
tools:
  tool_search:
    threshold_pct: 10  # keep the listing small
mcp_servers:  # servers I use
  echoer:
    command: echo  # not a real server
"""


class Cli(HermesCli):
    """``hermes_cli`` given ``--config`` explicitly, with the two files ``hermes mcp`` edits."""

    @property
    def dotenv(self) -> Path:
        return self.home / ".env"

    def servers(self) -> dict[str, Any]:
        data = YAML(typ="safe").load(self.config.read_text(encoding="utf-8")) or {}
        servers: dict[str, Any] = data.get("mcp_servers") or {}
        return servers


@pytest.fixture
def cli(hermes_cli: HermesCli) -> Cli:
    home = hermes_cli.home
    return Cli(hermes_cli.root, home=home, work=hermes_cli.work, config_file=home / "config.yaml")


def write_servers(cli: Cli, servers: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")


# add / remove -----------------------------------------------------------------------------


def test_add_stdio_server_keeps_the_comments_of_config_yaml(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    cli.run("mcp", "add", "time", "--", sys.executable, *TIME_ARGS)
    text = cli.config.read_text(encoding="utf-8")
    assert text.startswith(COMMENTED.split("echoer:")[0])
    assert "# keep the listing small" in text
    assert "# not a real server" in text
    assert cli.servers()["time"] == {"command": sys.executable, "args": TIME_ARGS}


def test_add_url_server_with_headers(cli: Cli) -> None:
    cli.run(
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:8765/mcp",
        "--header",
        "Authorization=Bearer ${REMOTE_TOKEN}",
    )
    assert cli.servers()["remote"] == {
        "url": "http://127.0.0.1:8765/mcp",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }


def test_add_env_secret_goes_to_dotenv_and_config_gets_a_template(cli: Cli) -> None:
    cli.run("mcp", "add", "box", "--env", "BOX_TOKEN=s3cret value", "--", sys.executable, "x.py")
    assert cli.servers()["box"]["env"] == {"BOX_TOKEN": "${BOX_TOKEN}"}
    assert "s3cret" not in cli.config.read_text(encoding="utf-8")
    assert cli.dotenv.read_text(encoding="utf-8") == 'BOX_TOKEN="s3cret value"\n'
    assert cli.dotenv.stat().st_mode & 0o077 == 0  # a new .env is private to the user


def test_add_existing_server_is_refused_without_force(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    done = cli.run("mcp", "add", "echoer", "--", "cat", ok=False)
    assert done.returncode == 2
    assert "mcp_servers.echoer already exists" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == COMMENTED
    cli.run("mcp", "add", "echoer", "--force", "--", "cat")
    assert cli.servers()["echoer"] == {"command": "cat", "args": []}


def test_add_needs_exactly_one_of_command_and_url(cli: Cli) -> None:
    done = cli.run("mcp", "add", "nothing", ok=False)
    assert done.returncode == 2
    assert "give either '-- COMMAND [ARGS...]' or '--url URL'" in done.stderr
    done = cli.run("mcp", "add", "bad.name", "--", "cat", ok=False)
    assert "letters, digits, '-' and single '_'" in done.stderr
    assert not cli.config.exists()


def test_remove_deletes_the_server_and_keeps_comments(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    cli.run("mcp", "add", "other", "--", "cat")
    cli.run("mcp", "remove", "echoer")
    text = cli.config.read_text(encoding="utf-8")
    assert "echoer" not in text
    assert "# keep the listing small" in text
    assert list(cli.servers()) == ["other"]


def test_remove_unknown_server_names_the_configured_ones(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    done = cli.run("mcp", "remove", "nope", ok=False)
    assert done.returncode == 2
    assert "no MCP server 'nope' in mcp_servers (configured: echoer)" in done.stderr


def test_managed_config_is_not_edited(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    done = cli.run("mcp", "add", "x", "--", "cat", ok=False, env=cli.variables(HERMES_MANAGED="1"))
    assert done.returncode == 2
    assert "managed by Nix or an administrator" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == COMMENTED


# list / test ------------------------------------------------------------------------------


def test_list_json_shows_transport_status_and_counts(cli: Cli) -> None:
    write_servers(
        cli,
        {
            "time": {"command": sys.executable, "args": TIME_ARGS, "exclude": ["convert_*"]},
            "broken": {"command": str(cli.root / "no-such-server")},
            "off": {"command": sys.executable, "args": TIME_ARGS, "enabled": False},
        },
    )
    rows = {row["name"]: row for row in json.loads(cli.run("mcp", "list", "--json").stdout)}
    assert list(rows) == ["time", "broken", "off"]
    assert rows["time"]["transport"] == "stdio"
    assert rows["time"]["status"] == "connected"
    assert (rows["time"]["tool_count"], rows["time"]["filtered_count"]) == (1, 1)
    assert rows["broken"]["status"] == "unavailable"
    assert "no-such-server" in rows["broken"]["reason"]
    assert rows["off"]["status"] == "disabled"
    assert rows["off"]["tool_count"] == 0


def test_list_table_warns_about_patterns_matching_nothing(cli: Cli) -> None:
    write_servers(
        cli, {"time": {"command": sys.executable, "args": TIME_ARGS, "include": ["nothing_*"]}}
    )
    table = cli.run("mcp", "list").stdout.splitlines()
    assert table[0].split() == ["name", "transport", "status", "tools", "filtered", "note"]
    assert table[1].split()[:5] == ["time", "stdio", "connected", "0", "2"]
    assert "patterns matching nothing: nothing_*" in table[1]


def test_list_without_servers_says_so(cli: Cli) -> None:
    assert "No MCP servers configured" in cli.run("mcp", "list").stdout


def test_test_connects_lists_tools_and_times_it(cli: Cli) -> None:
    write_servers(
        cli, {"time": {"command": sys.executable, "args": TIME_ARGS, "exclude": ["convert_*"]}}
    )
    out = cli.run("mcp", "test", "time").stdout
    assert "time: connected and listed 2 tools in " in out
    assert " ms (protocol " in out
    assert "  get_current_time  Get current time" in out
    assert "  convert_time [filtered]" in out
    report = json.loads(cli.run("mcp", "test", "time", "--json").stdout)
    assert [tool["name"] for tool in report["tools"]] == ["get_current_time", "convert_time"]
    assert report["connect_seconds"] > 0


def test_test_of_a_failing_server_says_why(cli: Cli) -> None:
    write_servers(cli, {"broken": {"command": str(cli.root / "no-such-server")}})
    done = cli.run("mcp", "test", "broken", ok=False)
    assert done.returncode == 2
    assert "MCP server 'broken' did not answer the probe" in done.stderr
    assert "no-such-server" in done.stderr
    done = cli.run("mcp", "test", "other", ok=False)
    assert "no MCP server 'other' in mcp_servers (configured: broken)" in done.stderr


# catalog ----------------------------------------------------------------------------------


def test_catalog_lists_the_curated_servers(cli: Cli) -> None:
    entries = {e["name"]: e for e in json.loads(cli.run("mcp", "catalog", "--json").stdout)}
    assert {"time", "git", "everything", "fetch", "filesystem", "github"} <= set(entries)
    assert entries["github"]["required_env"] == ["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert entries["time"]["command"] == "{python}"
    assert entries["everything"]["command"] == "npx"
    assert all(entry["description"] for entry in entries.values())
    assert "github" in cli.run("mcp", "catalog").stdout
    assert not cli.config.exists()  # listing the catalog enables nothing


def test_catalog_install_time_writes_the_server_after_the_probe(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    out = cli.run("mcp", "catalog", "install", "time").stdout
    assert "Installed time as mcp_servers.time" in out
    assert "2 tools answered" in out
    assert cli.servers()["time"] == {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    assert "# not a real server" in cli.config.read_text(encoding="utf-8")
    rows = json.loads(cli.run("mcp", "list", "--json").stdout)
    assert {"name": "time", "status": "connected"}.items() <= rows[1].items()


def test_catalog_install_with_a_failing_probe_writes_nothing(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    empty = cli.root / "empty-bin"
    empty.mkdir()
    done = cli.run(
        "mcp",
        "catalog",
        "install",
        "github",
        "--env",
        "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_secret",
        ok=False,
        env=cli.variables(PATH=str(empty)),  # no npx: the server cannot start
    )
    assert done.returncode == 2
    assert "MCP server 'github' did not answer the probe" in done.stderr
    assert "nothing was written" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == COMMENTED
    assert not cli.dotenv.exists()


def test_catalog_install_needs_the_required_env(cli: Cli) -> None:
    done = cli.run("mcp", "catalog", "install", "github", ok=False)
    assert done.returncode == 2
    assert "github needs GITHUB_PERSONAL_ACCESS_TOKEN: pass --env" in done.stderr
    assert not cli.config.exists()


def test_catalog_install_existing_server_is_refused_without_force(cli: Cli) -> None:
    write_servers(cli, {"time": {"command": "cat"}})
    before = cli.config.read_text(encoding="utf-8")
    done = cli.run("mcp", "catalog", "install", "time", ok=False)
    assert "mcp_servers.time already exists" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == before
    cli.run("mcp", "catalog", "install", "time", "--as", "clock")
    assert cli.servers()["clock"]["args"] == ["-m", "mcp_server_time"]


def test_catalog_install_puts_secrets_in_dotenv_never_in_config(cli: Cli) -> None:
    catalog = cli.root / "catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "box": {
                    "description": "the test toolbox",
                    "install": "ships with the tests",
                    "command": "{python}",
                    "args": [str(TOOLBOX)],
                    "required_env": ["BOX_TOKEN"],
                }
            }
        ),
        encoding="utf-8",
    )
    cli.dotenv.write_text("# my secrets\nOTHER=1\n", encoding="utf-8")
    cli.config.write_text("approvals:\n  allow: ['mcp__box__*']\n", encoding="utf-8")
    cli.run(
        "mcp",
        "catalog",
        "install",
        "box",
        "--env",
        "BOX_TOKEN=tok-123",
        env=cli.variables(HERMES_MCP_CATALOG=str(catalog)),
    )
    assert cli.servers()["box"]["env"] == {"BOX_TOKEN": "${BOX_TOKEN}"}
    assert "tok-123" not in cli.config.read_text(encoding="utf-8")
    assert cli.dotenv.read_text(encoding="utf-8") == "# my secrets\nOTHER=1\nBOX_TOKEN=tok-123\n"
    # The server reads the secret from .env at connect time.
    config = load_config(cli.config)
    env = Environment(
        home=cli.home,
        cwd=cli.work,
        variables={"HERMES_STRICT_PLUGINS": "1", "HERMES_LOG_DIR": str(cli.log_dir)},
    )

    async def ask_server() -> ToolResult:
        async with Host(config, env) as host:
            return await host.dispatch("mcp__box__env", {"name": "BOX_TOKEN"}, host.new_session())

    assert anyio.run(ask_server).text_content == "tok-123"

"""``hermes mcp``: run in the test's process (:class:`InProcessCli`) against real servers, a
temporary HERMES_HOME and a real config.yaml; the subcommands also run once as the real
subprocess (:func:`test_the_mcp_commands_as_subprocesses`)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from ruamel.yaml import YAML

from hermes_core._config import load_config
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._tools import ToolResult
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOLBOX = REPO_ROOT / "tests" / "mcp" / "servers" / "toolbox.py"
SPAWNER = REPO_ROOT / "tests" / "mcp" / "servers" / "spawner.py"
TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
"""The PyPI ``mcp-server-time``, where the test's point is a published server's module found by
the interpreter the entry names; elsewhere the stdlib toolbox server is the real server."""

COMMENTED = """\
# my hermes settings
tools:
  tool_search:
    threshold_pct: 10  # keep the listing small
mcp_servers:  # servers I use
  echoer:
    command: echo  # not a real server
"""


class Cli(InProcessCli):
    """``hermes`` in this process, given ``--config`` explicitly, with the two files
    ``hermes mcp`` edits."""

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


def python3_on_path(cli: Cli) -> tuple[Path, dict[str, str]]:
    """A ``bin`` directory first on ``PATH`` whose ``python3`` runs this interpreter (the
    virtual environment of the tests, which has the servers), as an activated environment's
    does; returns that ``python3`` and the command's environment."""
    bin_dir = cli.root / "venv-bin"
    bin_dir.mkdir(exist_ok=True)
    python3 = bin_dir / "python3"
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python3.chmod(0o755)
    path = os.pathsep.join((str(bin_dir), cli.variables()["PATH"]))
    return python3, cli.variables(PATH=path)


def live_pids(marker: str) -> list[int]:
    """Live (not zombie) processes anywhere whose command line contains ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state != "Z" and marker in cmdline:
            found.append(int(entry.name))
    return found


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
    assert "give the server's command ('-- COMMAND [ARGS...]') or its URL" in done.stderr
    assert "not both" not in done.stderr
    done = cli.run("mcp", "add", "twice", "--url", "http://127.0.0.1:9/mcp", "--", "cat", ok=False)
    assert done.returncode == 2
    assert "give '-- COMMAND [ARGS...]' or '--url URL', not both" in done.stderr
    done = cli.run("mcp", "add", "bad.name", "--", "cat", ok=False)
    assert "letters, digits, '-' and single '_'" in done.stderr
    assert not cli.config.exists()


def test_add_of_a_url_that_is_not_http_is_refused_naming_the_key_and_writes_nothing(
    cli: Cli,
) -> None:
    for url in ("not a url", "ftp://example.com/mcp", "https://"):
        done = cli.run("mcp", "add", "remote", "--url", url, ok=False)
        assert done.returncode == 2
        assert "mcp_servers.remote.url: expected an http:// or https:// URL, got" in done.stderr
        assert not cli.config.exists()
    # A reference is expanded at connect time, so it is not judged here.
    cli.run("mcp", "add", "remote", "--url", "${REMOTE_MCP_URL}")
    assert "${REMOTE_MCP_URL}" in cli.config.read_text()


def test_add_header_credential_goes_to_dotenv_and_config_gets_a_reference(cli: Cli) -> None:
    done = cli.run(
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:8765/mcp",
        "--header",
        "Authorization=Bearer abc123",
        "--header",
        "X-Api-Key=k-456",
        "--header",
        "Accept=application/json",
    )
    assert cli.servers()["remote"]["headers"] == {
        "Authorization": "Bearer ${REMOTE_AUTHORIZATION}",
        "X-Api-Key": "${REMOTE_X_API_KEY}",
        "Accept": "application/json",
    }
    text = cli.config.read_text(encoding="utf-8")
    assert "abc123" not in text
    assert "k-456" not in text
    assert cli.dotenv.read_text(encoding="utf-8") == (
        "REMOTE_AUTHORIZATION=abc123\nREMOTE_X_API_KEY=k-456\n"
    )
    assert stat.S_IMODE(cli.dotenv.stat().st_mode) == 0o600
    said = [line for line in done.stdout.splitlines() if "kept out of config.yaml" in line]
    assert said == [
        f"Secrets kept out of config.yaml, in {cli.dotenv}: headers.Authorization -> "
        "${REMOTE_AUTHORIZATION}, headers.X-Api-Key -> ${REMOTE_X_API_KEY}."
    ]


def test_add_env_secret_never_replaces_another_value_in_dotenv(cli: Cli) -> None:
    cli.dotenv.write_text("# my secrets\nBOX_TOKEN=first\n", encoding="utf-8")
    os.chmod(cli.dotenv, 0o644)
    cli.run("mcp", "add", "box2", "--env", "BOX_TOKEN=second", "--", sys.executable, "x.py")
    assert cli.servers()["box2"]["env"] == {"BOX_TOKEN": "${BOX2_BOX_TOKEN}"}
    assert cli.dotenv.read_text(encoding="utf-8") == (
        "# my secrets\nBOX_TOKEN=first\nBOX2_BOX_TOKEN=second\n"
    )
    assert stat.S_IMODE(cli.dotenv.stat().st_mode) == 0o600
    # The same value again is the same variable: nothing new is written.
    cli.run("mcp", "add", "box3", "--env", "BOX_TOKEN=first", "--", sys.executable, "x.py")
    assert cli.servers()["box3"]["env"] == {"BOX_TOKEN": "${BOX_TOKEN}"}
    assert cli.dotenv.read_text(encoding="utf-8").count("first") == 1


def test_add_env_template_stays_a_template(cli: Cli) -> None:
    cli.run("mcp", "add", "gh", "--env", "TOKEN=${GITHUB_TOKEN}", "--", "github-mcp-server")
    assert cli.servers()["gh"]["env"] == {"TOKEN": "${GITHUB_TOKEN}"}
    assert not cli.dotenv.exists()


def test_add_resolves_a_bare_python_to_the_interpreter_it_means_now(cli: Cli) -> None:
    python3, variables = python3_on_path(cli)
    done = cli.run("mcp", "add", "time", "--", "python3", *TIME_ARGS, env=variables)
    assert cli.servers()["time"] == {"command": str(python3), "args": TIME_ARGS}
    assert f"python3 is {python3} here; the entry keeps that path" in done.stdout
    # Started without that PATH (as Claude Desktop starts hermes), it is still that Python.
    out = cli.run("mcp", "test", "time").stdout
    assert "time: connected and listed 2 tools" in out
    cli.run("mcp", "add", "other", "--", "node", "server.js")
    assert cli.servers()["other"]["command"] == "node"


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


def test_remove_of_a_mistyped_name_names_the_closest(cli: Cli) -> None:
    # journey5's walk: `mcp test echoe` named the closest server, `mcp remove echoe` did not.
    cli.config.write_text(COMMENTED, encoding="utf-8")
    done = cli.run("mcp", "remove", "echoe", ok=False)
    assert done.returncode == 2
    assert "(configured: echoer). Did you mean 'echoer'?" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == COMMENTED


def test_managed_config_is_not_edited(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    done = cli.run("mcp", "add", "x", "--", "cat", ok=False, env=cli.variables(HERMES_MANAGED="1"))
    assert done.returncode == 2
    assert "managed by Nix or an administrator" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == COMMENTED


# list / test ------------------------------------------------------------------------------


@pytest.mark.slow  # about 9 s: every mcp command as its own process
def test_the_mcp_commands_as_subprocesses(cli: Cli) -> None:
    cli.config.write_text(COMMENTED, encoding="utf-8")
    cli.subprocess_run("mcp", "add", "time", "--", sys.executable, *TIME_ARGS)
    assert "# not a real server" in cli.config.read_text(encoding="utf-8")
    out = cli.subprocess_run("mcp", "test", "time").stdout
    assert "time: connected and listed 2 tools in " in out
    listed = cli.subprocess_run("mcp", "list", "--json", ok=False)
    assert listed.returncode == 1, "echoer is no server"
    assert {row["name"]: row["status"] for row in json.loads(listed.stdout)} == {
        "echoer": "unavailable",
        "time": "connected",
    }
    cli.subprocess_run("mcp", "remove", "echoer")
    assert list(cli.servers()) == ["time"]
    catalog = json.loads(cli.subprocess_run("mcp", "catalog", "--json").stdout)
    assert "time" in {entry["name"] for entry in catalog}


def test_list_json_shows_transport_status_and_counts(cli: Cli) -> None:
    write_servers(
        cli,
        {
            "box": {"command": sys.executable, "args": [str(TOOLBOX)], "exclude": ["delete_*"]},
            "broken": {"command": str(cli.root / "no-such-server")},
            "off": {"command": sys.executable, "args": [str(TOOLBOX)], "enabled": False},
        },
    )
    done = cli.run("mcp", "list", "--json", ok=False)
    assert done.returncode == 1, "a server is unavailable"
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert list(rows) == ["box", "broken", "off"]
    assert rows["box"]["transport"] == "stdio"
    assert rows["box"]["status"] == "connected"
    assert (rows["box"]["tool_count"], rows["box"]["filtered_count"]) == (6, 1)
    assert rows["broken"]["status"] == "unavailable"
    assert "no-such-server" in rows["broken"]["reason"]
    assert rows["off"]["status"] == "disabled"
    assert rows["off"]["tool_count"] == 0


def test_list_table_warns_about_patterns_matching_nothing(cli: Cli) -> None:
    write_servers(
        cli, {"box": {"command": sys.executable, "args": [str(TOOLBOX)], "include": ["nothing_*"]}}
    )
    table = cli.run("mcp", "list").stdout.splitlines()
    assert table[0].split() == [
        "name",
        "transport",
        "status",
        "tools",
        "filtered",
        "manifest",
        "note",
    ]
    assert table[1].split()[:7] == ["box", "stdio", "connected", "0", "7", "0", "s"]
    assert "patterns matching nothing: nothing_*" in table[1]


def test_list_exits_1_when_a_server_is_unavailable(cli: Cli) -> None:
    write_servers(cli, {"broken": {"command": str(cli.root / "no-such-server")}})
    done = cli.run("mcp", "list", ok=False)
    assert done.returncode == 1
    assert "unavailable" in done.stdout.splitlines()[1]


def test_server_stderr_goes_to_its_log_and_a_failure_shows_the_last_lines(cli: Cli) -> None:
    crash = "import sys; print('BANNER of the server', file=sys.stderr); raise SystemExit(3)"
    write_servers(
        cli,
        {
            "crash": {"command": sys.executable, "args": ["-c", crash]},
            "box": {"command": sys.executable, "args": [str(TOOLBOX)]},
        },
    )
    done = cli.run("mcp", "list", ok=False)
    log = cli.log_dir / "mcp-crash.log"
    assert "BANNER" not in done.stderr, "a server's stderr never reaches the terminal"
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert "the server exited with status 3 before it answered" in lines[1]
    assert f"crash: its standard error (last lines, {log}):" in lines
    assert "  BANNER of the server" in lines
    assert f"The standard error of stdio servers is logged in {cli.log_dir}/mcp-NAME.log." in lines
    assert "BANNER of the server" in log.read_text(encoding="utf-8")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(cli.log_dir.stat().st_mode) == 0o700
    probe = cli.run("mcp", "test", "crash", ok=False)
    assert probe.returncode == 1
    assert "MCP server 'crash' did not answer the probe" in probe.stderr
    assert f"its standard error (last lines, {log}):\n  BANNER of the server" in probe.stderr
    assert log.read_text(encoding="utf-8").count("BANNER") == 2, "appended, one line per run"
    assert (
        f"Its standard error is logged in {cli.log_dir}/mcp-box.log."
        in cli.run("mcp", "test", "box").stdout
    )


def test_a_server_the_project_gate_refuses_is_said_refused_not_unanswering(cli: Cli) -> None:
    """``mcp test`` of a ``uv run`` server in a project holding a ``.venv`` said "did not answer
    the probe: not started: ..." and where its standard error is logged: it was never started,
    so never asked. It is said as the project gate's refusal, with the way out."""
    (cli.work / ".venv").mkdir()
    write_servers(cli, {"srv": {"command": "uv", "args": ["run", "server.py"]}})

    done = cli.run("mcp", "test", "srv", ok=False)

    assert done.returncode == 1
    assert done.stderr.startswith(
        "hermes: error: MCP server 'srv' was refused by the project gate (not started): "
        "`uv run` reads "
    )
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in done.stderr
    assert "did not answer the probe" not in done.stderr
    assert "standard error" not in done.stderr


def test_a_missing_module_names_the_interpreter_that_ran(cli: Cli) -> None:
    python3, variables = python3_on_path(cli)
    write_servers(cli, {"nomod": {"command": "python3", "args": ["-m", "no_such_module_xyz"]}})
    done = cli.run("mcp", "test", "nomod", ok=False, env=variables)
    assert done.returncode == 1
    assert f"the interpreter {python3} has no module named 'no_such_module_xyz'" in done.stderr
    assert "No module named no_such_module_xyz" in done.stderr  # the server's own last line


def test_a_missing_module_says_how_to_install_it_for_that_interpreter(cli: Cli) -> None:
    """README's `hermes mcp add time -- python3 -m mcp_server_time` in an install without the
    server said only that the module was missing; it says what to do too."""
    python3, variables = python3_on_path(cli)
    write_servers(cli, {"nomod": {"command": "python3", "args": ["-m", "no_such_module_xyz"]}})

    done = cli.run("mcp", "list", ok=False, env=variables)

    assert done.returncode == 1
    assert (
        f"the interpreter {python3} has no module named 'no_such_module_xyz': install the "
        f"server's package there ({python3} -m pip install PACKAGE)"
    ) in done.stdout + done.stderr


def test_a_missing_module_of_an_externally_managed_python_says_to_use_a_venv(cli: Cli) -> None:
    """A system Python marked EXTERNALLY-MANAGED (PEP 668: Debian's, Ubuntu's ``/usr/bin/python3``)
    refuses ``-m pip install``: the remedy said was one that fails there."""
    prefix = cli.root / "system"
    (prefix / "bin").mkdir(parents=True)
    python3 = prefix / "bin" / "python3"
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python3.chmod(0o755)
    (prefix / "lib" / "python3.11").mkdir(parents=True)
    (prefix / "lib" / "python3.11" / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\n", encoding="utf-8"
    )
    path = os.pathsep.join((str(prefix / "bin"), cli.variables()["PATH"]))
    write_servers(cli, {"nomod": {"command": "python3", "args": ["-m", "no_such_module_xyz"]}})

    done = cli.run("mcp", "list", ok=False, env=cli.variables(PATH=path))

    assert done.returncode == 1
    assert (
        f"the interpreter {python3} has no module named 'no_such_module_xyz': it is "
        "externally managed (PEP 668), so pip refuses to install there: make a virtual "
        f"environment ({python3} -m venv DIR, then DIR/bin/python -m pip install PACKAGE) and "
        "give DIR/bin/python as the server's command"
    ) in done.stdout + done.stderr


def test_one_shot_commands_do_not_reconnect(cli: Cli) -> None:
    # The hanging server keeps the start waiting 3 s, long enough for reconnects of the broken
    # one (after 1 s and 2 s) had the command scheduled any.
    write_servers(
        cli,
        {
            "broken": {"command": str(cli.root / "no-such-server")},
            "hang": {
                "command": sys.executable,
                "args": ["-c", "import time; time.sleep(600)"],
                "connect_timeout": 3,
            },
        },
    )
    done = cli.run("tools", "list")
    assert done.stderr.count("MCP server 'broken' is unavailable") == 1
    assert "reconnecting" not in done.stderr
    listed = cli.run("mcp", "list", ok=False)
    assert listed.stderr == "", "the table says it all"


def test_mcp_test_leaves_no_process_the_server_started(cli: Cli) -> None:
    marker = str(cli.root / "grandchild-of-the-probe")
    write_servers(cli, {"spawn": {"command": sys.executable, "args": [str(SPAWNER), marker]}})
    assert "spawn: connected and listed 1 tools" in cli.run("mcp", "test", "spawn").stdout
    assert live_pids(marker) == []


def test_list_without_servers_says_so(cli: Cli) -> None:
    assert "No MCP servers configured" in cli.run("mcp", "list").stdout


def test_list_shows_the_servers_of_a_project_config_as_gated_not_as_none(tmp_path: Path) -> None:
    # HERMES_HOME=./.hermes in a project (or a scratch home under the working directory): the
    # servers of its config.yaml are the project's, not started without the gate. The list
    # said "No MCP servers configured" with exit status 0, beside a warning that they were.
    repo = tmp_path / "repo"
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    marker = tmp_path / "server-started"
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    cli.config.write_text(json.dumps({"mcp_servers": {"box": server}}), encoding="utf-8")

    listed = cli.run("mcp", "list", "--json")
    table = cli.run("mcp", "list")

    assert not marker.exists()
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["transport"], row["status"]) == ("box", "stdio", "gated")
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in row["reason"]
    assert "No MCP servers configured" not in table.stdout
    assert table.stdout.splitlines()[1].split()[:3] == ["box", "stdio", "gated"]
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in table.stdout.splitlines()[1]


@pytest.mark.parametrize("command", ["test", "login"])
def test_test_and_login_name_a_server_of_a_held_back_project_config_as_gated(
    tmp_path: Path, command: str
) -> None:
    # They said "no MCP server 'box' in mcp_servers (configured: none)", as if the user had
    # mistyped a name that the file does declare.
    repo = tmp_path / "repo"
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    marker = tmp_path / "server-started"
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    cli.config.write_text(json.dumps({"mcp_servers": {"box": server}}), encoding="utf-8")

    done = cli.run("mcp", command, "box", ok=False)

    assert done.returncode == 2
    assert not marker.exists()
    assert "configured: none" not in done.stderr
    error = done.stderr.splitlines()[-1]
    assert error.startswith("hermes: error: MCP server 'box' will not be started")
    assert f"config at {cli.config} " in error
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in error


def test_logout_forgets_a_server_of_a_held_back_project_config(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    server = {"url": "http://127.0.0.1:9/mcp"}
    cli.config.write_text(json.dumps({"mcp_servers": {"box": server}}), encoding="utf-8")

    done = cli.run("mcp", "logout", "box")

    assert "No sign-in kept for 'box'" in done.stdout


def test_test_connects_lists_tools_and_times_it(cli: Cli) -> None:
    write_servers(
        cli, {"box": {"command": sys.executable, "args": [str(TOOLBOX)], "exclude": ["delete_*"]}}
    )
    out = cli.run("mcp", "test", "box").stdout
    assert "box: connected and listed 7 tools in " in out
    assert " ms (protocol " in out
    # The tools in columns, the descriptions lined up after the longest name (they ran on
    # right after each name, two spaces apart, at a different place on every line).
    longest = "  delete_everything [filtered]"
    assert f"{'  echo'.ljust(len(longest))}  Echo the text back.\n" in out
    assert f"{'  header'.ljust(len(longest))}  The value of one HTTP request header" in out
    assert f"{longest}  Pretends to delete everything.\n" in out
    report = json.loads(cli.run("mcp", "test", "box", "--json").stdout)
    assert [tool["name"] for tool in report["tools"]] == [
        "echo",
        "add",
        "sleep",
        "fail",
        "env",
        "header",
        "delete_everything",
    ]
    assert report["connect_seconds"] > 0


def test_test_of_a_failing_server_says_why(cli: Cli) -> None:
    write_servers(cli, {"broken": {"command": str(cli.root / "no-such-server")}})
    done = cli.run("mcp", "test", "broken", ok=False)
    assert done.returncode == 1, "the server did not answer"
    assert "MCP server 'broken' did not answer the probe" in done.stderr
    assert "no-such-server" in done.stderr
    done = cli.run("mcp", "test", "other", ok=False)
    assert done.returncode == 2, "a wrong command line"
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
    listed = cli.run("mcp", "list", "--json", ok=False)
    assert listed.returncode == 1, "'echoer' is not a real server"
    rows = json.loads(listed.stdout)
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
        variables={
            "HERMES_STRICT_PLUGINS": "1",
            "HERMES_LOG_DIR": str(cli.log_dir),
            "HERMES_CACHE_DIR": str(cli.cache_dir),
        },
    )

    async def ask_server() -> ToolResult:
        async with Host(config, env) as host:
            return await host.dispatch("mcp__box__env", {"name": "BOX_TOKEN"}, host.new_session())

    assert anyio.run(ask_server).text_content == "tok-123"


def test_a_header_of_neither_form_is_refused_without_showing_its_value(
    hermes_cli: HermesCli,
) -> None:
    """``--header 'Authorization Bearer TOKEN'`` (the colon forgotten) is refused, and the
    refusal does not echo a credential onto the terminal or into a CI log."""
    done = hermes_cli.run(
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:1/mcp",
        "--header",
        "Authorization Bearer s3cr3t-token-value",
        ok=False,
    )
    assert done.returncode == 2
    assert "--header" in done.stderr
    assert "s3cr3t-token-value" not in done.stderr + done.stdout

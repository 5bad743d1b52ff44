"""``hermes import-agent claude-code``: Claude Code's three scopes and Claude Desktop's file, on
real fixture files in a temporary HOME, through the real command (a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes_core._mcp.claude_import import (
    claude_sources,
    desktop_config_path,
    read_claude_servers,
)
from hermes_core._mcp.import_plan import plan_import
from hermes_core._paths import Environment
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

TOOLBOX = Path(__file__).resolve().parent / "mcp" / "servers" / "toolbox.py"

CONFIG = """\
# hermes settings
mcp_servers:  # my servers
  mine:
    command: cat  # keep me
"""


@dataclass
class Machine:
    """A HOME with Claude's files, a project directory and a hermes home."""

    cli: HermesCli

    @property
    def root(self) -> Path:
        return self.cli.root

    @property
    def home(self) -> Path:
        return self.cli.user_home

    @property
    def project(self) -> Path:
        return self.cli.work

    @property
    def hermes_home(self) -> Path:
        return self.cli.home

    @property
    def config(self) -> Path:
        return self.cli.config

    @property
    def desktop(self) -> Path:
        return self.home / ".config" / "Claude" / "claude_desktop_config.json"

    def write_json(self, path: Path, data: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def env(self) -> Environment:
        return Environment(
            home=self.hermes_home, cwd=self.project, variables={"HOME": str(self.home)}
        )

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        # The project scope comes only with --project (issue 27; tests/security covers without).
        return self.cli.run("import-agent", "claude-code", "--project", *args, ok=ok)

    def servers(self) -> dict[str, Any]:
        data = YAML(typ="safe").load(self.config.read_text(encoding="utf-8")) or {}
        servers: dict[str, Any] = data.get("mcp_servers") or {}
        return servers


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    user_home = tmp_path / "home"
    found = Machine(
        InProcessCli(
            tmp_path, home=user_home / ".hermes", user_home=user_home, work=tmp_path / "project"
        )
    )
    found.config.write_text(CONFIG, encoding="utf-8")
    found.write_json(
        found.home / ".claude.json",
        {
            "numStartups": 7,
            "mcpServers": {
                "shared": {"type": "stdio", "command": "user-cmd", "args": [], "env": {}},
                "only-user": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "some-server"],
                    "env": {"API_KEY": "${API_KEY}", "MODE": "${MODE:-fast}"},
                },
                "socket": {"type": "websocket", "url": "ws://127.0.0.1:9/x"},
            },
            "projects": {
                str(found.project): {
                    "mcpServers": {"shared": {"type": "stdio", "command": "local-cmd"}}
                },
                "/elsewhere": {"mcpServers": {"elsewhere": {"command": "nope"}}},
            },
        },
    )
    found.write_json(
        found.project / ".mcp.json",
        {
            "mcpServers": {
                "shared": {"command": "project-cmd"},
                "remote": {
                    "type": "http",
                    "url": "https://mcp.example.invalid/mcp",
                    "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
                },
                "legacy": {"type": "sse", "url": "https://sse.example.invalid/sse"},
            }
        },
    )
    found.write_json(
        found.desktop,
        {"mcpServers": {"desk": {"command": "desk-cmd", "args": ["--stdio"]}}},
    )
    return found


def test_local_scope_wins_over_project_and_user(machine: Machine) -> None:
    found, _ = read_claude_servers(claude_sources(machine.env()), project=True)
    assert found["shared"].entry == {
        "command": "local-cmd",
        "args": [],
        "cwd": str(machine.project),
    }
    assert found["shared"].source.label == "local scope"
    assert "elsewhere" not in found  # another project's local scope is not read


def test_project_scope_wins_over_user(machine: Machine) -> None:
    data = json.loads((machine.home / ".claude.json").read_text(encoding="utf-8"))
    del data["projects"][str(machine.project)]
    machine.write_json(machine.home / ".claude.json", data)
    found, _ = read_claude_servers(claude_sources(machine.env()), project=True)
    assert found["shared"].entry == {
        "command": "project-cmd",
        "args": [],
        "cwd": str(machine.project),
    }
    assert found["shared"].source.label == "project scope"


def test_templates_are_kept_unexpanded(machine: Machine) -> None:
    found, _ = read_claude_servers(claude_sources(machine.env()), project=True)
    assert found["only-user"].entry["env"] == {"API_KEY": "${API_KEY}", "MODE": "${MODE:-fast}"}
    assert found["remote"].entry == {
        "url": "https://mcp.example.invalid/mcp",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }


def test_unknown_types_are_skipped_with_the_reason(machine: Machine) -> None:
    found, skipped = read_claude_servers(claude_sources(machine.env()), project=True)
    assert "socket" not in found
    assert [(s.name, s.reason) for s in skipped] == [
        ("socket", "unknown type 'websocket' (hermes imports stdio, http and sse)")
    ]


def test_desktop_config_is_found_in_xdg_config_home_on_linux(machine: Machine) -> None:
    assert desktop_config_path(machine.env()) == machine.desktop
    moved = Environment(
        home=machine.hermes_home,
        cwd=machine.project,
        variables={"HOME": str(machine.home), "XDG_CONFIG_HOME": str(machine.root / "xdg")},
    )
    assert desktop_config_path(moved) == machine.root / "xdg/Claude/claude_desktop_config.json"


def test_home_comes_from_the_environment_object(machine: Machine) -> None:
    homeless = Environment(home=machine.hermes_home, cwd=machine.project, variables={})
    with pytest.raises(Exception, match="HOME is not set"):
        claude_sources(homeless)


def test_existing_server_is_kept_without_force_and_changed_with_it(machine: Machine) -> None:
    found, skipped = read_claude_servers(claude_sources(machine.env()), project=True)
    existing = {"shared": {"command": "mine", "exclude": ["*_delete"]}, "desk": {"command": "x"}}
    plan = plan_import(found, skipped, existing, force=False)
    actions = {p.server.name: p.action for p in plan.servers}
    assert actions["shared"] == "keep"
    assert "shared" not in plan.entries()
    forced = plan_import(found, skipped, existing, force=True)
    assert forced.entries()["shared"] == {
        "command": "local-cmd",
        "args": [],
        "cwd": str(machine.project),
        "exclude": ["*_delete"],
    }


def test_import_writes_servers_keeps_comments_and_reports(machine: Machine) -> None:
    # The real command once (the other tests run it in process).
    done = machine.cli.subprocess_run("import-agent", "claude-code", "--project")
    servers = machine.servers()
    assert set(servers) == {"mine", "shared", "only-user", "remote", "legacy", "desk"}
    assert servers["mine"] == {"command": "cat"}
    assert servers["desk"] == {"command": "desk-cmd", "args": ["--stdio"]}
    assert servers["legacy"] == {"url": "https://sse.example.invalid/sse"}
    text = machine.config.read_text(encoding="utf-8")
    assert text.startswith("# hermes settings\nmcp_servers:  # my servers\n")
    assert "# keep me" in text
    assert "added: shared from local scope" in done.stdout
    assert "added: desk from Claude Desktop" in done.stdout
    assert "skipped: socket from user scope" in done.stdout
    assert "legacy SSE transport" in done.stderr


def test_dry_run_writes_nothing(machine: Machine) -> None:
    done = machine.run("--dry-run")
    assert "would be added: only-user from user scope" in done.stdout
    assert "Dry run:" in done.stdout
    assert machine.config.read_text(encoding="utf-8") == CONFIG


def test_second_import_changes_only_with_force(machine: Machine) -> None:
    machine.run()
    first = machine.config.read_text(encoding="utf-8")
    machine.write_json(machine.desktop, {"mcpServers": {"desk": {"command": "new-desk"}}})
    done = machine.run()
    kept = f"kept: desk from Claude Desktop ({machine.desktop}); it differs from mcp_servers.desk"
    assert f"{kept} (use --force)" in done.stdout
    assert "unchanged: only-user" in done.stdout
    assert machine.config.read_text(encoding="utf-8") == first
    done = machine.run("--force", "--json")
    report = json.loads(done.stdout)
    actions = {item["name"]: item["action"] for item in report["servers"]}
    assert actions["desk"] == "changed"
    assert machine.servers()["desk"] == {"command": "new-desk", "args": []}


def test_desktop_config_option_names_the_file(machine: Machine) -> None:
    other = machine.root / "elsewhere.json"
    machine.write_json(other, {"mcpServers": {"custom": {"command": "custom-cmd"}}})
    machine.run("--desktop-config", str(other))
    assert "custom" in machine.servers()
    assert "desk" not in machine.servers()


def test_broken_claude_file_is_an_error_naming_it(machine: Machine) -> None:
    (machine.project / ".mcp.json").write_text("{not json", encoding="utf-8")
    done = machine.run(ok=False)
    assert done.returncode == 2
    assert ".mcp.json: not valid JSON" in done.stderr
    assert machine.config.read_text(encoding="utf-8") == CONFIG


def test_a_claude_file_named_on_the_command_line_must_exist(machine: Machine) -> None:
    missing = machine.root / "no-such-claude.json"
    for option in ("--claude-json", "--desktop-config"):
        done = machine.run(option, str(missing), ok=False)
        assert done.returncode == 2
        assert str(missing) in done.stderr
        assert "does not exist" in done.stderr
    assert machine.config.read_text(encoding="utf-8") == CONFIG


def test_each_skipped_server_is_reported_once(machine: Machine) -> None:
    done = machine.run()
    lines = (done.stdout + done.stderr).splitlines()
    assert [line for line in lines if "skipped" in line and "socket" in line] == [
        f"skipped: socket from user scope ({machine.home / '.claude.json'}): unknown type "
        "'websocket' (hermes imports stdio, http and sse)"
    ]


def test_servers_of_the_user_scope_and_claude_desktop_get_no_cwd(machine: Machine) -> None:
    machine.run()
    servers = machine.servers()
    assert servers["shared"]["cwd"] == str(machine.project)  # local scope
    assert "cwd" not in servers["only-user"]
    assert "cwd" not in servers["desk"]
    assert "cwd" not in servers["remote"], "an HTTP server has no working directory"


def test_a_project_server_with_a_relative_path_runs_in_its_project_from_anywhere(
    machine: Machine,
) -> None:
    (machine.project / "servers").mkdir()
    shutil.copy(TOOLBOX, machine.project / "servers" / "box.py")
    shutil.copy(TOOLBOX.parent / "stdio_mcp.py", machine.project / "servers")  # its wire rules
    machine.write_json(
        machine.project / ".mcp.json",
        {"mcpServers": {"box": {"command": sys.executable, "args": ["servers/box.py"]}}},
    )
    machine.run()
    assert machine.servers()["box"]["cwd"] == str(machine.project)
    elsewhere = InProcessCli(
        machine.root,
        home=machine.hermes_home,
        user_home=machine.home,
        work=machine.root / "elsewhere",
    )
    out = elsewhere.run("mcp", "test", "box").stdout
    assert "box: connected and listed 7 tools" in out


def test_literal_secrets_go_to_dotenv_and_config_gets_references(machine: Machine) -> None:
    dotenv = machine.hermes_home / ".env"
    dotenv.write_text("# kept\nAPI_KEY=someone-elses\n", encoding="utf-8")
    dotenv.chmod(0o644)
    machine.write_json(
        machine.project / ".mcp.json",
        {
            "mcpServers": {
                "gh": {
                    "command": "github-mcp-server",
                    "env": {"GITHUB_TOKEN": "ghp_literal123", "MODE": "${MODE:-fast}"},
                },
                "api": {"command": "api-server", "env": {"API_KEY": "sk-mine"}},
                "web": {
                    "type": "http",
                    "url": "https://mcp.example.invalid/mcp",
                    "headers": {"Authorization": "Bearer tok-789", "Accept": "text/event-stream"},
                },
            }
        },
    )
    dry = machine.run("--dry-run")
    assert "Secrets that would be kept out of config.yaml, in " in dry.stdout
    assert dotenv.read_text(encoding="utf-8") == "# kept\nAPI_KEY=someone-elses\n"
    done = machine.run()
    servers = machine.servers()
    assert servers["gh"]["env"] == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "${MODE:-fast}"}
    assert servers["api"]["env"] == {"API_KEY": "${API_API_KEY}"}, "API_KEY holds another value"
    assert servers["web"]["headers"] == {
        "Authorization": "Bearer ${WEB_AUTHORIZATION}",
        "Accept": "text/event-stream",
    }
    text = machine.config.read_text(encoding="utf-8")
    for secret in ("ghp_literal123", "sk-mine", "tok-789"):
        assert secret not in text
    assert dotenv.read_text(encoding="utf-8") == (
        "# kept\nAPI_KEY=someone-elses\nGITHUB_TOKEN=ghp_literal123\nAPI_API_KEY=sk-mine\n"
        "WEB_AUTHORIZATION=tok-789\n"
    )
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    said = [line for line in done.stdout.splitlines() if "kept out of config.yaml" in line]
    assert said == [
        f"Secrets kept out of config.yaml, in {dotenv}: gh.env.GITHUB_TOKEN -> "
        "${GITHUB_TOKEN}, api.env.API_KEY -> ${API_API_KEY}, web.headers.Authorization -> "
        "${WEB_AUTHORIZATION}."
    ]
    again = machine.run()
    assert "unchanged: gh" in again.stdout
    assert "unchanged: web" in again.stdout
    assert "kept out of config.yaml" not in again.stdout
    assert dotenv.read_text(encoding="utf-8").count("ghp_literal123") == 1


def _limited_memory() -> None:
    # A command reading /dev/zero without end stops at this cap (MemoryError), not at the
    # machine's: the test fails fast and safely before the fix.
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize(
    ("relative", "make", "said"),
    [
        (".mcp.json", "zero", "not a regular file (a device)"),
        (".mcp.json", "fifo", "not a regular file (a FIFO)"),
        (".mcp.json", "deep", "not valid JSON: nested more than"),
        (".claude/settings.json", "zero", None),
        (".claude/settings.local.json", "fifo", None),
    ],
)
def test_a_hostile_file_of_the_repository_is_refused_by_name_at_once(
    machine: Machine, relative: str, make: str, said: str | None
) -> None:
    """A cloned repository's Claude files may be links to /dev/zero (git keeps links), FIFOs
    (an unpacked archive) or JSON nested past Python's recursion: each is refused at once,
    naming the file; the settings files disable nothing then, and the import goes on."""
    target = machine.project / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    if make == "zero":
        target.symlink_to("/dev/zero")
    elif make == "fifo":
        os.mkfifo(target)
    else:
        target.write_text('{"mcpServers": ' + "[" * 200_000, encoding="utf-8")

    done = subprocess.run(
        machine.cli.command("import-agent", "claude-code"),
        cwd=machine.project,
        env=machine.cli.variables(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limited_memory,
        check=False,
    )

    if said is None:
        assert done.returncode == 0, done.stderr
        assert "added: only-user from user scope" in done.stdout
    else:
        assert done.returncode == 2, done.stderr[-2000:]
        assert f"{target}: {said}" in done.stderr
        assert "Traceback" not in done.stderr
        assert machine.config.read_text(encoding="utf-8") == CONFIG


@pytest.mark.parametrize("where", ["user", "repository"])
def test_with_project_a_settings_file_that_cannot_be_read_stops_the_import(
    machine: Machine, where: str
) -> None:
    """The settings files may disable servers of the repository's .mcp.json: with --project,
    one hermes cannot read could hide a server the user disabled, so nothing is imported."""
    if where == "user":
        settings = machine.home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text('{"disabledMcpjsonServers": ["remote"],', encoding="utf-8")
    else:
        settings = machine.project / ".claude" / "settings.local.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(settings)
    done = machine.run(ok=False)
    assert done.returncode == 2, done.stderr
    assert str(settings) in done.stderr
    assert "disabled" in done.stderr
    assert machine.config.read_text(encoding="utf-8") == CONFIG
    without = machine.cli.run("import-agent", "claude-code")  # the repository's servers aside
    assert "added: only-user from user scope" in without.stdout


def test_the_entry_that_starts_hermes_serve_itself_is_skipped_saying_why(
    machine: Machine,
) -> None:
    # docs/mcp.md has the user add hermes to Claude Code and then run the import: imported, that
    # entry made every hermes start a second hermes serve, and its core tools came back deferred
    # as mcp__hermes__terminal and the like, the first match of `tool_search` for a shell command.
    user = json.loads((machine.home / ".claude.json").read_text(encoding="utf-8"))
    user["mcpServers"] = {
        "hermes": {"type": "stdio", "command": "hermes", "args": ["serve"], "env": {}},
        "hermes-py": {"command": sys.executable, "args": ["-m", "hermes_core", "serve"]},
        "not-hermes": {"command": "hermes-docs-server", "args": ["serve"]},
    }
    machine.write_json(machine.home / ".claude.json", user)
    desktop = {
        "command": "/Users/me/.local/bin/hermes",
        "args": ["serve", "--context-length", "200000"],
        # Claude Desktop given this hermes's home by name (another home is another hermes,
        # imported: tests/test_cli_mcp_add_edges.py).
        "env": {"HERMES_HOME": str(machine.hermes_home)},
    }
    machine.write_json(machine.desktop, {"mcpServers": {"hermes-desk": desktop}})
    done = machine.run()
    report = done.stdout + done.stderr
    servers = machine.servers()
    assert not {"hermes", "hermes-py", "hermes-desk"} & set(servers)
    assert servers["not-hermes"]["command"] == "hermes-docs-server"
    why = "it starts hermes serve, this hermes itself: hermes would serve its own tools to itself"
    assert f"skipped: hermes from user scope ({machine.home / '.claude.json'}): {why}" in report
    assert f"skipped: hermes-py from user scope ({machine.home / '.claude.json'}): {why}" in report
    assert f"skipped: hermes-desk from Claude Desktop ({machine.desktop}): {why}" in report


def test_finding_no_server_names_the_files_it_looked_in(machine: Machine) -> None:
    # "No MCP servers found" alone left a new user guessing where it had looked (Claude
    # Desktop's file on Linux, a --claude-json elsewhere).
    machine.write_json(machine.home / ".claude.json", {"numStartups": 1})
    (machine.project / ".mcp.json").unlink()
    machine.desktop.unlink()
    done = machine.run()
    assert done.stdout.splitlines()[0] == (
        "No MCP servers found in Claude Code or Claude Desktop; looked in "
        f"{machine.home / '.claude.json'} (no servers), "
        f"{machine.project / '.mcp.json'} (no such file), "
        f"{machine.desktop} (no such file)."
    )

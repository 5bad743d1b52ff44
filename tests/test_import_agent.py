"""``hermes import-agent claude-code``: Claude Code's three scopes and Claude Desktop's file, on
real fixture files in a temporary HOME, through the real command (a subprocess)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes_core.mcp.claude_import import (
    claude_sources,
    desktop_config_path,
    plan_import,
    read_claude_servers,
)
from hermes_core.paths import Environment
from hermes_core.testing import HermesCli

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
        return self.cli.run("import-agent", "claude-code", *args, ok=ok)

    def servers(self) -> dict[str, Any]:
        data = YAML(typ="safe").load(self.config.read_text(encoding="utf-8")) or {}
        servers: dict[str, Any] = data.get("mcp_servers") or {}
        return servers


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    user_home = tmp_path / "home"
    found = Machine(
        HermesCli(
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
    found, _ = read_claude_servers(claude_sources(machine.env()))
    assert found["shared"].entry == {"command": "local-cmd", "args": []}
    assert found["shared"].source.label == "local scope"
    assert "elsewhere" not in found  # another project's local scope is not read


def test_project_scope_wins_over_user(machine: Machine) -> None:
    data = json.loads((machine.home / ".claude.json").read_text(encoding="utf-8"))
    del data["projects"][str(machine.project)]
    machine.write_json(machine.home / ".claude.json", data)
    found, _ = read_claude_servers(claude_sources(machine.env()))
    assert found["shared"].entry == {"command": "project-cmd", "args": []}
    assert found["shared"].source.label == "project scope"


def test_templates_are_kept_unexpanded(machine: Machine) -> None:
    found, _ = read_claude_servers(claude_sources(machine.env()))
    assert found["only-user"].entry["env"] == {"API_KEY": "${API_KEY}", "MODE": "${MODE:-fast}"}
    assert found["remote"].entry == {
        "url": "https://mcp.example.invalid/mcp",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }


def test_unknown_types_are_skipped_with_the_reason(machine: Machine) -> None:
    found, skipped = read_claude_servers(claude_sources(machine.env()))
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
    found, skipped = read_claude_servers(claude_sources(machine.env()))
    existing = {"shared": {"command": "mine", "exclude": ["*_delete"]}, "desk": {"command": "x"}}
    plan = plan_import(found, skipped, existing, force=False)
    actions = {p.server.name: p.action for p in plan.servers}
    assert actions["shared"] == "keep"
    assert "shared" not in plan.entries()
    forced = plan_import(found, skipped, existing, force=True)
    assert forced.entries()["shared"] == {
        "command": "local-cmd",
        "args": [],
        "exclude": ["*_delete"],
    }


def test_import_writes_servers_keeps_comments_and_reports(machine: Machine) -> None:
    done = machine.run()
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
    assert "hermes: warning: skipped socket" in done.stderr
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

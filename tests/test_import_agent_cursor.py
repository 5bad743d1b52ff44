"""``hermes import-agent cursor``: Cursor's ``~/.cursor/mcp.json`` and a project's
``.cursor/mcp.json``, on real files in a temporary HOME, through the real command; a server
imported with ``${workspaceFolder}`` is then started by hermes from another directory."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

TOOLBOX = Path(__file__).resolve().parent / "mcp" / "servers" / "toolbox.py"


class Cursor:
    """A HOME with Cursor's file, a project with its own, and a hermes home."""

    def __init__(self, root: Path) -> None:
        home = root / "home"
        self.cli = InProcessCli(root, home=home / ".hermes", user_home=home, work=root / "project")
        self.user_file = home / ".cursor" / "mcp.json"
        self.project_file = self.cli.work / ".cursor" / "mcp.json"

    def write(self, path: Path, servers: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")

    def run(self, *args: str, ok: bool = True) -> tuple[str, str]:
        done = self.cli.run("import-agent", "cursor", *args, ok=ok)
        return done.stdout, done.stderr

    def servers(self) -> dict[str, Any]:
        data = YAML(typ="safe").load(self.cli.config.read_text(encoding="utf-8")) or {}
        servers: dict[str, Any] = data.get("mcp_servers") or {}
        return servers


@pytest.fixture
def cursor(tmp_path: Path) -> Cursor:
    return Cursor(tmp_path)


def test_the_users_servers_are_imported_with_cursors_variables_written_out(
    cursor: Cursor,
) -> None:
    cursor.write(
        cursor.user_file,
        {
            "files": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "${userHome}/notes"],
            },
            "context7": {
                "url": "https://mcp.context7.example/mcp",
                "headers": {"CONTEXT7_API_KEY": "${env:CONTEXT7_API_KEY}"},
            },
            "db": {"command": "db-mcp", "env": {"DB_URL": "${env:DB_URL}", "MODE": "${MODE:-ro}"}},
        },
    )
    out, _ = cursor.run()
    servers = cursor.servers()
    assert servers["files"]["args"][-1] == f"{cursor.cli.user_home}/notes"
    # ${env:NAME} is hermes's ${NAME}: expanded at connect time, never copied as a value.
    assert servers["context7"] == {
        "url": "https://mcp.context7.example/mcp",
        "headers": {"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"},
    }
    assert servers["db"]["env"] == {"DB_URL": "${DB_URL}", "MODE": "${MODE:-ro}"}
    assert f"added: files from Cursor user ({cursor.user_file})" in out
    assert "Wrote 3 server(s)" in out


def test_the_repositorys_servers_come_only_with_project_and_win_over_the_users(
    cursor: Cursor,
) -> None:
    cursor.write(cursor.user_file, {"shared": {"command": "user-cmd"}})
    cursor.write(
        cursor.project_file,
        {"shared": {"command": "project-cmd"}, "own": {"url": "https://x.example/mcp"}},
    )
    out, _ = cursor.run("--dry-run")
    assert "would be added: shared from Cursor user" in out
    assert (
        f"skipped: own from Cursor project ({cursor.project_file}): a server of the "
        "repository's .cursor/mcp.json: imported only with --project"
    ) in out
    assert not cursor.cli.config.exists() or "shared" not in cursor.servers()
    cursor.run("--project")
    servers = cursor.servers()
    assert servers["shared"] == {"command": "project-cmd", "args": [], "cwd": str(cursor.cli.work)}
    assert servers["own"] == {"url": "https://x.example/mcp"}


def test_a_project_server_using_workspace_folder_starts_from_anywhere(cursor: Cursor) -> None:
    servers_dir = cursor.cli.work / "servers"
    servers_dir.mkdir(parents=True)
    shutil.copy(TOOLBOX, servers_dir / "box.py")
    shutil.copy(TOOLBOX.parent / "stdio_mcp.py", servers_dir)  # its wire rules
    cursor.write(
        cursor.project_file,
        {"box": {"command": sys.executable, "args": ["${workspaceFolder}${/}servers/box.py"]}},
    )
    cursor.run("--project")
    assert cursor.servers()["box"]["args"] == [f"{cursor.cli.work}/servers/box.py"]
    elsewhere = InProcessCli(
        cursor.cli.root,
        home=cursor.cli.home,
        user_home=cursor.cli.user_home,
        work=cursor.cli.root / "elsewhere",
    )
    assert "box: connected and listed 7 tools" in elsewhere.run("mcp", "test", "box").stdout


def test_what_hermes_cannot_write_out_is_skipped_saying_why(cursor: Cursor) -> None:
    cursor.write(
        cursor.user_file,
        {
            "per-project": {"command": "lint-mcp", "args": ["${workspaceFolder}"]},
            "prompted": {"url": "https://x.example/mcp", "headers": {"K": "${input:token}"}},
            "self": {"command": "hermes", "args": ["serve"]},
            "with-file": {"command": "tool-mcp", "envFile": "${userHome}/.tool.env"},
        },
    )
    out, err = cursor.run()
    where = f"Cursor user ({cursor.user_file})"
    assert f"skipped: per-project from {where}: it uses ${{workspaceFolder}}, the folder" in out
    assert f"skipped: prompted from {where}: it uses ${{input:token}}, which hermes cannot" in out
    assert f"skipped: self from {where}: it starts hermes serve, this hermes itself" in out
    assert set(cursor.servers()) == {"with-file"}
    assert f"with-file ({where}): its envFile ({cursor.cli.user_home}/.tool.env) is not read" in err


def test_literal_secrets_go_to_dotenv_not_config(cursor: Cursor) -> None:
    cursor.write(
        cursor.user_file,
        {"gh": {"url": "https://gh.example/mcp", "headers": {"Authorization": "Bearer ghp_123"}}},
    )
    cursor.run()
    config = cursor.cli.config.read_text(encoding="utf-8")
    assert "ghp_123" not in config
    assert "ghp_123" in (cursor.cli.home / ".env").read_text(encoding="utf-8")
    assert cursor.servers()["gh"]["headers"]["Authorization"].startswith("Bearer ${")


def test_rules_are_listed_as_not_imported(cursor: Cursor) -> None:
    cursor.write(cursor.user_file, {"t": {"command": "t-mcp"}})
    (cursor.cli.work / ".cursor" / "rules").mkdir(parents=True)
    out, _ = cursor.run("--json")
    report = json.loads(out)
    assert report["not_imported"] == [
        {
            "what": "rules",
            "from": str(cursor.cli.work / ".cursor" / "rules"),
            "reason": "hermes has no instructions file (it imports MCP servers and skills only)",
        }
    ]
    assert [s["name"] for s in report["servers"]] == ["t"]


def test_nothing_found_names_the_files_and_a_broken_file_is_named(cursor: Cursor) -> None:
    out, _ = cursor.run()
    assert out.splitlines()[0] == (
        f"No MCP servers found in Cursor; looked in {cursor.project_file} (no such file), "
        f"{cursor.user_file} (no such file)."
    )
    cursor.user_file.parent.mkdir(parents=True)
    cursor.user_file.write_text('{"mcpServers": {"a": ', encoding="utf-8")
    done = cursor.cli.run("import-agent", "cursor", ok=False)
    assert done.returncode == 2
    assert f"{cursor.user_file}: not valid JSON" in done.stderr

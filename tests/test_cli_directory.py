"""``hermes -C DIR``: run as if started in DIR. An MCP client that cannot choose the working
directory of the servers it starts (Claude Desktop may start them in ``/``) still gets file tools
and a terminal confined to one project, and not the whole disk; ``hermes serve`` started in ``/``
without ``-C`` says so on stderr."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.testing._cli_in_process import InProcessCli


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def test_dash_c_makes_the_directory_the_working_directory_of_the_tools(
    hermes_cli: InProcessCli,
) -> None:
    project = hermes_cli.work / "app"
    project.mkdir()
    (project / "note.txt").write_text("inside the project\n", encoding="utf-8")
    (hermes_cli.work / "secret.txt").write_text("beside it\n", encoding="utf-8")

    inside = hermes_cli.run("-C", "app", "tools", "call", "read_file", '{"path": "note.txt"}')
    outside = hermes_cli.run(
        "-C", str(project), "tools", "call", "read_file", '{"path": "../secret.txt"}', ok=False
    )

    assert inside.stdout.startswith("inside the project")
    assert outside.returncode == 1
    assert f"is outside the working directory {project}" in outside.stderr


def test_dash_c_of_a_directory_that_is_not_there_is_a_usage_error(
    hermes_cli: InProcessCli,
) -> None:
    done = hermes_cli.run("-C", "nosuch", "tools", "list", ok=False)

    assert done.returncode == 2
    assert done.stdout == ""
    assert "Directory 'nosuch' does not exist" in done.stderr


def test_dash_c_into_a_project_gates_its_plugins_as_cd_would(
    hermes_cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    project = hermes_cli.work / "cloned"
    hermes_dir_plugin(project / ".hermes" / "plugins", "planted", "")

    rows = json.loads(hermes_cli.run("-C", "cloned", "plugins", "list", "--json").stdout)

    assert {row["name"]: row["status"] for row in rows}["planted"] == "gated"


def test_serve_started_in_the_root_says_so_on_stderr_and_how_to_give_a_project(
    hermes_cli: InProcessCli,
) -> None:
    at_the_root = InProcessCli(hermes_cli.root, home=hermes_cli.home, work=Path("/"))

    done = at_the_root.run("serve")  # stdin is empty: the client is gone at once

    assert done.stdout == ""  # stdout is the protocol's, even for the hint
    hints = [line for line in done.stderr.splitlines() if "working directory" in line]
    assert hints == [
        "hermes serve: the working directory is / (the file tools, terminal and execute_code "
        "reach every file from there); `hermes -C DIR serve` sets the project directory "
        '(docs/mcp.md, "Claude Desktop")'
    ]


@pytest.mark.parametrize("where", ["the project", "the user's home", "-C /"])
def test_serve_started_elsewhere_or_given_the_root_with_dash_c_gives_no_hint(
    hermes_cli: InProcessCli, where: str
) -> None:
    # The home directory is where a terminal opens, and serving it is a person's choice: a
    # line at every start there would be noise. -C / is a choice too.
    if where == "the user's home":
        hermes_cli.user_home.mkdir()
        hermes_cli = InProcessCli(hermes_cli.root, home=hermes_cli.home, work=hermes_cli.user_home)
    command = ("-C", "/", "serve") if where == "-C /" else ("serve",)

    done = hermes_cli.run(*command)

    assert "working directory" not in done.stderr

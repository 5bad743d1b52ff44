"""A plugin that fails when it is imported fails alone, as one whose factory raises does: the
commands that do not need it work (``tools call read_file``, ``hermes serve``), ``plugins list``
shows it broken with the reason, and the command that needs it (a search, when it provides the
selected backend) says which plugin failed and why, with the file and line of the error.

Seen through the real ``hermes`` command, without ``HERMES_STRICT_PLUGINS`` (what a user has);
with it (a plugin author's CI) the first plugin error still stops the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from hermes_core.testing import HermesCli, write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

# The raise is on line 4 of the plugin's __init__.py.
BROKEN_AT_IMPORT = """\
from hermes_core.plugin import SearchBackendSpec, hookimpl

SETTINGS = {}
raise RuntimeError("the index file is missing")


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("shaky", factory=lambda context: None)]
"""

SELECTED = "tools:\n  tool_search:\n    backend: shaky\n"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> HermesCli:
    """The command in this process, with what a subprocess would get (``hermes serve`` still
    starts as a process of its own, as its MCP client starts it)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.fixture
def broken(hermes_cli: HermesCli) -> Path:
    """``shaky``, a user plugin of kind backend that raises at import, enabled and selected as
    the search backend; a file to read in the working directory. Returns the plugin's
    ``__init__.py``."""
    directory = write_dir_plugin(
        hermes_cli.home / "plugins", "shaky", BROKEN_AT_IMPORT, manifest={"kind": "backend"}
    )
    hermes_cli.config.write_text(f"plugins:\n  enabled: [shaky]\n{SELECTED}", encoding="utf-8")
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")
    return directory / "__init__.py"


def lenient(cli: HermesCli) -> dict[str, str]:
    """The command's environment without strict plugin loading (what a user has)."""
    return cli.variables(HERMES_STRICT_PLUGINS="0")


def test_read_file_works_while_the_selected_backend_plugin_fails_to_import(
    hermes_cli: HermesCli, broken: Path
) -> None:
    done = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', ok=False, env=lenient(hermes_cli)
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hello")
    assert "Traceback" not in done.stderr


def test_plugins_list_shows_the_import_failure_with_its_file_and_line(
    hermes_cli: HermesCli, broken: Path
) -> None:
    rows = hermes_cli.json("plugins", "list", "--json", env=lenient(hermes_cli), exit_code=1)
    table = hermes_cli.run("plugins", "list", env=lenient(hermes_cli), ok=False).stdout

    (row,) = [row for row in rows if row["name"] == "shaky"]
    assert row["status"] == "error"
    assert "RuntimeError: the index file is missing" in row["error"]
    assert f"{broken}, line 4" in row["error"]
    line = next(line for line in table.splitlines() if line.startswith("shaky"))
    assert " error " in line
    assert "the index file is missing" in line


def test_a_search_needing_the_broken_backend_names_the_plugin_and_its_import_error(
    hermes_cli: HermesCli, broken: Path
) -> None:
    done = hermes_cli.run("tools", "search", "read", "--json", ok=False, env=lenient(hermes_cli))

    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "search backend 'shaky'" in said
    assert "plugin 'shaky'" in said
    assert "RuntimeError: the index file is missing" in said
    assert f"{broken}, line 4" in said
    assert "Traceback" not in done.stderr


def test_a_plugin_failing_at_import_that_nothing_selects_leaves_search_working(
    hermes_cli: HermesCli, broken: Path
) -> None:
    hermes_cli.config.write_text("plugins:\n  enabled: [shaky]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "search", "connections", "--json", env=lenient(hermes_cli))

    assert "error" not in json.loads(done.stdout)
    assert "import failed: RuntimeError: the index file is missing" in done.stderr


def test_serve_starts_and_lists_tools_while_the_selected_backend_plugin_fails_to_import(
    hermes_cli: HermesCli, broken: Path
) -> None:
    command = hermes_cli.command("serve")
    parameters = StdioServerParameters(
        command=command[0], args=command[1:], env=lenient(hermes_cli), cwd=hermes_cli.work
    )

    async def main() -> tuple[list[str], Any, Any]:
        with anyio.fail_after(60):
            async with Client(parameters) as client:
                listed = await client.list_tools()
                read = await client.call_tool("read_file", {"path": "notes.txt"})
                searched = await client.call_tool("tool_search", {"queries": ["read"]})
                return [tool.name for tool in listed.tools], read, searched

    names, read, searched = anyio.run(main)

    assert "read_file" in names
    assert "tool_search" in names
    assert read.is_error is False
    assert "hello" in json.dumps(read.model_dump(mode="json"))
    assert searched.is_error is True
    text = json.dumps(searched.model_dump(mode="json"))
    assert "plugin 'shaky'" in text
    assert "the index file is missing" in text


def test_strict_plugins_still_stop_the_command_on_an_import_failure(
    hermes_cli: HermesCli, broken: Path
) -> None:
    # HERMES_STRICT_PLUGINS=1, as the test suite and a plugin author's CI run: loud, at once.
    done = hermes_cli.run("tools", "call", "read_file", '{"path": "notes.txt"}', ok=False)

    assert done.returncode == 2
    assert "plugin 'shaky'" in done.stderr
    assert "RuntimeError: the index file is missing" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_approval_policy_whose_plugin_fails_to_import_stops_calls_naming_it(
    hermes_cli: HermesCli, broken: Path
) -> None:
    # Every call needs the policy: no call runs without the one the user chose. Commands that
    # need no policy still work.
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [shaky]\napprovals:\n  policy: shaky\n", encoding="utf-8"
    )

    called = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', ok=False, env=lenient(hermes_cli)
    )
    validated = hermes_cli.run("config", "validate", ok=False, env=lenient(hermes_cli))

    assert called.returncode == 2
    assert "approval policy 'shaky'" in called.stderr
    assert "plugin 'shaky' (user, " in called.stderr
    assert f"RuntimeError: the index file is missing (at {broken}, line 4)" in called.stderr
    assert "hello" not in called.stdout
    assert validated.returncode == 0, validated.stderr


def test_a_backend_named_unlike_its_broken_plugin_fails_alone_too(hermes_cli: HermesCli) -> None:
    # The shipped example is such a plugin: 'keyword-search' registers the backend 'keyword'.
    # The backend's name matches no plugin, so only the plugins that did not load can say why.
    write_dir_plugin(
        hermes_cli.home / "plugins",
        "shaky-search",
        BROKEN_AT_IMPORT,
        manifest={"provides_hooks": ["hermes_search_backends"]},
    )
    hermes_cli.config.write_text(
        f"plugins:\n  enabled: [shaky-search]\n{SELECTED}", encoding="utf-8"
    )
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")

    called = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', ok=False, env=lenient(hermes_cli)
    )
    searched = hermes_cli.run("tools", "search", "read", ok=False, env=lenient(hermes_cli))

    assert called.returncode == 0, called.stderr
    assert called.stdout.startswith("hello")
    assert searched.returncode == 1, searched.stderr
    said = searched.stdout + searched.stderr
    assert "unknown search backend 'shaky'" in said
    assert "plugin 'shaky-search' (user, " in said
    assert "RuntimeError: the index file is missing" in said


def test_the_warning_of_a_plugin_that_failed_at_start_says_what_to_do(
    hermes_cli: HermesCli, broken: Path
) -> None:
    # It named the plugin, the error, the file and line, and no way on: observer hooks' say
    # "fix or disable it".
    done = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', env=lenient(hermes_cli)
    )

    assert (
        "hermes: warning: plugin 'shaky' (user): import failed: RuntimeError: the index file is "
        f"missing (at {broken}, line 4); fix or disable it (hermes plugins disable shaky)"
    ) in done.stderr.splitlines()


def test_the_warning_of_a_hermes_tools_that_raised_says_what_to_do(hermes_cli: HermesCli) -> None:
    write_dir_plugin(
        hermes_cli.home / "plugins",
        "tooly",
        "from hermes_core.plugin import hookimpl\n\n\n@hookimpl\ndef hermes_tools():\n"
        "    raise KeyError('units')\n",
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [tooly]\n", encoding="utf-8")
    init = hermes_cli.home / "plugins" / "tooly" / "__init__.py"

    done = hermes_cli.run("tools", "list", env=lenient(hermes_cli))

    assert (
        f"hermes: warning: plugin 'tooly': hermes_tools failed: KeyError: 'units' (at {init}, "
        "line 6); fix or disable it (hermes plugins disable tooly)"
    ) in done.stderr.splitlines()


def test_a_registration_hook_that_raised_is_warned_about_at_start(hermes_cli: HermesCli) -> None:
    # The plugin was taken out whole (its tools too) with no word until one of them was called.
    write_dir_plugin(
        hermes_cli.home / "plugins",
        "reggie",
        "from hermes_core.plugin import hookimpl\n\n\n@hookimpl\ndef hermes_search_backends():\n"
        "    raise KeyError('units')\n",
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [reggie]\n", encoding="utf-8")
    init = hermes_cli.home / "plugins" / "reggie" / "__init__.py"

    done = hermes_cli.run("tools", "list", env=lenient(hermes_cli))

    assert (
        "hermes: warning: plugin 'reggie' (user): hermes_search_backends raised KeyError: "
        f"'units' (at {init}, line 6); fix or disable it (hermes plugins disable reggie)"
    ) in done.stderr.splitlines()

"""The second first-day walk through the README and the docs (issue: docs drift), each defect as
a new user met it: a Python warning's raw form (file, line and source) where every other
warning is one ``hermes: warning:`` line; a plugin's failure, met while hermes looked for a
command of the plugins, printed bare, before hermes set up its warning lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing._cli_in_process import InProcessCli

DEPRECATED = "code_execution:\n  timeout: 60\n"


@pytest.fixture
def cli(tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path)


# 1. An edit of a file holding a deprecated section warns as every command does ------------------


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "edit",
    [
        ("mcp", "add", "box", "--", "box-server"),
        ("mcp", "remove", "old"),
    ],
    ids=["mcp add", "mcp remove"],
)
def test_an_edit_shows_a_deprecated_section_as_one_warning_line(
    cli: InProcessCli, edit: tuple[str, ...]
) -> None:
    cli.config.write_text(
        DEPRECATED + "mcp_servers:\n  old:\n    command: old-server\n", encoding="utf-8"
    )
    done = cli.subprocess_run(*edit)  # the interpreter's own warning display
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stderr.splitlines() if "deprecated" in line]
    assert told == [
        f"hermes: warning: {cli.config}:1: code_execution: this section is deprecated: move its "
        "keys under plugins.entries.code_execution (read from here for one more release)"
    ], done.stderr
    assert "ConfigWarning" not in done.stderr


# 2. A plugin that fails while hermes looks for a plugin's command warns as every command does --


@pytest.mark.subprocess
def test_a_plugin_failing_while_a_command_is_looked_up_warns_in_one_hermes_line(
    cli: InProcessCli,
) -> None:
    plugin = cli.home / "plugins" / "forecast"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: forecast\n", encoding="utf-8")
    # docs/plugins.md's hermes_cli_commands example once lacked this import.
    (plugin / "__init__.py").write_text("@hookimpl\ndef hermes_cli_commands(): ...\n", "utf-8")
    cli.config.write_text("plugins:\n  enabled: [forecast]\n", encoding="utf-8")
    env = cli.variables()
    del env["HERMES_STRICT_PLUGINS"]  # listed with its error, as for a user

    done = cli.subprocess_run("forecast", "Paris", ok=False, env=env)
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first.startswith("hermes: warning: plugin 'forecast' (user): import failed: "), first
    assert "No such command 'forecast'." in done.stderr

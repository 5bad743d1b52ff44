"""What a plugin prints (at import, in a registration hook, in a tool, in any other hook) goes
to standard error under every ``hermes`` command, so standard output stays the command's own
(``--json`` parsed whole); a plugin's own command still prints its output on standard output.
The real command in this process, a real directory plugin in a temporary HERMES_HOME."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

NOISY = """
import click

from hermes_core.plugin import CliCommandSpec, Tool, ToolResult, hookimpl

print("noisy: imported")


def echo(text: str) -> ToolResult:
    print("noisy: tool ran")
    return ToolResult.text(text)


@hookimpl
def hermes_tools(config, env):
    print("noisy: tools asked")
    return [
        Tool(
            name="noisy_echo",
            description="Give the text back.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            handler=echo,
            toolset="noisy",
            source_name="noisy",
        )
    ]


@hookimpl
def hermes_pre_tool_call(call, session):
    print("noisy: before a call")
    return None


@hookimpl
def hermes_post_tool_call(call, result, session):
    print("noisy: after a call")


@hookimpl
def hermes_session_start(session):
    print("noisy: session started")


@hookimpl
def hermes_session_end(session):
    print("noisy: session ended")


@click.command("noisy-hello")
def hello():
    \"\"\"Say hello.\"\"\"
    print("hello from noisy")


@hookimpl
def hermes_cli_commands():
    print("noisy: commands asked")
    return [CliCommandSpec("noisy-hello", hello)]
"""


@pytest.fixture
def cli(
    hermes_home: Path,
    hermes_project: Path,
    tmp_path: Path,
    hermes_dir_plugin: Callable[..., Path],
) -> InProcessCli:
    made = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    hermes_dir_plugin(made.home / "plugins", "noisy", NOISY)
    made.config.write_text(json.dumps({"plugins": {"enabled": ["noisy"]}}), encoding="utf-8")
    return made


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("tools", "list", "--json"), id="tools-list"),
        pytest.param(("tools", "search", "--json", "echo"), id="tools-search"),
        pytest.param(("tools", "describe", "--json", "noisy_echo"), id="tools-describe"),
        pytest.param(("plugins", "list", "--json"), id="plugins-list"),
        pytest.param(("memory", "list", "--json"), id="memory-list"),
        pytest.param(("doctor", "--offline", "--json"), id="doctor"),
    ],
)
def test_a_commands_json_is_whole_and_the_plugins_prints_are_on_stderr(
    cli: InProcessCli, command: tuple[str, ...]
) -> None:
    done = cli.run(*command, ok=False)

    json.loads(done.stdout)
    assert "noisy:" not in done.stdout
    assert "noisy: imported" in done.stderr, done.stderr


def test_a_tool_call_prints_its_result_alone_and_every_hooks_print_on_stderr(
    cli: InProcessCli,
) -> None:
    done = cli.run("tools", "call", "--yes", "noisy_echo", '{"text": "hi"}')

    assert done.stdout.strip() == "hi"
    for said in ("imported", "session started", "before a call", "tool ran", "after a call"):
        assert f"noisy: {said}" in done.stderr, done.stderr


def test_config_validate_and_cron_create_keep_stdout_their_own(cli: InProcessCli) -> None:
    validated = cli.run("config", "validate")
    created = cli.run("cron", "create", "--toolset", "noisy", "every 1h", "say hi")

    assert "noisy:" not in validated.stdout
    assert "noisy: imported" in validated.stderr
    assert "noisy:" not in created.stdout
    assert "noisy: imported" in created.stderr


def test_a_plugins_own_command_prints_on_stdout_and_its_loading_on_stderr(
    cli: InProcessCli,
) -> None:
    done = cli.run("noisy-hello")

    assert done.stdout == "hello from noisy\n"
    assert "noisy: imported" in done.stderr
    assert "noisy: commands asked" in done.stderr

"""A tool a plugin's manifest lists (``provides_tools``) that the host lacks is explained with
its plugin in the answer itself, by every route: a direct call (the dispatcher, which
``hermes serve`` answers with), an entry of ``tool_call``, ``tool_describe``, and ``hermes tools
call``; the CLI adds no second copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import make_env

from hermes_core._config import Config
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._tools import ToolResult
from hermes_core.testing import write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli

WEATHER = """
from hermes_core.plugin import Tool, hookimpl


@hookimpl
def hermes_tools():
    return [Tool("weather_now", "The weather now.", handler=lambda city="": "sunny")]
"""


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    made = make_env(tmp_path)
    write_dir_plugin(
        made.home / "plugins", "weather", WEATHER, manifest={"provides_tools": ["weather_now"]}
    )
    return made


def hint(env: Environment) -> str:
    where = env.home / "plugins" / "weather"
    return (
        f"'weather_now' is a tool of a plugin that did not load: plugin 'weather' (user, "
        f"{where}) is not enabled: enable it with: hermes plugins enable weather (a config "
        "file), or, for a Config built in code, list it in plugins.enabled: "
        "config=Config.model_validate({'plugins': {'enabled': ['weather']}})"
    )


def calls(env: Environment, *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
    async def scenario() -> list[ToolResult]:
        async with Host(Config(), env) as host:
            session = host.new_session()
            return [await host.dispatch(name, arguments, session) for name, arguments in calls]

    return anyio.run(scenario)


def test_a_direct_call_of_a_tool_of_a_plugin_not_enabled_names_the_plugin(
    env: Environment,
) -> None:
    # What the dispatcher answers is what hermes serve's client gets.
    (result,) = calls(env, ("weather_now", {"city": "Oslo"}))

    assert result.error_code == "UNKNOWN_TOOL"
    assert result.text_content == f"There is no tool named 'weather_now'. {hint(env)}."


def test_a_tool_call_entry_of_a_tool_of_a_plugin_not_enabled_names_the_plugin(
    env: Environment,
) -> None:
    (result,) = calls(env, ("tool_call", {"name": "weather_now", "arguments": {"city": "Oslo"}}))

    assert result.is_error
    assert f"unknown tool 'weather_now': {hint(env)}" in result.text_content
    assert "tool_search" not in result.text_content


def test_tool_describe_of_a_tool_of_a_plugin_not_enabled_names_the_plugin(
    env: Environment,
) -> None:
    (result,) = calls(env, ("tool_describe", {"names": ["weather_now"]}))

    assert result.structured == {"errors": {"weather_now": hint(env)}}


def test_a_name_no_plugin_lists_keeps_its_closest_names(env: Environment) -> None:
    direct, routed = calls(env, ("todo_lis", {}), ("tool_call", {"name": "weather_later"}))

    assert direct.text_content == "There is no tool named 'todo_lis'. Did you mean: todo_list?"
    assert "plugin" not in routed.text_content


def test_hermes_tools_call_says_the_hint_once(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    write_dir_plugin(
        cli.home / "plugins", "weather", WEATHER, manifest={"provides_tools": ["weather_now"]}
    )

    done = cli.run("tools", "call", "weather_now", '{"city": "Oslo"}', ok=False)

    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert output.count("hermes plugins enable weather") == 1, output


MINE = """
from hermes_core.plugin import Tool, hookimpl


@hookimpl
def hermes_tools():
    return [Tool("my_todo", "My own task list.", handler=lambda: "none")]
"""


@pytest.mark.parametrize("enabled", [False, True])
def test_a_bundled_tool_a_user_override_hides_names_the_override_and_how_to_get_it_back(
    tmp_path: Path, enabled: bool
) -> None:
    # A user folder named like the bundled 'todo' shadows it whole, enabled or not: its
    # todo_list was gone with only "There is no tool named 'todo_list'."
    env = make_env(tmp_path)
    folder = write_dir_plugin(env.home / "plugins", "todo", MINE)
    config = Config.model_validate({"plugins": {"enabled": ["todo"] if enabled else []}})

    async def scenario() -> ToolResult:
        async with Host(config, env) as host:
            return await host.dispatch("todo_list", {}, host.new_session())

    result = anyio.run(scenario)

    assert result.error_code == "UNKNOWN_TOOL"
    text = result.text_content
    assert "'todo_list' is a tool of the bundled copy of plugin 'todo'" in text
    assert f"the user copy ({folder}) shadows it" in text
    assert f"move {folder} out of {folder.parent}" in text

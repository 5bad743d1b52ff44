"""The host as an agent builder embeds it: plugins from real directories, assemble, dispatch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core._config import Config
from hermes_core._errors import HermesError, PluginError, RegistrationError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core.testing import write_dir_plugin

RECORDER = """
import json
from hermes_core._hookspecs import hookimpl

LOG = __import__("pathlib").Path(__file__).parent / "seen.jsonl"


def _write(kind, name):
    with LOG.open("a") as handle:
        handle.write(json.dumps([kind, name]) + "\\n")


@hookimpl
def hermes_pre_tool_call(call, session):
    _write("pre", call.name)


@hookimpl
def hermes_post_tool_call(call, result, session):
    _write("post", call.name)
"""

WEATHER = """
from hermes_core._hookspecs import hookimpl
from hermes_core._tools import Tool, ToolAnnotations


def forecast(city: str, days: int = 1) -> dict:
    return {"city": city, "days": days, "sky": "clear"}


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            name="weather_forecast",
            description="Weather forecast for a city, by day.",
            parameters={
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
            handler=forecast,
            toolset="weather",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


def _env(tmp_path: Path, **variables: str) -> Environment:
    home = tmp_path / "home"
    cwd = tmp_path / "work"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    base = {
        "HERMES_LOG_DIR": str(tmp_path / "logs"),
        "HERMES_CACHE_DIR": str(tmp_path / "cache"),
        "HERMES_STRICT_PLUGINS": "1",
    }
    return Environment(home=home, cwd=cwd, variables={**base, **variables})


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    made = _env(tmp_path)
    write_dir_plugin(made.user_plugins_dir, "recorder", source=RECORDER)
    write_dir_plugin(made.user_plugins_dir, "weather", source=WEATHER)
    return made


def _config(**extra: Any) -> Config:
    return Config.model_validate({"plugins": {"enabled": ["recorder", "weather"]}, **extra})


def _seen(env: Environment) -> list[list[str]]:
    log = env.user_plugins_dir / "recorder" / "seen.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _run(env: Environment, config: Config, work: Any) -> Any:
    async def main() -> Any:
        async with Host(config, env) as host:
            return await work(host)

    return anyio.run(main)


def test_plugin_tool_is_deferred_and_found_described_and_called_through_the_bridge(
    env: Environment,
) -> None:
    async def work(host: Host) -> tuple[Any, ...]:
        session = host.new_session()
        assembly = host.assemble(200_000, session)
        found = await host.dispatch("tool_search", {"queries": ["weather forecast"]}, session)
        described = await host.dispatch("tool_describe", {"names": ["weather_forecast"]}, session)
        called = await host.dispatch(
            "tool_call",
            {"name": "weather_forecast", "arguments": {"city": "Oslo", "days": "3"}},
            session,
        )
        return assembly, found, described, called

    assembly, found, described, called = _run(env, _config(), work)
    names = [tool.name for tool in assembly.tools]
    assert "weather_forecast" not in names
    assert {"tool_search", "tool_describe", "tool_call"} <= set(names)
    assert "weather_forecast" in assembly.listing
    assert found.structured["results"][0]["matches"][0] == "weather_forecast"
    assert "city" in described.structured["tools"]["weather_forecast"]["parameters"]["properties"]
    assert not called.is_error, called.text_content
    assert called.structured == {"city": "Oslo", "days": 3, "sky": "clear"}


def test_hooks_see_the_real_tool_once_per_call_never_tool_call(env: Environment) -> None:
    async def work(host: Host) -> None:
        session = host.new_session()
        await host.dispatch("weather_forecast", {"city": "Rome"}, session)
        await host.dispatch(
            "tool_call",
            {"calls": [{"name": "weather_forecast", "arguments": {"city": "Oslo"}}]},
            session,
        )
        await host.dispatch("tool_search", {"queries": ["forecast"]}, session)

    _run(env, _config(), work)
    assert _seen(env) == [
        ["pre", "weather_forecast"],
        ["post", "weather_forecast"],
        ["pre", "weather_forecast"],
        ["post", "weather_forecast"],
        ["pre", "tool_search"],
        ["post", "tool_search"],
    ]


def test_activity_log_records_the_real_name_and_status(env: Environment) -> None:
    async def work(host: Host) -> None:
        session = host.new_session()
        await host.dispatch(
            "tool_call", {"name": "weather_forecast", "arguments": {"city": "Lima"}}, session
        )

    _run(env, _config(), work)
    log = env.log_dir / "activity.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(event["name"], event["status"]) for event in events] == [("weather_forecast", "ok")]


def test_catalog_toolset_is_deferred_and_answers_catalog_only(
    env: Environment, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps([{"name": "zoom_create_meeting", "description": "Create a Zoom meeting."}])
    )
    config = _config(tools={"catalogs": [{"path": str(catalog), "server": "zoom"}]})

    async def work(host: Host) -> Any:
        session = host.new_session()
        found = await host.dispatch("tool_search", {"queries": ["zoom meeting"]}, session)
        called = await host.dispatch("tool_call", {"name": "zoom_create_meeting"}, session)
        return found, called

    found, called = _run(env, config, work)
    assert found.structured["results"][0]["matches"] == ["zoom_create_meeting"]
    assert called.is_error
    assert "catalog-only tool" in called.text_content


def test_unknown_approval_policy_lists_the_valid_names(env: Environment) -> None:
    config = _config(approvals={"policy": "paranoid"})

    async def work(host: Host) -> Any:
        return host.dispatcher

    with pytest.raises(RegistrationError, match=r"paranoid.*annotations.*manual.*off"):
        _run(env, config, work)


def test_a_failing_hermes_tools_names_the_plugin(env: Environment) -> None:
    write_dir_plugin(
        env.user_plugins_dir,
        "broken_tools",
        source=(
            "from hermes_core._hookspecs import hookimpl\n\n"
            "@hookimpl\ndef hermes_tools(config, env):\n    raise OSError('no api key')\n"
        ),
    )
    config = Config.model_validate({"plugins": {"enabled": ["broken_tools", "weather"]}})

    async def work(host: Host) -> Any:
        return None

    with pytest.raises(PluginError, match=r"broken-tools.*no api key"):
        _run(env, config, work)

    lenient = Environment(
        home=env.home, cwd=env.cwd, variables={**env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )

    async def names(host: Host) -> Any:
        record = next(r for r in host.plugins if r.name == "broken-tools")
        return record.status, record.message, "weather_forecast" in host.registry

    status, message, weather_loaded = _run(lenient, config, names)
    assert status == "error"
    assert "no api key" in (message or "")
    assert weather_loaded


HALF_LOADED = """
from hermes_core._hookspecs import hookimpl
from hermes_core._specs import PreCallDirective, SearchBackendSpec


@hookimpl
def hermes_tools(config, env):
    raise RuntimeError("the tools could not be made")


@hookimpl
def hermes_pre_tool_call(call, session):
    return PreCallDirective.block("the half-loaded plugin is still steering calls")


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec(name="half", factory=lambda context: None)]
"""


def test_a_plugin_whose_hermes_tools_fails_runs_none_of_its_hooks_and_keeps_no_registration(
    env: Environment,
) -> None:
    write_dir_plugin(env.user_plugins_dir, "half", source=HALF_LOADED)
    lenient = Environment(
        home=env.home, cwd=env.cwd, variables={**env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )
    config = Config.model_validate({"plugins": {"enabled": ["half", "weather"]}})

    async def work(host: Host) -> Any:
        record = next(r for r in host.plugins if r.name == "half")
        called = await host.dispatch("weather_forecast", {"city": "Oslo"}, host.new_session())
        with pytest.raises(RegistrationError, match=r"unknown search backend 'half'"):
            host.create_search_backend("half")
        return record, called

    record, called = _run(lenient, config, work)
    assert record.status == "error"
    assert "the tools could not be made" in (record.message or "")
    assert "RuntimeError" in (record.traceback or "")  # shown with -v
    assert not called.is_error, called.text_content


SESSION_WATCHER = """
import json
from hermes_core._hookspecs import hookimpl

LOG = __import__("pathlib").Path(__file__).parent / "sessions.jsonl"


def _write(kind, session):
    with LOG.open("a") as handle:
        handle.write(json.dumps([kind, session.id]) + "\\n")


@hookimpl
def hermes_session_start(session):
    _write("start", session)


@hookimpl
def hermes_session_end(session):
    _write("end", session)


@hookimpl
def hermes_post_tool_call(call):
    raise RuntimeError("observers never stop a call")
"""


def test_session_hooks_run_on_entry_and_exit_and_observers_are_isolated(
    env: Environment,
) -> None:
    write_dir_plugin(env.user_plugins_dir, "sessions", source=SESSION_WATCHER)
    config = Config.model_validate({"plugins": {"enabled": ["sessions", "weather"]}})

    async def work(host: Host) -> tuple[str, Any]:
        async with host.session() as session:
            result = await host.dispatch("weather_forecast", {"city": "Oslo"}, session)
            return session.id, result

    session_id, result = _run(env, config, work)
    assert not result.is_error
    log = env.user_plugins_dir / "sessions" / "sessions.jsonl"
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen == [["start", session_id], ["end", session_id]]


def test_dispatch_with_an_unknown_policy_is_an_error_result_naming_the_valid_ones(
    env: Environment,
) -> None:
    config = _config(approvals={"policy": "paranoid"})

    async def work(host: Host) -> Any:
        return await host.dispatch("weather_forecast", {"city": "Oslo"}, host.new_session())

    result = _run(env, config, work)
    assert result.is_error
    assert result.error_code == "CONFIG_ERROR"
    assert "paranoid" in result.text_content
    assert "annotations" in result.text_content


def test_an_async_hermes_tools_is_a_plugin_error_saying_to_use_def(env: Environment) -> None:
    write_dir_plugin(
        env.user_plugins_dir,
        "async_tools",
        source=(
            "from hermes_core._hookspecs import hookimpl\n\n"
            "@hookimpl\nasync def hermes_tools(config, env):\n    return []\n"
        ),
    )
    config = Config.model_validate({"plugins": {"enabled": ["async_tools"]}})

    async def work(host: Host) -> None:
        return None

    with pytest.raises(PluginError, match=r"async-tools.*plain functions, not coroutines"):
        _run(env, config, work)


def test_a_host_entered_again_after_close_says_to_make_a_new_one(env: Environment) -> None:
    host = Host(_config(), env)

    async def main() -> None:
        async with host:
            pass
        async with host:
            pass

    with pytest.raises(HermesError, match=r"closed.*make a new Host") as raised:
        anyio.run(main)
    assert not isinstance(raised.value, RegistrationError)

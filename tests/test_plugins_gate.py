"""The gate: each plugin's status, decided from manifests and config before any import."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from hermes_core._config import Config, PluginsConfig
from hermes_core._paths import Environment
from hermes_core._plugins import (
    PluginSet,
    config_trusted_for_project,
    load_plugins,
    plan_plugins,
)
from hermes_core.testing import write_dir_plugin


def with_vars(env: Environment, **variables: str) -> Environment:
    return dataclasses.replace(env, variables={**env.variables, **variables})


def config(enabled: list[str] | None = None, disabled: list[str] | None = None) -> Config:
    return Config(plugins=PluginsConfig(enabled=enabled or [], disabled=disabled or []))


def statuses(plugins: PluginSet) -> dict[tuple[str, str], str]:
    return {(r.name, r.source): r.status for r in plugins.records}


def test_disabled_wins_over_enabled(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")

    plugins = load_plugins(config(enabled=["demo"], disabled=["demo"]), hermes_env)

    record = plugins.get("demo")
    assert record is not None
    assert record.status == "disabled"
    # Listed in both, the message says which list won, so the user knows what to remove.
    assert record.message == "disabled in plugins.disabled, which wins over plugins.enabled"
    assert not plugins.pm.has_plugin("demo")


def test_disabled_wins_over_bundled_default(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.bundled_plugins_dir, "core", manifest={"kind": "backend"})

    records, _ = plan_plugins(config(disabled=["core"]), hermes_env)

    assert [r.status for r in records] == ["disabled"]


def test_bundled_toolset_loads_without_being_listed(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.bundled_plugins_dir, "shell", manifest={"kind": "toolset"})
    write_dir_plugin(hermes_env.user_plugins_dir, "more-tools", manifest={"kind": "toolset"})

    plugins = load_plugins(config(), hermes_env)

    assert statuses(plugins) == {
        ("shell", "bundled"): "enabled (default)",
        ("more-tools", "user"): "not enabled",
    }


def test_bundled_backend_loads_without_being_listed(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.bundled_plugins_dir, "core", manifest={"kind": "backend"})
    write_dir_plugin(hermes_env.bundled_plugins_dir, "extra")

    plugins = load_plugins(config(), hermes_env)

    assert statuses(plugins) == {
        ("core", "bundled"): "enabled (default)",
        ("extra", "bundled"): "not enabled",
    }
    assert plugins.pm.has_plugin("core")


def test_not_enabled_plugin_gets_the_enable_hint(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")

    (record,) = plan_plugins(config(), hermes_env, config_path=hermes_env.config_path)[0]

    assert record.status == "not enabled"
    assert record.message == "enable it with: hermes plugins enable demo"


def test_enabled_names_match_after_normalization(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "My_Plugin", dirname="my-plugin")

    (record,) = plan_plugins(config(enabled=["my.plugin"]), hermes_env)[0]

    assert record.name == "my-plugin"
    assert record.status == "enabled"


def test_project_plugins_are_gated_without_the_flag(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.project_plugins_dir, "local-tool")

    plugins = load_plugins(config(enabled=["local-tool"]), hermes_env)

    (record,) = plugins.records
    assert record.status == "gated"
    assert record.message is not None
    assert "HERMES_ENABLE_PROJECT_PLUGINS" in record.message
    assert not plugins.pm.has_plugin("local-tool")


def test_project_plugins_load_with_the_flag_from_the_user_config(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.project_plugins_dir, "local-tool")
    env = with_vars(hermes_env, HERMES_ENABLE_PROJECT_PLUGINS="true")

    plugins = load_plugins(config(enabled=["local-tool"]), env, config_path=env.config_path)

    (record,) = plugins.records
    assert record.status == "enabled"
    assert plugins.pm.has_plugin("local-tool")
    assert "hermes_plugins.project.local_tool" in sys.modules


def test_config_inside_the_project_cannot_enable_project_plugins(
    hermes_env: Environment, tmp_path: Path
) -> None:
    write_dir_plugin(hermes_env.project_plugins_dir, "local-tool")
    home_in_project = hermes_env.cwd / ".hermes"
    env = dataclasses.replace(
        with_vars(hermes_env, HERMES_ENABLE_PROJECT_PLUGINS="1", HERMES_HOME=str(home_in_project)),
        home=home_in_project,
    )

    plugins = load_plugins(config(enabled=["local-tool"]), env, config_path=env.config_path)

    (record,) = plugins.records
    assert record.status == "not enabled"
    assert record.message is not None
    assert record.message.endswith("and the one in effect lies inside it")
    assert "outside the project)" not in record.message  # never says the file is outside
    assert "hermes_plugins.project.local_tool" not in sys.modules


def test_default_home_seen_from_its_parent_holds_user_plugins(hermes_env: Environment) -> None:
    # Running from the home directory: ./.hermes/plugins is ~/.hermes/plugins, the user's own.
    env = dataclasses.replace(hermes_env, cwd=hermes_env.home.parent / "user-home")
    env = dataclasses.replace(env, home=env.cwd / ".hermes")
    write_dir_plugin(env.user_plugins_dir, "mine")

    plugins = load_plugins(config(enabled=["mine"]), env, config_path=env.config_path)

    assert statuses(plugins) == {("mine", "user"): "enabled"}


def test_project_config_file_is_never_read(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.project_plugins_dir, "local-tool")
    project_config = hermes_env.cwd / ".hermes" / "config.yaml"
    project_config.write_text("plugins:\n  enabled: [local-tool]\n", encoding="utf-8")
    env = with_vars(hermes_env, HERMES_ENABLE_PROJECT_PLUGINS="1")
    from hermes_core._host import Host

    host = Host.from_environment(env)
    host.start()
    try:
        (record,) = host.plugins
        assert record.status == "not enabled"
    finally:
        host.close()


def test_requires_env_missing_is_an_error_naming_the_variables(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir, "weather", manifest={"requires_env": ["WEATHER_KEY", "X"]}
    )
    env = with_vars(hermes_env, X="set", HERMES_STRICT_PLUGINS="0")

    (record,) = plan_plugins(config(enabled=["weather"]), env)[0]

    assert record.status == "error"
    assert record.error == "missing environment variable: WEATHER_KEY (listed in requires_env)"


def test_requires_env_present_loads(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "weather", manifest={"requires_env": ["KEY"]})
    env = with_vars(hermes_env, KEY="secret")

    plugins = load_plugins(config(enabled=["weather"]), env)

    assert statuses(plugins) == {("weather", "user"): "enabled"}


def test_requires_hermes_unsatisfied_is_an_error_before_import(
    hermes_env: Environment, tmp_path: Path
) -> None:
    marker = tmp_path / "imported"
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "future",
        f"open({str(marker)!r}, 'w').close()\n",
        manifest={"requires_hermes": ">=99"},
    )
    env = with_vars(hermes_env, HERMES_STRICT_PLUGINS="0")

    plugins = load_plugins(config(enabled=["future"]), env)

    record = plugins.get("future")
    assert record is not None
    assert record.status == "error"
    assert record.error is not None
    assert "requires hermes-core >=99" in record.error
    assert not marker.exists()


def test_shadowed_copies_never_load(hermes_env: Environment, tmp_path: Path) -> None:
    marker = tmp_path / "bundled-imported"
    write_dir_plugin(
        hermes_env.bundled_plugins_dir,
        "demo",
        f"open({str(marker)!r}, 'w').close()\n",
        manifest={"kind": "backend"},
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")

    plugins = load_plugins(config(enabled=["demo"]), hermes_env)

    assert statuses(plugins) == {("demo", "user"): "enabled", ("demo", "bundled"): "shadowed"}
    assert not marker.exists()


@pytest.mark.parametrize("flag", ["1", "true", "yes"])
def test_project_flag_words(hermes_env: Environment, flag: str) -> None:
    write_dir_plugin(hermes_env.project_plugins_dir, "local-tool")
    env = with_vars(hermes_env, HERMES_ENABLE_PROJECT_PLUGINS=flag)

    (record,) = plan_plugins(config(), env)[0]

    assert record.status == "not enabled"


def test_working_from_home_is_working_in_no_project(
    hermes_env: Environment,
) -> None:
    # From ~, with HERMES_HOME=~/.config/hermes: ~ is no project (issue 27: it holds the user's
    # own files), so ./.hermes/plugins is no project folder and is not read, even with the gate
    # open; the user's config, under the working directory, is still the user's.
    assert hermes_env.user_home is not None
    home = hermes_env.user_home / ".config" / "hermes"
    env = dataclasses.replace(
        with_vars(hermes_env, HERMES_HOME=str(home), HERMES_ENABLE_PROJECT_PLUGINS="1"),
        home=home,
        cwd=hermes_env.user_home,
    )
    write_dir_plugin(env.project_plugins_dir, "local-tool")

    plugins = load_plugins(config(enabled=["local-tool"]), env, config_path=env.config_path)

    assert statuses(plugins) == {}
    assert config_trusted_for_project(env, env.config_path)


def test_no_config_is_inside_the_project_when_working_from_the_root(
    hermes_env: Environment,
) -> None:
    at_root = dataclasses.replace(hermes_env, cwd=Path(hermes_env.cwd.anchor))

    assert not config_trusted_for_project(hermes_env, hermes_env.cwd / "config.yaml")
    assert config_trusted_for_project(at_root, hermes_env.config_path)


def test_a_host_warns_when_a_plugin_its_config_enables_is_gated(hermes_env: Environment) -> None:
    # An embedder's plugin under ./.hermes/plugins, enabled in its Config: host.warnings was
    # empty and the embedder only met "There is no tool named 'stamp'" later; the reason sat
    # in host.plugins['stamp'].message.
    from hermes_core._host import Host

    plugin = write_dir_plugin(hermes_env.project_plugins_dir, "stamp")
    host = Host(config(enabled=["stamp"]), hermes_env, strict=False)
    try:
        host.load_plugins()
        assert host.warnings == [
            f"stamp is enabled but will not load: plugin 'stamp' (project, {plugin}) is gated: "
            "set HERMES_ENABLE_PROJECT_PLUGINS=1 in the environment to load the project's "
            "plugins (only for a project you trust)"
        ]
    finally:
        host.close()


def test_a_gated_plugin_nothing_enables_is_no_warning(hermes_env: Environment) -> None:
    # A cloned project's plugins are gated by design: only a name the config asks for is news.
    write_dir_plugin(hermes_env.project_plugins_dir, "stamp")

    records, warnings = plan_plugins(config(), hermes_env)

    assert [r.status for r in records] == ["gated"]
    assert warnings == []

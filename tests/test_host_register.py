"""``Host.register``: plugin objects given in code are enabled plugins of the source ``direct``,
registered after every discovered plugin."""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import pytest

from hermes_core import HermesError, Host
from hermes_core.plugin import Config, Environment, PluginError, Tool, hookimpl
from hermes_core.testing import write_dir_plugin


class Greets:
    """A plugin object with one tool."""

    def __init__(self, text: str = "hello") -> None:
        self.text = text

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        return [Tool("greet", "Greet.", handler=lambda: self.text)]


class Order:
    """Records the order in which session-start hooks run."""

    def __init__(self, label: str, seen: list[str]) -> None:
        self.label = label
        self.seen = seen

    @hookimpl
    def hermes_session_start(self, session: Any) -> None:
        self.seen.append(self.label)


def test_a_registered_object_is_an_enabled_plugin_of_source_direct(
    hermes_env: Environment,
) -> None:
    host = Host(Config(), hermes_env)
    name = host.register(Greets(), name="Greeter_Tools")
    host.start()
    try:
        record = next(r for r in host.plugins if r.name == "greeter-tools")
        tool = host.registry.get("greet")
    finally:
        host.close()

    assert name == "greeter-tools"
    assert (record.source, record.status, record.hooks) == ("direct", "enabled", ["hermes_tools"])
    assert tool is not None
    assert tool.source_name == "greeter-tools"


def test_the_name_defaults_to_the_module_name_or_the_class_name(hermes_env: Environment) -> None:
    host = Host(Config(), hermes_env)
    module = types.ModuleType("acme.weather_tools")

    assert host.register(module) == "weather-tools"
    assert host.register(Greets()) == "greets"


def test_registering_after_start_is_an_error(hermes_env: Environment) -> None:
    host = Host(Config(), hermes_env)
    host.start()
    try:
        with pytest.raises(HermesError, match="before the host starts"):
            host.register(Greets(), name="late")
    finally:
        host.close()


def test_one_name_or_one_object_registered_twice_is_an_error(hermes_env: Environment) -> None:
    host = Host(Config(), hermes_env)
    plugin = Greets()
    host.register(plugin, name="first")

    with pytest.raises(ValueError, match="'first' is already registered"):
        host.register(Greets(), name="first")
    with pytest.raises(ValueError, match="already registered as 'first'"):
        host.register(plugin, name="second")


def test_direct_hooks_run_before_discovered_ones_the_last_registered_first(
    hermes_env: Environment,
) -> None:
    seen: list[str] = []
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "discovered",
        "from hermes_core.plugin import hookimpl\n"
        "SEEN = []\n"
        "@hookimpl\ndef hermes_session_start(session):\n    SEEN.append('discovered')\n",
    )
    host = Host(Config.model_validate({"plugins": {"enabled": ["discovered"]}}), hermes_env)
    host.register(Order("first", seen), name="first")
    host.register(Order("second", seen), name="second")
    host.start()
    try:
        host.pm.hook.hermes_session_start(session=None)
        discovered = host.pm.get_plugin("discovered")
    finally:
        host.close()

    # pluggy calls the last registered implementation first; discovered plugins come before.
    assert seen == ["second", "first"]
    assert discovered.SEEN == ["discovered"]


def test_a_direct_plugin_shadows_a_discovered_one_of_its_name_which_is_never_imported(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "greeter", "raise SystemExit('imported')\n")
    host = Host(Config.model_validate({"plugins": {"enabled": ["greeter"]}}), hermes_env)
    host.register(Greets(), name="greeter")
    host.start()
    try:
        copies = {r.source: (r.status, r.shadowed_by, r.shadows) for r in host.plugins}
    finally:
        host.close()

    assert copies == {
        "direct": ("enabled", None, ["user"]),
        "user": ("shadowed", "direct", []),
    }


def test_a_direct_tool_overrides_a_discovered_tool_of_the_same_name(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "discovered",
        "from hermes_core.plugin import Tool, hookimpl\n"
        "@hookimpl\ndef hermes_tools():\n"
        "    return [Tool('greet', 'Greet.', handler=lambda: 'discovered')]\n",
    )
    host = Host(Config.model_validate({"plugins": {"enabled": ["discovered"]}}), hermes_env)
    host.register(Greets("direct"), name="mine")
    host.start()
    try:
        tool = host.registry.get("greet")
    finally:
        host.close()

    assert tool is not None
    assert tool.source_name == "mine"


def test_a_direct_plugin_with_an_unknown_hook_is_its_error(hermes_env: Environment) -> None:
    class Typo:
        @hookimpl
        def hermes_sesion_start(self, session: Any) -> None: ...

    host = Host(Config(), hermes_env)
    host.register(Typo(), name="typo")

    with pytest.raises(PluginError, match=r"'typo': implements unknown hook hermes_sesion_start"):
        host.start()


def test_an_unhashable_plugin_object_registers(hermes_env: Environment) -> None:
    @dataclasses.dataclass
    class Settings:  # a dataclass with eq=True has no hash
        text: str

        @hookimpl
        def hermes_tools(self) -> list[Tool]:
            return [Tool("greet", "Greet.", handler=lambda: self.text)]

    host = Host(Config(), hermes_env)
    host.register(Settings("hi"), name="settings")
    host.start()
    try:
        assert "greet" in host.registry
    finally:
        host.close()

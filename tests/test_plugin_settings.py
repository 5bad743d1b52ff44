"""Typed plugin settings: ``PluginContext.settings_as(cls)`` checks ``plugins.entries.<name>``
against a dataclass or a config section and fills the defaults; what it refuses is an error
naming the plugin, the key, the place in ``config.yaml`` and what was expected."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest
from annotated_types import Ge

from hermes_core._config import Config
from hermes_core._config.checks import http_url
from hermes_core._config.sections import Number, Section
from hermes_core._errors import PluginError, PluginSettingsError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._specs import PluginContext
from hermes_core.testing import write_dir_plugin

pytestmark = pytest.mark.anyio

TYPED_PLUGIN = """
from dataclasses import dataclass, field
from typing import Annotated, Literal

from annotated_types import Ge, Interval

from hermes_core.plugin import PluginContext, Tool, ToolResult, hookimpl


def _unit(value):
    if not isinstance(value, str) or not value.islower():
        raise ValueError(f"expected a unit in lower case, got {value!r}")
    return value


@dataclass(frozen=True)
class UnitsSettings:
    system: Literal["metric", "imperial"] = "metric"
    max_items: Annotated[int, Ge(1)] = 10
    ratio: Annotated[float, Interval(ge=0, le=1)] = 0.5
    units: list[Annotated[str, _unit]] = field(default_factory=lambda: ["m"])


@hookimpl
def hermes_tools(config, env):
    settings = PluginContext.of("units-demo", config, env).settings_as(UnitsSettings)
    return [
        Tool(
            name="units_settings",
            description=repr(settings),
            handler=lambda: ToolResult.text("ok"),
        )
    ]
"""


def _config(hermes_env: Environment, entry: str) -> None:
    hermes_env.config_path.write_text(
        f"plugins:\n  enabled: [units-demo]\n  entries:\n    units_demo:\n{entry}",
        encoding="utf-8",
    )


def _settings_seen(host: Host) -> str:
    tool = host.registry.get("units_settings")
    assert tool is not None
    return tool.description


async def test_typed_settings_are_converted_and_the_defaults_fill_what_is_missing(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "units-demo", TYPED_PLUGIN)
    _config(hermes_env, "      system: imperial\n      max_items: 3\n      units: [ft, in]\n")

    async with Host.from_environment(hermes_env) as host:
        seen = _settings_seen(host)

    assert seen == ("UnitsSettings(system='imperial', max_items=3, ratio=0.5, units=['ft', 'in'])")


async def test_a_plugin_without_an_entry_gets_every_default(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "units-demo", TYPED_PLUGIN)
    hermes_env.config_path.write_text("plugins:\n  enabled: [units-demo]\n", encoding="utf-8")

    async with Host.from_environment(hermes_env) as host:
        seen = _settings_seen(host)

    assert seen == "UnitsSettings(system='metric', max_items=10, ratio=0.5, units=['m'])"


@pytest.mark.parametrize(
    ("entry", "line", "key", "expected"),
    [
        pytest.param(
            "      max_itens: 3\n",
            5,
            "plugins.entries.units_demo.max_itens",
            "unknown key, did you mean 'max_items'?",
            id="unknown-key",
        ),
        pytest.param(
            "      system: 3\n",
            5,
            "plugins.entries.units_demo.system",
            "expected one of 'metric' or 'imperial', got 3",
            id="wrong-type",
        ),
        pytest.param(
            "      system: metric\n      max_items: 0\n",
            6,
            "plugins.entries.units_demo.max_items",
            "expected a whole number of at least 1, got 0",
            id="out-of-range",
        ),
        pytest.param(
            "      ratio: 1.5\n",
            5,
            "plugins.entries.units_demo.ratio",
            "expected a number between 0 and 1, got 1.5",
            id="out-of-interval",
        ),
        pytest.param(
            "      units: [m, KM]\n",
            5,
            "plugins.entries.units_demo.units[1]",
            "expected a unit in lower case, got 'KM'",
            id="the-plugin's-own-check",
        ),
    ],
)
async def test_a_refused_setting_names_the_plugin_the_key_its_line_and_what_was_expected(
    hermes_env: Environment, entry: str, line: int, key: str, expected: str
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "units-demo", TYPED_PLUGIN)
    _config(hermes_env, entry)

    with pytest.raises(PluginError) as caught:
        async with Host.from_environment(hermes_env):
            pass

    assert caught.value.plugin == "units-demo"
    assert f"{hermes_env.config_path}:{line}: {key}: {expected}" in str(caught.value)


async def test_every_refused_setting_is_listed(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "units-demo", TYPED_PLUGIN)
    _config(hermes_env, "      system: 3\n      max_items: zero\n")

    with pytest.raises(PluginError) as caught:
        async with Host.from_environment(hermes_env):
            pass

    message = str(caught.value)
    path = hermes_env.config_path
    assert "2 problems" in message
    assert f"{path}:5: plugins.entries.units_demo.system: expected one of" in message
    assert f"{path}:6: plugins.entries.units_demo.max_items: expected a whole number" in message


@dataclass(frozen=True)
class Limits:
    size: Annotated[int, Ge(1)] = 5
    names: list[str] = field(default_factory=list)


class LimitsSection(Section):
    size: Annotated[int, Number(low=1, whole=True)] = 5
    mode: Literal["fast", "slow"] = "fast"


def _context(settings: dict[str, object], env: Environment) -> PluginContext:
    return PluginContext(Config(), env, settings, plugin="limits")


def test_a_dataclass_gets_its_values_checked_and_converted(hermes_env: Environment) -> None:
    limits = _context({"size": 7.0, "names": ["a"]}, hermes_env).settings_as(Limits)

    assert limits == Limits(size=7, names=["a"])
    assert isinstance(limits.size, int)


def test_a_section_subclass_is_checked_the_same_way(hermes_env: Environment) -> None:
    assert _context({"mode": "slow"}, hermes_env).settings_as(LimitsSection) == LimitsSection(
        mode="slow"
    )
    with pytest.raises(PluginSettingsError) as caught:
        _context({"size": 0}, hermes_env).settings_as(LimitsSection)

    assert caught.value.plugin == "limits"
    assert caught.value.key == "plugins.entries.limits.size"
    assert str(caught.value) == (
        "plugin 'limits': plugins.entries.limits.size: expected a whole number of at least 1, got 0"
    )


def test_settings_not_loaded_from_a_file_are_named_by_their_key_alone(
    hermes_env: Environment,
) -> None:
    with pytest.raises(PluginSettingsError) as caught:
        _context({"names": "a"}, hermes_env).settings_as(Limits)

    assert (caught.value.path, caught.value.line) == (None, None)
    assert "plugins.entries.limits.names: expected a list, got 'a'" in str(caught.value)


@dataclass(frozen=True)
class Server:
    url: Annotated[str, http_url] = "https://example.com/v1"


@pytest.mark.parametrize(("written", "said"), [(8080, "8080"), (["https://x.org"], "a list")])
def test_http_url_as_docs_api_shows_it_refuses_a_value_that_is_no_text(
    written: object, said: str, hermes_env: Environment
) -> None:
    # docs/api.md: Annotated[str, http_url]. A plain check gets the value as written, before
    # its type is checked: a number was an AttributeError, not a setting's problem.
    with pytest.raises(PluginSettingsError) as caught:
        _context({"url": written}, hermes_env).settings_as(Server)

    assert str(caught.value) == (
        "plugin 'limits': plugins.entries.limits.url: expected an http:// or https:// URL, "
        f"got {said}"
    )


def test_a_class_that_is_neither_a_dataclass_nor_a_section_is_a_type_error(
    hermes_env: Environment,
) -> None:
    with pytest.raises(TypeError, match="a dataclass or a config Section"):
        _context({}, hermes_env).settings_as(dict)

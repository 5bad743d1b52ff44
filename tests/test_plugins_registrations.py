"""Registration hooks: specs collected per plugin, duplicates refused, selection by config name."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from hermes_core._config import ApprovalsConfig, Config, PluginsConfig
from hermes_core._errors import PluginError, RegistrationError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._plugins.candidates import Source
from hermes_core._plugins.plugin_tools import ToolOverride
from hermes_core.testing import write_dir_plugin

pytestmark = pytest.mark.anyio


def registering(hook: str, spec: str, *names: str) -> str:
    specs = ", ".join(f"{spec}({name!r}, factory=lambda ctx: {name!r})" for name in names)
    return (
        "from hermes_core._hookspecs import hookimpl\n"
        f"from hermes_core._specs import {spec}\n"
        f"@hookimpl\ndef {hook}():\n    return [{specs}]\n"
    )


def search_backends(*names: str) -> str:
    return registering("hermes_search_backends", "SearchBackendSpec", *names)


def config(*enabled: str, backend: str = "bm25", policy: str = "annotations") -> Config:
    base = Config(plugins=PluginsConfig(enabled=list(enabled)))
    base.tools.tool_search.backend = backend
    return base.model_copy(update={"approvals": ApprovalsConfig(policy=policy)})


async def test_two_plugins_registering_one_backend_name_is_an_error_naming_both(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "fast-search", search_backends("quick"))
    write_dir_plugin(hermes_env.user_plugins_dir, "other-search", search_backends("quick"))

    with pytest.raises(RegistrationError) as caught:
        async with Host(config("fast-search", "other-search"), hermes_env):
            pass

    message = str(caught.value)
    assert "'quick'" in message
    assert "'fast-search'" in message
    assert "'other-search'" in message


async def test_unknown_backend_name_lists_the_valid_names(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "searches", search_backends("alpha", "beta"))

    async with Host(config("searches", backend="gamma"), hermes_env) as host:
        with pytest.raises(RegistrationError) as caught:
            host.select_search_backend()

    message = str(caught.value)
    assert "'gamma'" in message
    assert "tools.tool_search.backend" in message
    assert "valid names: alpha, beta" in message


async def test_backend_is_selected_by_its_config_name(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "searches", search_backends("alpha", "beta"))

    async with Host(config("searches", backend="beta"), hermes_env) as host:
        spec = host.select_search_backend()
        registered = host.registrations.search_backends["beta"]

    assert spec.name == "beta"
    assert spec.factory(None) == "beta"  # type: ignore[arg-type]
    assert registered.plugin == "searches"


async def test_approval_policy_and_gateway_are_selected_by_name(hermes_env: Environment) -> None:
    source = (
        registering("hermes_approval_policies", "ApprovalPolicySpec", "careful")
        + (
            registering("hermes_connector_gateways", "ConnectorGatewaySpec", "http").split("\n", 1)[
                1
            ]
        )
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "policies", source)

    async with Host(config("policies", policy="careful"), hermes_env) as host:
        assert host.registrations.select("approval_policy", "careful").name == "careful"
        assert host.select_connector_gateway().name == "http"


async def test_no_backend_registered_says_so(hermes_env: Environment) -> None:
    async with Host(config(), hermes_env) as host:
        with pytest.raises(RegistrationError, match="no loaded plugin registers one"):
            host.select_search_backend()


async def test_registration_hook_returning_the_wrong_type_marks_its_plugin_error(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "sloppy",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl\ndef hermes_search_backends():\n    return ['not a spec']\n",
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "searches", search_backends("alpha"))
    env = dataclasses.replace(
        hermes_env, variables={**hermes_env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )

    async with Host(config("sloppy", "searches", backend="alpha"), env) as host:
        sloppy = next(r for r in host.plugins if r.name == "sloppy")
        assert sloppy.status == "error"
        assert "must return a list of SearchBackendSpec, got a list holding str 'not a spec'" in (
            sloppy.error or ""
        )
        assert not host.pm.has_plugin("sloppy")
        assert host.select_search_backend().name == "alpha"


async def test_registration_hook_raising_is_a_plugin_error_in_strict_mode(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "crashy",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl\ndef hermes_approval_policies():\n    raise KeyError('x')\n",
    )

    with pytest.raises(PluginError, match=r"'crashy'.*hermes_approval_policies raised KeyError"):
        async with Host(config("crashy"), hermes_env):
            pass


async def test_override_of_a_bundled_backend_that_is_not_enabled_is_named_on_selection(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.bundled_plugins_dir,
        "bm25",
        search_backends("bm25"),
        manifest={"kind": "backend"},
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "bm25", search_backends("bm25"))

    async with Host(config(backend="bm25"), hermes_env) as host:
        statuses = {(r.source, r.status) for r in host.plugins}
        with pytest.raises(RegistrationError) as caught:
            host.select_search_backend()

    assert statuses == {("user", "not enabled"), ("bundled", "shadowed")}
    message = str(caught.value)
    assert "plugin 'bm25' (user, " in message
    assert "shadows the bundled copy" in message
    assert "is not enabled: enable it with: hermes plugins enable bm25" in message


async def test_override_of_a_bundled_backend_once_enabled_is_selected(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.bundled_plugins_dir,
        "bm25",
        search_backends("bm25"),
        manifest={"kind": "backend"},
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "bm25", search_backends("bm25"))

    async with Host(config("bm25", backend="bm25"), hermes_env) as host:
        host.select_search_backend()
        assert host.registrations.search_backends["bm25"].plugin == "bm25"
        assert next(r for r in host.plugins if r.winner).source == "user"


ASYNC_REGISTRATION = (
    "from hermes_core._hookspecs import hookimpl\n"
    "from hermes_core._specs import SearchBackendSpec\n"
    "@hookimpl\nasync def hermes_search_backends():\n"
    "    return [SearchBackendSpec('eager', factory=lambda ctx: None)]\n"
)


async def test_async_registration_hook_marks_its_plugin_error_without_a_stray_coroutine(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "eager", ASYNC_REGISTRATION)
    write_dir_plugin(hermes_env.user_plugins_dir, "searches", search_backends("alpha"))
    env = dataclasses.replace(
        hermes_env, variables={**hermes_env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )

    async with Host(config("eager", "searches", backend="alpha"), env) as host:
        eager = next(r for r in host.plugins if r.name == "eager")
        assert eager.status == "error"
        assert eager.error == (
            "hermes_search_backends: registration hooks must be plain functions, not coroutines "
            "(define it with def, not async def)"
        )
        assert not host.pm.has_plugin("eager")
        assert "eager" not in host.registrations.search_backends
    gc.collect()  # an unawaited coroutine would warn here, an error under filterwarnings=error


async def test_async_registration_hook_is_a_plugin_error_in_strict_mode(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "eager", ASYNC_REGISTRATION)

    with pytest.raises(PluginError, match=r"'eager'.*must be plain functions, not coroutines"):
        async with Host(config("eager"), hermes_env):
            pass
    gc.collect()


async def test_backend_factory_gets_the_settings_written_under_another_spelling(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "settings-demo", search_backends("demo"))
    hermes_env.config_path.write_text(
        "plugins:\n  enabled: [settings-demo]\n  entries:\n    settings_demo: {units: metric}\n",
        encoding="utf-8",
    )

    async with Host.from_environment(hermes_env) as host:
        registered = host.registrations.search_backends["demo"]
        context = host.plugin_context(registered.plugin)

    assert registered.plugin == "settings-demo"
    assert dict(context.settings) == {"units": "metric"}


@pytest.mark.parametrize(
    ("owner_source", "replaced", "mark"),
    [
        ("bundled", "bundled plugin 'files'", "overrides bundled 'files'"),
        (None, "'files'", "overrides 'files'"),  # an owner that is no plugin: a catalog
    ],
)
def test_a_tool_override_words_whose_tool_was_replaced_for_plugins_info_and_tools_list(
    owner_source: Source | None, replaced: str, mark: str
) -> None:
    found = ToolOverride("read_file", "myread", "user", "files", owner_source)
    assert (found.replaced, found.replacer, found.mark) == (replaced, "user plugin 'myread'", mark)


async def test_a_hook_returning_one_name_twice_marks_its_plugin_error(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "doubled", search_backends("alpha", "alpha"))
    env = dataclasses.replace(
        hermes_env, variables={**hermes_env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )

    async with Host(config("doubled"), env) as host:
        doubled = next(r for r in host.plugins if r.name == "doubled")
        assert doubled.status == "error"
        assert doubled.message == (
            "hermes_search_backends returned the name 'alpha' twice: give each spec its own name"
        )
        assert "alpha" not in host.registrations.search_backends

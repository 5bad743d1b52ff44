"""The selection step: a backend, gateway or policy is built from its plugin's factory, checked
against its protocol, and any failure names the plugin, the hook and what was expected."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from hermes_core import HermesError, Host, RegistrationError
from hermes_core._plugins.selection import protocol_methods
from hermes_core.connectors._gateway import (
    GatewayConnections,
    GatewayExecution,
    GatewayListing,
    GatewaySchemas,
    GatewaySearch,
)
from hermes_core.plugin import (
    ApprovalPolicySpec,
    Config,
    ConnectorGatewaySpec,
    Decision,
    Environment,
    PluginError,
    SearchBackendSpec,
    Tool,
    hookimpl,
)
from hermes_core.search import SearchBackend


class Registers:
    """A plugin object registering the given backends, gateways and policies (name -> factory)."""

    def __init__(
        self,
        backends: dict[str, Any] | None = None,
        gateways: dict[str, Any] | None = None,
        policies: dict[str, Any] | None = None,
        tools: Sequence[Tool] = (),
    ) -> None:
        self.backends = backends or {}
        self.gateways = gateways or {}
        self.policies = policies or {}
        self.tools = list(tools)

    @hookimpl
    def hermes_search_backends(self) -> list[SearchBackendSpec]:
        return [SearchBackendSpec(name, factory) for name, factory in self.backends.items()]

    @hookimpl
    def hermes_connector_gateways(self) -> list[ConnectorGatewaySpec]:
        return [ConnectorGatewaySpec(name, factory) for name, factory in self.gateways.items()]

    @hookimpl
    def hermes_approval_policies(self) -> list[ApprovalPolicySpec]:
        return [ApprovalPolicySpec(name, factory) for name, factory in self.policies.items()]

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        return self.tools


def started(env: Environment, plugin: object, name: str = "mine", **config: Any) -> Host:
    host = Host(Config.model_validate(config), env)
    host.register(plugin, name=name)
    host.start()
    return host


def lenient(env: Environment) -> Environment:
    return dataclasses.replace(env, variables={**env.variables, "HERMES_STRICT_PLUGINS": "0"})


class Calm:
    """An approval policy that allows every call."""

    def decide(self, call: Any, session: Any) -> Decision:
        return Decision.allow()


CALM = {"calm": lambda context: Calm()}


class OnlyBuilds:
    def build(self, documents: Any) -> None:
        pass


class AsyncSearch:
    def build(self, documents: Any) -> None: ...
    def add(self, documents: Any) -> None: ...
    def remove(self, names: Any) -> None: ...
    async def search(self, query: str, limit: int, admission: str, extra: Any = ()) -> list[Any]:
        return []

    def unmatched_words(self, query: str, hits: Any, extra: Any = ()) -> list[str]:
        return []

    def __len__(self) -> int:
        return 0


class PlainGateway:
    """A gateway whose search is a plain method: hermes-core awaits every route."""

    def search(self, use_cases: Sequence[str]) -> GatewaySearch:
        return GatewaySearch()

    async def schemas(self, slugs: Sequence[str]) -> GatewaySchemas:
        return GatewaySchemas()

    async def execute(self, calls: Sequence[Any]) -> GatewayExecution:
        return GatewayExecution()

    async def connect(self, connectors: Sequence[str], reinitiate: bool) -> GatewayConnections:
        return GatewayConnections()

    async def list_connectors(self) -> GatewayListing:
        return GatewayListing()

    async def aclose(self) -> None:
        pass


class GoodGateway(PlainGateway):
    async def search(self, use_cases: Sequence[str]) -> GatewaySearch:  # type: ignore[override]
        return GatewaySearch()


def test_the_search_backend_protocol_has_the_six_methods_backends_implement() -> None:
    assert list(protocol_methods(SearchBackend)) == [
        "build",
        "add",
        "remove",
        "search",
        "unmatched_words",
        "__len__",
    ]


def test_a_backend_without_some_methods_is_an_error_naming_plugin_hook_and_the_methods(
    hermes_env: Environment,
) -> None:
    host = started(hermes_env, Registers(backends={"half": lambda context: OnlyBuilds()}))
    try:
        with pytest.raises(PluginError) as caught:
            host.create_search_backend("half")
    finally:
        host.close()

    assert caught.value.plugin == "mine"
    assert str(caught.value) == (
        "plugin 'mine': search backend 'half' (from hermes_search_backends) could not be built: "
        "its factory returned OnlyBuilds, which has no add, remove, search, unmatched_words, "
        "__len__; expected a SearchBackend (build, add, remove, search, unmatched_words, "
        "__len__)"
    )


def test_a_factory_that_raises_is_reported_with_its_exception_alone(
    hermes_env: Environment,
) -> None:
    def make(context: Any) -> OnlyBuilds:
        raise FileNotFoundError("no model at /srv/model: model.safetensors is missing")

    host = started(hermes_env, Registers(backends={"down": make}))
    try:
        with pytest.raises(PluginError) as caught:
            host.create_search_backend("down")
    finally:
        host.close()

    # The factory never returned: what a backend must provide is not what went wrong.
    assert str(caught.value) == (
        "plugin 'mine': search backend 'down' (from hermes_search_backends) could not be built: "
        "its factory raised FileNotFoundError: no model at /srv/model: model.safetensors is "
        f"missing (at {__file__}, line {make.__code__.co_firstlineno + 1})"
    )


def test_a_factory_returning_none_is_an_error_saying_so(hermes_env: Environment) -> None:
    host = started(hermes_env, Registers(backends={"lazy": lambda context: None}))
    try:
        with pytest.raises(PluginError, match="its factory returned None, which has no build"):
            host.create_search_backend("lazy")
    finally:
        host.close()


def test_an_async_factory_is_an_error_saying_to_use_def_without_a_stray_coroutine(
    hermes_env: Environment,
) -> None:
    async def make(context: Any) -> OnlyBuilds:
        return OnlyBuilds()

    host = started(hermes_env, Registers(backends={"eager": make}))
    try:
        with pytest.raises(PluginError, match=r"returned a coroutine: factories must be plain"):
            host.create_search_backend("eager")
    finally:
        host.close()
    gc.collect()  # an unawaited coroutine would warn here, an error under filterwarnings=error


def test_an_async_method_where_the_protocol_has_a_plain_one_is_an_error(
    hermes_env: Environment,
) -> None:
    host = started(hermes_env, Registers(backends={"eager": lambda context: AsyncSearch()}))
    try:
        with pytest.raises(
            PluginError, match=r"returned AsyncSearch, whose search must be a plain"
        ):
            host.create_search_backend("eager")
    finally:
        host.close()


def test_a_gateway_is_checked_against_the_gateway_protocol_hermes_awaits(
    hermes_env: Environment,
) -> None:
    plugin = Registers(
        gateways={"plain": lambda c: PlainGateway(), "good": lambda c: GoodGateway()}
    )
    host = started(hermes_env, plugin)
    try:
        with pytest.raises(PluginError) as caught:
            host.create_connector_gateway("http://127.0.0.1:9/", "a-token", "plain")
        good = host.create_connector_gateway("http://127.0.0.1:9/", "a-token", "good")
    finally:
        host.close()

    assert "connector gateway 'plain' (from hermes_connector_gateways)" in str(caught.value)
    assert "whose search must be async def" in str(caught.value)
    assert (
        "expected a ConnectorGateway (search, schemas, execute, connect, list_connectors, aclose)"
        in str(caught.value)
    )
    assert isinstance(good, GoodGateway)


def test_a_policy_without_decide_is_refused_naming_the_plugin(hermes_env: Environment) -> None:
    host = started(
        hermes_env,
        Registers(policies={"odd": lambda context: object()}),
        approvals={"policy": "odd"},
    )
    try:
        with pytest.raises(PluginError) as caught:
            host.prepare_tools()
    finally:
        host.close()

    assert str(caught.value).startswith(
        "plugin 'mine': approval policy 'odd' (from hermes_approval_policies) could not be "
        "built: its factory returned object, which has no decide"
    )


def test_an_unknown_policy_name_lists_the_valid_ones(hermes_env: Environment) -> None:
    host = started(hermes_env, Registers(policies={"calm": lambda c: object()}))
    host.config.approvals.policy = "strict"
    try:
        with pytest.raises(RegistrationError) as caught:
            host.prepare_tools()
    finally:
        host.close()

    assert "unknown approval policy 'strict' (set by approvals.policy)" in str(caught.value)
    assert "valid names: calm" in str(caught.value)


def test_a_policy_name_registered_twice_names_both_plugins(hermes_env: Environment) -> None:
    host = Host(Config(), hermes_env)
    host.register(Registers(policies={"calm": lambda c: object()}), name="first")
    host.register(Registers(policies={"calm": lambda c: object()}), name="second")

    # Strict: raised in the words a tool name's clash has (sorted: the order found decides nothing).
    with pytest.raises(
        RegistrationError,
        match=r"approval policy 'calm' is registered by two plugins, 'first' and 'second'",
    ):
        host.start()


def test_a_hermes_error_of_the_factory_itself_passes_unchanged(hermes_env: Environment) -> None:
    def make(context: Any) -> OnlyBuilds:
        raise RegistrationError("unknown search backend 'base' (asked for by 'layered')")

    host = started(hermes_env, Registers(backends={"layered": make}))
    try:
        with pytest.raises(RegistrationError, match="asked for by 'layered'"):
            host.create_search_backend("layered")
    finally:
        host.close()


def test_a_failed_factory_is_recorded_as_its_plugin_error_while_its_tools_stay(
    hermes_env: Environment,
) -> None:
    def make(context: Any) -> OnlyBuilds:
        raise KeyError("index")

    shout = Tool("shout", "Shout.", handler=lambda: "HI")
    host = started(lenient(hermes_env), Registers(backends={"down": make}, tools=[shout]))
    try:
        with pytest.raises(PluginError):
            host.create_search_backend("down")
        record = next(r for r in host.plugins if r.name == "mine")
        still_registered = host.pm.has_plugin("mine") and "shout" in host.registry
    finally:
        host.close()

    assert record.status == "error"
    assert record.error is not None
    assert "its factory raised KeyError: 'index'" in record.error
    assert record.traceback is not None
    assert "KeyError" in record.traceback
    assert still_registered


@pytest.mark.parametrize("grant", [None, frozenset({"core", "mine"})], ids=["shared", "granted"])
def test_a_backend_that_cannot_be_built_makes_tool_search_an_error_result_naming_the_plugin(
    hermes_env: Environment, grant: frozenset[str] | None
) -> None:
    def make(context: Any) -> OnlyBuilds:
        raise RuntimeError("index server down")

    shout = Tool("shout", "Shout.", handler=lambda: "HI", toolset="mine")
    env = lenient(hermes_env)

    async def main() -> tuple[Any, Any]:
        plugin = Registers(backends={"down": make}, policies=CALM, tools=[shout])
        host = started(env, plugin, **DOWN)
        async with host.session(granted_toolsets=grant) as session:
            searched = await host.dispatch("tool_search", {"queries": ["shout"]}, session)
            shouted = await host.dispatch("shout", {}, session)
        host.close()
        return searched, shouted

    searched, shouted = anyio.run(main)

    assert searched.is_error
    assert "plugin 'mine': search backend 'down'" in searched.text_content
    assert "RuntimeError: index server down" in searched.text_content
    assert shouted.text_content == "HI"


DOWN: dict[str, Any] = {
    "tools": {"tool_search": {"backend": "down"}},
    "approvals": {"policy": "calm"},
}


def test_a_backend_that_cannot_be_built_raises_at_start_in_strict_mode(
    hermes_env: Environment,
) -> None:
    def make(context: Any) -> OnlyBuilds:
        raise RuntimeError("index server down")

    host = started(hermes_env, Registers(backends={"down": make}, policies=CALM), **DOWN)
    try:
        with pytest.raises(HermesError, match="plugin 'mine': search backend 'down'"):
            host.prepare_tools()
    finally:
        host.close()


def test_a_policy_built_by_a_good_factory_decides(hermes_env: Environment) -> None:
    host = started(hermes_env, Registers(policies=CALM), approvals={"policy": "calm"})
    try:
        assert isinstance(host.dispatcher.policy, Calm)
    finally:
        host.close()

"""When connectors are in scope (enabled AND a gateway URL AND signed in), and what the model
sees of them: nothing at all when they are not."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from gateways import TOKEN, Gateway, connector_env, connector_host, fixture, payload

from hermes_core._host import Host
from hermes_core.connectors._signin import save_token

pytestmark = pytest.mark.anyio


def _bridge_text(host: Host) -> str:
    assembly = host.assemble(200_000, host.new_session())
    return json.dumps(assembly.render())


@pytest.mark.parametrize(
    ("enabled", "configured", "signed_in"),
    list(itertools.product([True, False], repeat=3)),
)
async def test_connectors_are_in_scope_only_when_enabled_and_configured_and_signed_in(
    tmp_path: Path, gateway: Gateway, enabled: bool, configured: bool, signed_in: bool
) -> None:
    async with connector_host(
        tmp_path,
        gateway.url if configured else None,
        token=TOKEN if signed_in else None,
        connectors={"enabled": enabled},
    ) as host:
        in_scope = host.connectors.in_scope()
        scope = host.connectors.scope()
        await host.dispatch("tool_search", {"queries": ["gmail send email"]}, host.new_session())

    assert in_scope is (enabled and configured and signed_in)
    assert scope.in_scope is in_scope
    if not enabled:
        assert scope.reason == "disabled"
    elif not configured:
        assert scope.reason == "no_url"
    elif not signed_in:
        assert scope.reason == "signed_out"
    assert len(gateway.requests("search")) == (1 if in_scope else 0)


async def test_the_environment_token_overrides_the_one_in_auth_json(
    tmp_path: Path, start_gateway: Any
) -> None:
    gateway = start_gateway(fixture(token="from-the-environment"))
    env = connector_env(tmp_path, token="from-the-environment")
    save_token(env, "from-the-file")
    async with connector_host(tmp_path, gateway.url, env=env) as host:
        answer = payload(
            await host.dispatch("tool_search", {"queries": ["linear issue"]}, host.new_session())
        )
        source = host.connectors.sign_in().source

    assert "connectors" not in answer  # the gateway accepted the token
    assert source == "environment"


async def test_a_sign_in_while_the_host_runs_is_used_at_once(
    tmp_path: Path, gateway: Gateway
) -> None:
    env = connector_env(tmp_path, token=None)
    async with connector_host(tmp_path, gateway.url, env=env) as host:
        before = host.connectors.in_scope()
        save_token(env, "signed-in-meanwhile")
        after = host.connectors.in_scope()
        answer = payload(
            await host.dispatch("tool_search", {"queries": ["linear issue"]}, host.new_session())
        )

    assert (before, after) == (False, True)
    assert answer["results"][0]["matches"][0] == "connectors__linear__CREATE_ISSUE"


async def test_manage_connections_is_registered_without_any_connector_configuration(
    tmp_path: Path,
) -> None:
    async with connector_host(tmp_path, None, token=None) as host:
        tool = host.registry.get("manage_connections")
        deferred = host.tool_search.view().deferred_by_name

    assert tool is not None
    assert tool.toolset == "connections"
    assert "manage_connections" in deferred  # deferred by default, as todo_list is


async def test_the_bridge_mentions_connector_tools_and_manage_connections_only_in_scope(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path / "in", gateway.url) as host:
        in_scope = _bridge_text(host)
    async with connector_host(tmp_path / "out", gateway.url, token=None) as host:
        signed_out = _bridge_text(host)

    assert "connectors__<app>__<tool>" in in_scope
    assert "If an app is not connected, use manage_connections" in in_scope
    assert '"maxItems": 10' in in_scope
    assert "connectors__" not in signed_out
    assert "use manage_connections" not in signed_out


async def test_connectors_in_scope_activate_the_bridge_without_deferred_tools(
    tmp_path: Path, gateway: Gateway
) -> None:
    nothing_deferred = {"tool_search": {"defer": []}}
    async with connector_host(tmp_path / "in", gateway.url, tools=nothing_deferred) as host:
        in_scope = host.assemble(200_000, host.new_session())
    async with connector_host(tmp_path / "out", None, tools=nothing_deferred) as host:
        plain = host.assemble(200_000, host.new_session())

    assert plain.tier == 0
    assert "tool_search" not in [tool.name for tool in plain.tools]
    assert in_scope.tier == 2
    assert [tool.name for tool in in_scope.tools][-3:] == [
        "tool_search",
        "tool_describe",
        "tool_call",
    ]


async def test_signed_out_the_assembly_and_search_are_those_of_a_host_without_connectors(
    tmp_path: Path, gateway: Gateway
) -> None:
    local = {"local_send_email": "Send an email through the local relay"}
    queries = {"queries": ["gmail send email", "create issue", "manage connections"]}
    seen = []
    for name, url, token in [
        ("without", None, None),
        ("signed-out", gateway.url, None),
        ("disabled", gateway.url, TOKEN),
    ]:
        connectors = {"enabled": False} if name == "disabled" else None
        async with connector_host(
            tmp_path / name, url, token=token, local=local, connectors=connectors
        ) as host:
            session = host.new_session()
            assembly = host.assemble(200_000, session).as_dict()
            searched = await host.dispatch("tool_search", queries, session)
            described = await host.dispatch(
                "tool_describe", {"names": ["connectors__gmail__SEND_EMAIL"]}, session
            )
            seen.append((assembly, searched.content, described.content))

    assert seen[0] == seen[1] == seen[2]
    assert gateway.requests() == []

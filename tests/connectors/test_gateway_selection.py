"""The gateway is built by the selection step: a gateway plugin whose factory raises, or whose
gateway lacks a route, is an error of that plugin (``hermes plugins list`` shows it), the model
is told connectors are unavailable, and local tools keep working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gateways import connector_env, connector_host, matches, payload

from hermes_core.testing import write_dir_plugin

pytestmark = pytest.mark.anyio

GATEWAY_PLUGIN = """
from hermes_core.connectors import GatewaySearch
from hermes_core.plugin import ConnectorGatewaySpec, hookimpl


class NoExecute:
    async def search(self, use_cases):
        return GatewaySearch()

    async def schemas(self, slugs):
        raise AssertionError("never called")

    async def connect(self, connectors, reinitiate):
        raise AssertionError("never called")

    async def list_connectors(self):
        raise AssertionError("never called")

    async def aclose(self):
        pass


def raising(context):
    raise RuntimeError("no route to the vault holding " + context.url)


@hookimpl
def hermes_connector_gateways():
    return [
        ConnectorGatewaySpec("raising", raising),
        ConnectorGatewaySpec("no-execute", lambda context: NoExecute()),
    ]
"""


async def _run(tmp_path: Path, gateway: str) -> tuple[Any, Any, Any]:
    env = connector_env(tmp_path, HERMES_STRICT_PLUGINS="0")
    write_dir_plugin(env.user_plugins_dir, "vault", GATEWAY_PLUGIN)
    async with connector_host(
        tmp_path,
        "https://vault.example.org/",
        env=env,
        connectors={"gateway": gateway},
        local={"local_send_email": "Send an email through the local relay"},
        plugins={"enabled": ["vault"]},
    ) as host:
        session = host.new_session()
        searched = payload(await host.dispatch("tool_search", {"queries": ["send email"]}, session))
        called = await host.dispatch(
            "tool_call", {"name": "connectors__gmail__SEND_EMAIL", "arguments": {}}, session
        )
        record = next(r for r in host.plugins if r.name == "vault")
    return searched, called, record


@pytest.mark.parametrize(
    ("gateway", "problem"),
    [
        pytest.param(
            "raising",
            "its factory raised RuntimeError: no route to the vault",
            id="factory-raises",
        ),
        pytest.param(
            "no-execute", "its factory returned NoExecute, which has no execute", id="no-execute"
        ),
    ],
)
async def test_a_gateway_that_cannot_be_built_is_an_error_naming_its_plugin(
    tmp_path: Path, gateway: str, problem: str
) -> None:
    searched, called, record = await _run(tmp_path, gateway)

    assert matches(searched) == ["local_send_email"]
    assert searched["connectors"]["status"] == "unavailable"
    assert searched["connectors"]["reason"] == "error"
    assert "vault" in searched["connectors"]["message"]
    assert called.error_code == "NOT_AVAILABLE"
    assert f"plugin 'vault': connector gateway {gateway!r} (from hermes_connector_gateways)" in (
        called.text_content
    )
    assert problem in called.text_content
    # What a gateway must provide is said when it lacks it, not when its factory raised.
    expected = "expected a ConnectorGateway (search, schemas, execute"
    assert (expected in called.text_content) == (gateway == "no-execute")
    assert record.status == "error"
    assert record.error is not None
    assert problem in record.error

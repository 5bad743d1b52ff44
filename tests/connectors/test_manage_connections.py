"""``manage_connections``: status, connect and reconnect of hosted apps (against the reference
gateway) and of local MCP servers (a real stdio server installed from a catalog: the suite's
toolbox, ``tests/mcp/servers/toolbox.py``; the published ``mcp-server-time``'s install from the
catalog is ``tests/test_cli_mcp.py``'s)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from gateways import Gateway, OffProtocolServer, connector_env, connector_host, payload

from hermes_core._config import load_config
from hermes_core._host import Host
from hermes_core._mcp.catalog import CATALOG_VARIABLE
from hermes_core._tools import ToolResult

pytestmark = pytest.mark.anyio

# A stdio server on the standard library: about a tenth of the CPU of a start of
# mcp-server-time, whose import of the MCP SDK is most of it.
SERVER_ARGS = [str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py")]
CATALOG = {
    "time": {
        "description": "A server of the suite's own tools (installed as a catalog entry).",
        "install": "nothing to install",
        "command": "{python}",
        "args": SERVER_ARGS,
        "required_env": [],
    },
    "broken": {
        "description": "A server that exits at once.",
        "install": "nothing helps",
        "command": "{python}",
        "args": ["-c", "import sys; sys.exit(3)"],
        "required_env": [],
    },
}


async def _manage(host: Host, **arguments: Any) -> ToolResult:
    return await host.dispatch("manage_connections", arguments, host.new_session())


def _by_name(answer: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {row["name"]: row for row in answer["results"] if "name" in row}


# Hosted apps ----------------------------------------------------------------------------------


async def test_status_lists_each_app_with_its_connection(tmp_path: Path, gateway: Gateway) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        answer = payload(await _manage(host, action="status"))

    assert answer["connectors"] == {
        "status": "available",
        "items": [
            {"name": "gmail", "connected": False, "state": "not_connected"},
            {"name": "linear", "connected": True, "state": "active"},
        ],
    }
    assert answer["mcp_servers"] == []


async def test_status_of_a_listing_off_the_protocol_names_what_is_wrong_not_unreachable(
    tmp_path: Path, off_protocol: OffProtocolServer
) -> None:
    gmail = {"connector": "gmail", "connected": "false", "connectionStatus": "not_connected"}
    off_protocol.answer("v1/connectors", 200, {"items": [gmail]})
    async with connector_host(tmp_path, off_protocol.url) as host:
        answer = payload(await _manage(host, action="status"))

    section = answer["connectors"]
    assert (section["status"], section["reason"]) == ("unavailable", "error")
    assert "items[0].connected must be true or false, not the text 'false'" in section["message"]


async def test_connect_returns_a_link_per_app_for_the_user_to_open(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        answer = payload(
            await _manage(host, action="connect", connectors=["gmail", "linear", "nope"])
        )

    rows = _by_name(answer)
    assert rows["gmail"]["status"] == "initiated"
    assert rows["gmail"]["connect_url"] == f"{gateway.url}_dev/connect/gmail"
    assert rows["linear"] == {"name": "linear", "status": "connected"}
    assert rows["nope"]["status"] == "failed"
    assert "Show each connect_url to the user" in answer["hint"]
    assert gateway.requests("connections")[0]["body"] == {
        "connectors": ["gmail", "linear", "nope"],
        "reinitiate": False,
    }


async def test_reconnect_repairs_only_broken_connections_unless_forced(
    tmp_path: Path, gateway: Gateway
) -> None:
    Gateway.open(f"{gateway.url}_dev/connect/gmail")
    gateway.fault("gmail", "expired")
    async with connector_host(tmp_path, gateway.url) as host:
        broken = payload(await _manage(host, action="reconnect"))
        healthy = payload(await _manage(host, action="reconnect", connectors=["linear"]))
        forced = payload(await _manage(host, action="reconnect", connectors=["linear"], force=True))

    assert [(row["name"], row["status"]) for row in broken["results"]] == [("gmail", "initiated")]
    assert _by_name(healthy)["linear"]["status"] == "skipped"
    assert _by_name(forced)["linear"]["status"] == "initiated"
    assert [request["body"] for request in gateway.requests("connections")] == [
        {"connectors": ["gmail"], "reinitiate": True},
        {"connectors": ["linear"], "reinitiate": True},
    ]


async def test_there_is_no_action_that_disconnects(tmp_path: Path, gateway: Gateway) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        result = await _manage(host, action="disconnect", connectors=["linear"])

    assert result.error_code == "INVALID_ARGUMENTS"
    assert gateway.requests() == []


@pytest.mark.parametrize(
    ("token", "connectors", "code", "said"),
    [
        (None, {}, "SIGNED_OUT", "hermes connectors login"),
        ("t", {"enabled": False}, "NOT_AVAILABLE", "connectors are disabled"),
    ],
)
async def test_hosted_actions_out_of_scope_answer_that_the_user_must_sign_in(
    tmp_path: Path,
    gateway: Gateway,
    token: str | None,
    connectors: dict[str, Any],
    code: str,
    said: str,
) -> None:
    async with connector_host(tmp_path, gateway.url, token=token, connectors=connectors) as host:
        refused = await _manage(host, action="connect", connectors=["gmail"])
        status = payload(await _manage(host, action="status"))

    assert refused.error_code == code
    assert said in payload(refused)["error"]
    assert status["connectors"]["status"] == "unavailable"
    assert said in status["connectors"]["message"]
    assert gateway.requests() == []


# Local MCP servers ----------------------------------------------------------------------------


@asynccontextmanager
async def _mcp_host(
    root: Path, gateway_url: str | None = None, **sections: Any
) -> AsyncIterator[tuple[Host, Path]]:
    """A host reading a real config.yaml (so that manage_connections can edit it) and the
    catalog above; signed out of hosted connectors."""
    catalog = root / "catalog.json"
    root.mkdir(parents=True, exist_ok=True)
    catalog.write_text(json.dumps(CATALOG))
    env = connector_env(root, token=None, **{CATALOG_VARIABLE: str(catalog)})
    data = {"approvals": {"policy": "off"}, **sections}
    if gateway_url:
        data["tools"] = {"connectors": {"url": gateway_url}}
    env.config_path.write_text(json.dumps(data), encoding="utf-8")
    async with Host(load_config(env.config_path), env, config_path=env.config_path) as host:
        yield host, env.config_path


@pytest.mark.subprocess
async def test_an_mcp_target_installs_its_catalog_entry_after_a_probe_without_signing_in(
    tmp_path: Path, gateway: Gateway
) -> None:
    # A configured (disabled) server: the host supervises MCP servers, so the new one connects.
    other = {"other": {"command": sys.executable, "args": SERVER_ARGS, "enabled": False}}
    async with _mcp_host(tmp_path, gateway.url, mcp_servers=other) as (host, config_path):
        result = await _manage(host, action="connect", connectors=[{"name": "time", "mcp": True}])
        registered = [tool.name for tool in host.registry if tool.name.startswith("mcp__time__")]

    row = _by_name(payload(result))["time"]
    assert (row["status"], row["state"]) == ("installed", "connected")
    assert row["tool_count"] >= 1
    assert registered  # searchable at once
    entry = load_config(config_path).mcp_servers["time"]
    assert (entry.command, entry.args) == (sys.executable, SERVER_ARGS)
    assert gateway.requests() == []


async def test_an_mcp_server_installed_in_a_host_without_mcp_servers_connects_at_next_start(
    tmp_path: Path,
) -> None:
    async with _mcp_host(tmp_path) as (host, config_path):
        result = await _manage(host, action="connect", connectors=[{"name": "time", "mcp": True}])

    row = _by_name(payload(result))["time"]
    assert (row["status"], row["state"]) == ("installed", "configured")
    assert "connects when hermes starts next" in row["message"]
    assert "time" in load_config(config_path).mcp_servers


async def test_an_mcp_install_whose_probe_fails_writes_nothing(tmp_path: Path) -> None:
    async with _mcp_host(tmp_path) as (host, config_path):
        before = config_path.read_text()
        result = await _manage(host, action="connect", connectors=[{"name": "broken", "mcp": True}])

    row = _by_name(payload(result))["broken"]
    assert row["status"] == "failed"
    assert "did not answer the probe" in row["message"]
    assert "nothing was written" in row["message"]
    assert config_path.read_text() == before


@pytest.mark.subprocess
async def test_an_mcp_target_enables_a_configured_server(tmp_path: Path) -> None:
    disabled = {"time": {"command": sys.executable, "args": SERVER_ARGS, "enabled": False}}
    async with _mcp_host(tmp_path, mcp_servers=disabled) as (host, config_path):
        before = payload(await _manage(host, action="status"))
        result = await _manage(host, action="connect", connectors=[{"name": "time", "mcp": True}])

    assert before["mcp_servers"] == [
        {
            "name": "time",
            "mcp": True,
            "state": "disabled",
            "reason": "disabled (mcp_servers.time.enabled is false)",
        }
    ]
    row = _by_name(payload(result))["time"]
    assert (row["status"], row["state"]) == ("enabled", "connected")
    assert load_config(config_path).mcp_servers["time"].enabled is True


@pytest.mark.slow  # about 7 s: real MCP servers installed and started while the host runs
@pytest.mark.subprocess
async def test_a_server_installed_or_enabled_while_the_host_runs_is_seen_by_later_actions(
    tmp_path: Path,
) -> None:
    # A long-running host (hermes serve): status, reconnect and a second connect must know
    # what the earlier actions connected, not only the configuration the host started with.
    servers = {
        "other": {"command": sys.executable, "args": SERVER_ARGS, "enabled": False},
        "clock": {"command": sys.executable, "args": SERVER_ARGS, "enabled": False},
    }
    async with _mcp_host(tmp_path, mcp_servers=servers) as (host, config_path):
        await _manage(host, action="connect", connectors=[{"name": "time", "mcp": True}])
        await _manage(host, action="connect", connectors=[{"name": "clock", "mcp": True}])
        written = config_path.read_text()
        status = payload(await _manage(host, action="status"))
        again = payload(
            await _manage(host, action="connect", connectors=[{"name": "time", "mcp": True}])
        )
        reconnected = await _manage(
            host, action="reconnect", connectors=[{"name": "time", "mcp": True}]
        )

    rows = _by_name({"results": status["mcp_servers"]})
    assert rows["time"]["state"] == "connected"
    assert rows["clock"]["state"] == "connected"  # enabled since the start, not "disabled"
    assert _by_name(again)["time"]["status"] != "installed"  # not written a second time
    assert config_path.read_text() == written
    assert not reconnected.is_error, reconnected.text_content


async def test_an_unknown_mcp_target_names_what_is_known(tmp_path: Path) -> None:
    async with _mcp_host(tmp_path) as (host, _):
        result = await _manage(host, action="connect", connectors=[{"name": "zzz", "mcp": True}])

    row = _by_name(payload(result))["zzz"]
    assert row["status"] == "failed"
    assert "known: broken, time" in row["message"]


@pytest.mark.subprocess
async def test_reconnect_of_a_connected_mcp_server_is_skipped_unless_forced(
    tmp_path: Path,
) -> None:
    servers = {"time": {"command": sys.executable, "args": SERVER_ARGS}}
    async with _mcp_host(tmp_path, mcp_servers=servers) as (host, _):
        skipped = payload(
            await _manage(host, action="reconnect", connectors=[{"name": "time", "mcp": True}])
        )
        forced = payload(
            await _manage(
                host, action="reconnect", connectors=[{"name": "time", "mcp": True}], force=True
            )
        )

    assert _by_name(skipped)["time"]["status"] == "skipped"
    assert (_by_name(forced)["time"]["status"], _by_name(forced)["time"]["state"]) == (
        "restarted",
        "connected",
    )

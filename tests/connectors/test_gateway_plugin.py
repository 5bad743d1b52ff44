"""A third-party gateway plugin (``examples/connector_gateway_plugin``, shown verbatim in
docs/connectors.md), installed as a directory plugin in a temporary ``HERMES_HOME`` and selected
by ``tools.connectors.gateway``, serves search, describe and call; an unknown gateway name is an
error listing the valid ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_core.connectors._signin import TOKEN_VARIABLE
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "connector_gateway_plugin"
DOCS = REPO / "docs" / "connectors.md"

SETTINGS: dict[str, Any] = {
    "apps": {
        "weather": {
            "WEATHER_FORECAST": {
                "description": "The weather forecast for a city",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                "result": {"forecast": "sunny"},
            }
        }
    }
}


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def install(cli: HermesCli, gateway: str = "memory") -> dict[str, str]:
    """Copy the example into the home's plugins, enable and select it; the environment of a
    signed-in user."""
    shutil.copytree(EXAMPLE, cli.home / "plugins" / "memory-gateway")
    config = {
        "plugins": {"enabled": ["memory-gateway"], "entries": {"memory-gateway": SETTINGS}},
        "tools": {"connectors": {"url": "memory://local", "gateway": gateway}},
        "approvals": {"allow": ["connectors__weather__*"]},
    }
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    return cli.variables(**{TOKEN_VARIABLE: "anything"})


def test_the_docs_show_the_example_plugin_verbatim() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in ("plugin.yaml", "__init__.py"):
        assert (EXAMPLE / name).read_text(encoding="utf-8") in text, name


@pytest.mark.subprocess
def test_a_directory_gateway_plugin_is_selected_by_name_and_serves_search_describe_and_call(
    hermes_cli: HermesCli,
) -> None:
    env = install(hermes_cli)

    found = hermes_cli.json("tools", "search", "weather forecast", "--json", env=env)
    described = hermes_cli.json(
        "tools", "describe", "connectors__weather__FORECAST", "--json", env=env
    )
    called = hermes_cli.json(
        "tools", "call", "connectors__weather__FORECAST", '{"city": "Oslo"}', "--json", env=env
    )
    plugins = hermes_cli.json("plugins", "list", "--json", env=env)

    assert found["results"][0]["matches"][0] == "connectors__weather__FORECAST"
    assert found["tools"]["connectors__weather__FORECAST"]["source"] == "connectors"
    schema = described["tools"]["connectors__weather__FORECAST"]["parameters"]
    assert schema["required"] == ["city"]
    assert called["is_error"] is False
    assert called["structured"] == {"result": {"forecast": "sunny"}, "arguments": {"city": "Oslo"}}
    (record,) = [p for p in plugins if p["name"] == "memory-gateway"]
    assert (record["source"], record["status"]) == ("user", "enabled")


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [("tools", "search", "weather"), ("connectors", "status")])
def test_an_unknown_gateway_name_is_an_error_listing_the_valid_ones(
    hermes_cli: HermesCli, command: tuple[str, ...]
) -> None:
    env = install(hermes_cli, gateway="composio")

    done = hermes_cli.run(*command, ok=False, env=env)

    assert done.returncode == 2
    assert "unknown connector gateway 'composio' (set by tools.connectors.gateway)" in done.stderr
    assert "valid names: http, memory" in done.stderr

"""A call from an MCP client of ``hermes serve`` runs through the same dispatcher as every other
call: a recording plugin sees exactly one pre and one post hook, under the real tool's name,
whether the client calls the tool directly, through ``tool_call``, or as an entry of a batch of
connector tools (served by the reference gateway)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from in_process import in_process
from serving import BUNDLED, ServeHome

from hermes_core._paths import Environment
from hermes_core.connectors._signin import save_token
from hermes_core.testing import write_dir_plugin
from hermes_core.testing._devgateway import DevGateway
from hermes_core.testing._gateway_fixtures import parse_fixtures

RECORDER = """
import json
from pathlib import Path

from hermes_core.plugin import hookimpl

SEEN = Path(__file__).parent / "seen.jsonl"


def _write(*entry):
    with SEEN.open("a") as handle:
        handle.write(json.dumps(entry) + "\\n")


@hookimpl
def hermes_pre_tool_call(call, session):
    _write("pre", call.name, call.arguments)


@hookimpl
def hermes_post_tool_call(call, result, session):
    _write("post", call.name, result.is_error)
"""

MOON = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl


def moon_phase(day: str) -> str:
    return f"full moon on {day}"


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            name="moon_phase",
            description="The phase of the moon on a day.",
            parameters={
                "type": "object",
                "properties": {"day": {"type": "string"}},
                "required": ["day"],
            },
            handler=moon_phase,
            toolset="moon",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


def configure(served: ServeHome, *, deferred: bool, gateway: str | None = None) -> None:
    write_dir_plugin(served.home / "plugins", "recorder", source=RECORDER)
    write_dir_plugin(served.home / "plugins", "moon", source=MOON)
    search: dict[str, Any] = {"defer": ["moon_phase"]} if deferred else {"enabled": False}
    tools: dict[str, Any] = {"tool_search": search}
    sections: dict[str, Any] = {}
    if gateway is not None:
        tools["connectors"] = {"url": gateway}
        sections["approvals"] = {"allow": ["connectors__*"]}
        save_token(Environment(home=served.home, cwd=served.work), "a-token")
    served.write_config(
        plugins={"enabled": [*BUNDLED, "recorder", "moon"]}, tools=tools, **sections
    )


def seen(served: ServeHome) -> list[list[Any]]:
    log = served.home / "plugins" / "recorder" / "seen.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


MOON_APP = {
    "slug": "moon",
    "connected": True,
    "tools": [{"slug": "MOON_PHASE", "result": {"phase": "full"}}],
}
BATCH = {
    "calls": [
        {"name": "connectors__moon__PHASE", "arguments": {"day": "friday"}},
        {"name": "connectors__moon__PHASE", "arguments": {"day": "saturday"}},
    ]
}


@pytest.mark.parametrize(
    ("route", "name", "arguments", "expected"),
    [
        pytest.param(
            "direct",
            "moon_phase",
            {"day": "friday"},
            [["pre", "moon_phase", {"day": "friday"}], ["post", "moon_phase", False]],
            id="direct",
        ),
        pytest.param(
            "deferred",
            "tool_call",
            {"name": "moon_phase", "arguments": {"day": "friday"}},
            [["pre", "moon_phase", {"day": "friday"}], ["post", "moon_phase", False]],
            id="tool_call",
        ),
        pytest.param(
            "connectors",
            "tool_call",
            BATCH,
            [
                ["pre", "connectors__moon__PHASE", {"day": "friday"}],
                ["post", "connectors__moon__PHASE", False],
                ["pre", "connectors__moon__PHASE", {"day": "saturday"}],
                ["post", "connectors__moon__PHASE", False],
            ],
            id="connector_batch",
        ),
    ],
)
def test_a_served_call_runs_one_pre_and_one_post_hook_under_the_real_name(
    served: ServeHome,
    route: str,
    name: str,
    arguments: dict[str, Any],
    expected: list[list[Any]],
) -> None:
    with DevGateway(parse_fixtures({"connectors": [MOON_APP]})) as gateway:
        configure(
            served,
            deferred=route != "direct",
            gateway=gateway.url if route == "connectors" else None,
        )

        async def main() -> Any:
            async with in_process(served, mode="legacy") as client:
                listed = [tool.name for tool in (await client.list_tools()).tools]
                return listed, await client.call_tool(name, arguments)

        listed, result = anyio.run(main)

    assert ("moon_phase" in listed) is (route == "direct"), listed
    assert result.is_error is False, result.content
    if route == "connectors":
        answer = json.loads(result.content[0].text)
        assert [item["response"] for item in answer["results"]] == [{"phase": "full"}] * 2
    else:
        assert result.content[0].text == "full moon on friday"
    assert seen(served) == expected

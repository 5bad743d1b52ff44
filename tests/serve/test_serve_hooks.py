"""A call from an MCP client of ``hermes serve`` runs through the same dispatcher as every other
call: a recording plugin sees exactly one pre and one post hook, under the real tool's name,
whether the client calls the tool directly or through ``tool_call``."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from serving import BUNDLED, ServeHome

from hermes_core.testing import write_dir_plugin

RECORDER = """
import json
from pathlib import Path

from hermes_core import hookimpl

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
from hermes_core import Tool, ToolAnnotations, hookimpl


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


def configure(served: ServeHome, *, deferred: bool) -> None:
    write_dir_plugin(served.home / "plugins", "recorder", source=RECORDER)
    write_dir_plugin(served.home / "plugins", "moon", source=MOON)
    search = {"defer": ["moon_phase"]} if deferred else {"enabled": False}
    served.write_config(
        plugins={"enabled": [*BUNDLED, "recorder", "moon"]},
        tools={"tool_search": search},
    )


def seen(served: ServeHome) -> list[list[Any]]:
    log = served.home / "plugins" / "recorder" / "seen.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize(
    ("deferred", "name", "arguments"),
    [
        pytest.param(False, "moon_phase", {"day": "friday"}, id="direct"),
        pytest.param(
            True,
            "tool_call",
            {"name": "moon_phase", "arguments": {"day": "friday"}},
            id="tool_call",
        ),
    ],
)
def test_a_served_call_runs_one_pre_and_one_post_hook_under_the_real_name(
    served: ServeHome, deferred: bool, name: str, arguments: dict[str, Any]
) -> None:
    configure(served, deferred=deferred)

    async def main() -> Any:
        async with Client(served.stdio_parameters(), mode="legacy") as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            return listed, await client.call_tool(name, arguments)

    listed, result = anyio.run(main)

    assert ("moon_phase" in listed) is not deferred, listed
    assert result.is_error is False, result.content
    assert result.content[0].text == "full moon on friday"
    assert seen(served) == [
        ["pre", "moon_phase", {"day": "friday"}],
        ["post", "moon_phase", False],
    ]

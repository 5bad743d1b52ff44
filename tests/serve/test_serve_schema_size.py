"""``hermes serve``'s ``tools/list`` with an MCP server one of whose tools has a 3 MB
``inputSchema``, made visible (``always_visible``): the tool is skipped at its listing, so no
client receives it, and the server's other tools are served."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from in_process import in_process
from serving import ServeHome

pytestmark = pytest.mark.subprocess

BADTOOLS = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "badtools.py"


def _listing(tmp_path: Path) -> Path:
    properties = {
        f"field_{i}": {"type": "string", "description": "d" * 1_000} for i in range(3_000)
    }
    tools = [
        {"name": "ok", "inputSchema": {"type": "object", "properties": {}}},
        {"name": "huge", "inputSchema": {"type": "object", "properties": properties}},
    ]
    path = tmp_path / "listing.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


def test_tools_list_leaves_out_a_visible_tool_whose_schema_is_3_mb(
    served: ServeHome, tmp_path: Path
) -> None:
    server = {"command": sys.executable, "args": [str(BADTOOLS), str(_listing(tmp_path))]}
    visible = {"tool_search": {"always_visible": ["mcp__big__*"]}}
    served.write_config(mcp_servers={"big": server}, tools=visible)

    async def main() -> list[Any]:
        async with in_process(served) as client:
            with anyio.fail_after(60):  # a guard against a hang, not a performance check
                while True:
                    tools: list[Any] = (await client.list_tools()).tools
                    if any(tool.name == "mcp__big__ok" for tool in tools):
                        return tools
                    await anyio.sleep(0.1)

    tools = anyio.run(main)
    names = [tool.name for tool in tools]
    assert "mcp__big__huge" not in names
    assert len(json.dumps([tool.model_dump(mode="json") for tool in tools])) < 200_000


def test_tools_list_serves_a_visible_tool_described_in_3_mb_shortened(
    served: ServeHome, tmp_path: Path
) -> None:
    long = "Find the issues of a project by their labels. " * 64_000
    listing = tmp_path / "wordy.json"
    tools = [{"name": "wordy", "description": long, "inputSchema": {"type": "object"}}]
    listing.write_text(json.dumps(tools), encoding="utf-8")
    server = {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
    visible = {"tool_search": {"always_visible": ["mcp__big__*"]}}
    served.write_config(mcp_servers={"big": server}, tools=visible)

    async def main() -> Any:
        async with in_process(served) as client:
            with anyio.fail_after(60):  # a guard against a hang, not a performance check
                while True:
                    for tool in (await client.list_tools()).tools:
                        if tool.name == "mcp__big__wordy":
                            return tool
                    await anyio.sleep(0.1)

    description = anyio.run(main).description
    assert 16_000 < len(description) <= 16_384
    assert "description cut at 16,384 characters" in description

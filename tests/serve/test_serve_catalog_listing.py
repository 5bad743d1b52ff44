"""``hermes serve`` with a catalog read from the cache directory: its ``tools/list`` answer is
the tool array a host assembles in process, byte for byte (the listing in ``tool_search``'s
description included), whichever form the listing takes (issue 32: what serve builds before
its first answer must not change what it answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from in_process import environment, in_process
from serving import ServeHome

from hermes_core._config import load_config
from hermes_core._host import Host
from hermes_core._serve.convert import mcp_tools


def write_catalog(path: Path, servers: int, tools_each: int) -> None:
    entries = [
        {
            "name": f"srv{server:04d}__op_{'x' * (index % 3)}{index}",
            "server": f"srv{server:04d}",
            "description": f"Does operation {index} of server {server}. Then more words.",
            "input_schema": {"type": "object", "properties": {"item": {"type": "string"}}},
        }
        for server in range(servers)
        for index in range(tools_each)
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")


def in_process_tools(served: ServeHome) -> tuple[list[dict[str, Any]], str]:
    """The tool array a host on ``served``'s config assembles in this process, as MCP tools,
    and its listing's form."""
    env = environment(served)
    host = Host(load_config(env.config_path), env)
    host.start()
    try:
        assembly = host.assemble(None, host.new_session(interactive=False))
        tools = [tool.model_dump(mode="json") for tool in mcp_tools(assembly.tools)]
        return tools, assembly.listing_form
    finally:
        host.close()


@pytest.mark.parametrize(
    ("servers", "tools_each", "form"),
    [(5, 4, "full"), (150, 8, "mixed"), (1500, 2, "none")],
)
def test_tools_list_of_a_cached_catalog_is_what_the_host_assembles_in_process(
    served: ServeHome, servers: int, tools_each: int, form: str
) -> None:
    catalog = served.root / "catalog.json"
    write_catalog(catalog, servers, tools_each)
    served.write_config(tools={"catalogs": [{"path": str(catalog)}]})
    served.cli.run("tools", "search", "operation")  # the catalog cache written
    cached = list((served.root / "cache").rglob("*.catalog"))
    assert len(cached) == 1, cached

    async def listed() -> list[dict[str, Any]]:
        async with in_process(served, mode="legacy") as client:
            answer = await client.list_tools()
            return [tool.model_dump(mode="json") for tool in answer.tools]

    served_tools = anyio.run(listed)
    expected, listing_form = in_process_tools(served)
    assert listing_form == form
    assert [tool["name"] for tool in served_tools] == [tool["name"] for tool in expected]
    assert served_tools == expected
    search = next(tool for tool in served_tools if tool["name"] == "tool_search")
    assert ("srv0000" in search["description"]) == (form != "none")

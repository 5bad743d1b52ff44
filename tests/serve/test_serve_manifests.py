"""``hermes serve`` with a server that hangs at start: its ``initialize`` and ``tools/list``
answer without waiting for it, and a call to another server (known from its tool manifest) goes
through without waiting for it either."""

from __future__ import annotations

import sys
import time

import anyio
from mcp import Client
from serving import ServeHome, time_server

TIME_TOOL = "mcp__time__get_current_time"
HANG_TIMEOUT = 40
"""The hanging server's connect_timeout: far longer than anything the test lets serve take."""
PATIENCE = HANG_TIMEOUT / 2


def hanging_server() -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["-c", "import time\nwhile True: time.sleep(3600)", "hermes-serve-hang"],
        "connect_timeout": HANG_TIMEOUT,
    }


def test_a_hanging_server_delays_neither_tools_list_nor_a_call_to_another_server(
    served: ServeHome,
) -> None:
    served.write_config(mcp_servers={"time": time_server()})
    served.cli.run("tools", "search", "current time")  # the time server's manifest
    served.write_config(mcp_servers={"time": time_server(), "hang": hanging_server()})

    async def main() -> tuple[float, list[str], float, bool, str]:
        began = time.monotonic()
        async with Client(served.stdio_parameters(), mode="legacy") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            listed = time.monotonic() - began
            began = time.monotonic()
            called = await client.call_tool(
                "tool_call", {"name": TIME_TOOL, "arguments": {"timezone": "UTC"}}
            )
            took = time.monotonic() - began
            text = called.content[0].text  # type: ignore[union-attr]
            return listed, names, took, bool(called.is_error), text

    listed, names, took, failed, text = anyio.run(main)
    assert listed < PATIENCE, f"initialize + tools/list took {listed:.1f} s"
    assert "tool_search" in names
    assert took < PATIENCE, f"the call to the time server took {took:.1f} s"
    assert failed is False, text
    assert '"timezone": "UTC"' in text

"""``hermes serve``: a hung server delays only its own tools; a search waits for it briefly."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from in_process import in_process
from serving import ServeHome, late_server

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"
# A guard against a hang, not a performance check.
WAIT_LIMIT = 60


@pytest.mark.slow  # about 10 s: a hung server's connect waited out beside serve
def test_tool_search_does_not_wait_a_hung_servers_whole_connect_timeout(
    served: ServeHome,
) -> None:
    box = {"command": sys.executable, "args": [str(TOOLBOX)]}
    served.write_config(mcp_servers={"box": box})
    served.cli.run("mcp", "list")  # box is known from its manifest
    hung = late_server(served.root / "never-ready", connect_timeout=30)
    served.write_config(mcp_servers={"box": box, "hung": hung})

    async def main() -> tuple[float, str, float, str]:
        async with in_process(served, mode="legacy") as client:
            begun = time.monotonic()
            with anyio.fail_after(WAIT_LIMIT):
                first = await client.call_tool("tool_search", {"queries": ["echo the text"]})
            first_took = time.monotonic() - begun
            begun = time.monotonic()
            with anyio.fail_after(WAIT_LIMIT):
                called = await client.call_tool(
                    "tool_call", {"name": "mcp__box__echo", "arguments": {"text": "hi"}}
                )
            return first_took, str(first.content), time.monotonic() - begun, str(called.content)

    first_took, first, call_took, called = anyio.run(main)
    assert "mcp__box__echo" in first
    # The hung server's connect_timeout is 30 s; a search waits for it 5 s at most.
    assert first_took < 15, f"the first tool_search took {first_took:.1f} s"
    assert "hi" in called
    assert call_took < 15, f"a call of another server's tool took {call_took:.1f} s"

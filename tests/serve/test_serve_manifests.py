"""``hermes serve`` with a server that hangs at start: its ``initialize`` and ``tools/list``
answer without waiting for it, and a call to another server (known from its tool manifest) goes
through without waiting for it either; a server known from its manifest is started only once
the client has the tool list; a call of a tool of a server with no manifest that is still
connecting waits for that server."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from in_process import in_process
from serving import TOOLBOX_SERVER, ServeHome, late_server, toolbox_server

ECHO = "mcp__box__echo"
HANG_TIMEOUT = 40
"""The hanging server's connect_timeout: far longer than anything the test lets serve take."""
PATIENCE = HANG_TIMEOUT / 2


def hanging_server() -> dict[str, object]:
    """A server that reads its input and never answers; it exits once its input closes, so
    the end of serve does not wait out the grace period of a child that ignores it."""
    return {
        "command": sys.executable,
        "args": ["-c", "import sys\nsys.stdin.buffer.read()", "hermes-serve-hang"],
        "connect_timeout": HANG_TIMEOUT,
    }


def test_a_hanging_server_delays_neither_tools_list_nor_a_call_to_another_server(
    served: ServeHome,
) -> None:
    served.write_config(mcp_servers={"box": toolbox_server()})
    served.cli.run("tools", "search", "echo the text back")  # the toolbox server's manifest
    served.write_config(mcp_servers={"box": toolbox_server(), "hang": hanging_server()})

    async def main() -> tuple[float, list[str], float, bool, str]:
        began = time.monotonic()
        async with in_process(served, mode="legacy") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            listed = time.monotonic() - began
            began = time.monotonic()
            called = await client.call_tool(
                "tool_call", {"name": ECHO, "arguments": {"text": "hi"}}
            )
            took = time.monotonic() - began
            text = called.content[0].text  # type: ignore[union-attr]
            return listed, names, took, bool(called.is_error), text

    listed, names, took, failed, text = anyio.run(main)
    assert listed < PATIENCE, f"initialize + tools/list took {listed:.1f} s"
    assert "tool_search" in names
    assert took < PATIENCE, f"the call to the toolbox server took {took:.1f} s"
    assert failed is False, text
    assert text == "echo: hi"


def marked_toolbox_server(marker: Path) -> dict[str, object]:
    """The toolbox server, appending a line to ``marker`` each time it starts."""
    start = (
        "import runpy, sys\n"
        "with open(sys.argv[1], 'a') as marker: marker.write('started\\n')\n"
        "sys.argv = sys.argv[2:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    return {"command": sys.executable, "args": ["-c", start, str(marker), str(TOOLBOX_SERVER)]}


def test_serve_starts_a_known_server_only_once_the_client_has_the_tool_list(
    served: ServeHome,
) -> None:
    marker = served.root / "box.starts"
    served.write_config(mcp_servers={"box": marked_toolbox_server(marker)})
    served.cli.run("tools", "search", "echo the text back")  # the toolbox server's manifest

    def started() -> int:
        return len(marker.read_text().splitlines()) if marker.exists() else 0

    assert started() == 1

    async def main() -> tuple[int, list[str], int, str]:
        async with in_process(served, mode="legacy") as client:
            await anyio.sleep(0.5)  # initialized; well within HELD_SERVERS_START_AFTER
            before_list = started()
            names = [tool.name for tool in (await client.list_tools()).tools]
            with anyio.fail_after(PATIENCE):
                while started() < 2:
                    await anyio.sleep(0.05)
            called = await client.call_tool(
                "tool_call", {"name": ECHO, "arguments": {"text": "hi"}}
            )
            return before_list, names, started(), called.content[0].text  # type: ignore[union-attr]

    before_list, names, after, text = anyio.run(main)
    assert before_list == 1, "serve started the server before its client had the tool list"
    assert "tool_search" in names
    assert after == 2
    assert text == "echo: hi"


@pytest.mark.parametrize("route", ["tool_call", "direct"])
def test_a_call_of_a_tool_whose_server_is_still_connecting_waits_for_it(
    served: ServeHome, route: str
) -> None:
    ready = served.root / "late-server-may-answer"  # not yet: its first connect is under way
    served.write_config(mcp_servers={"late": late_server(ready, connect_timeout=HANG_TIMEOUT)})
    late_tool = "mcp__late__late_echo"

    async def main() -> tuple[list[str], bool, str, float]:
        async with in_process(served, mode="legacy") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]

            async def answer_soon() -> None:
                await anyio.sleep(1.0)
                ready.touch()

            async with anyio.create_task_group() as group:
                group.start_soon(answer_soon)
                began = time.monotonic()
                with anyio.fail_after(PATIENCE):
                    if route == "tool_call":
                        called = await client.call_tool(
                            "tool_call", {"name": late_tool, "arguments": {"text": "hi"}}
                        )
                    else:
                        called = await client.call_tool(late_tool, {"text": "hi"})
                took = time.monotonic() - began
            text = called.content[0].text  # type: ignore[union-attr]
            return names, bool(called.is_error), text, took

    names, failed, text, took = anyio.run(main)
    assert late_tool not in names  # no manifest: its tools were not known when listed
    assert failed is False, text
    assert "late: hi" in text
    assert took >= 0.9, "the call was answered before the server could have connected"


def test_a_call_of_a_name_no_starting_server_could_have_is_refused_at_once(
    served: ServeHome,
) -> None:
    never = served.root / "never"  # the late server's first connect stays under way throughout
    served.write_config(mcp_servers={"late": late_server(never, connect_timeout=HANG_TIMEOUT)})

    async def main() -> list[tuple[str, float]]:
        answers: list[tuple[str, float]] = []
        async with in_process(served, mode="legacy") as client:
            await client.list_tools()
            for name in ("no_such_tool", "mcp__other__echo"):
                for route in ("tool_call", "direct"):
                    began = time.monotonic()
                    if route == "tool_call":
                        called = await client.call_tool("tool_call", {"name": name})
                    else:
                        called = await client.call_tool(name, {})
                    assert called.is_error, (name, route)
                    answers.append((called.content[0].text, time.monotonic() - began))  # type: ignore[union-attr]
        return answers

    for text, took in anyio.run(main):
        assert "unknown tool" in text.lower() or "no tool named" in text.lower(), text
        assert took < PATIENCE, f"{text!r} took {took:.1f} s: it waited for the late server"

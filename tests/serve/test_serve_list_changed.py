"""A server connecting or dropping while ``hermes serve`` runs changes the served tool list, and
connected clients are told: ``notifications/tools/list_changed`` on a 2025-era connection, a
``ToolsListChanged`` event on a 2026-era ``subscriptions/listen`` stream.

The late server (``servers/late.py``) answers only once a file exists, so serve starts and
lists its tools without it, and its background connect brings it in after the test creates the
file, with no change to the config file.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from in_process import http_in_process, in_process
from mcp.client.subscriptions import ToolsListChanged
from serving import (
    ServeHome,
    late_server,
    processes_mentioning,
    served_tools_once_listed,
)

from hermes_core import Config, Environment, Host, Tool
from hermes_core._serve import HostServer

LATE_TOOL = "mcp__late__late_echo"
# A guard against a hang, not a performance check.
WAIT_LIMIT = 30


def listing(tools: list[mcp_types.Tool]) -> str:
    """The description of ``tool_search``, which holds the listing of deferred tools."""
    for tool in tools:
        if tool.name == "tool_search":
            return tool.description or ""
    raise AssertionError(f"tool_search is not served; got {[tool.name for tool in tools]}")


def configure(served: ServeHome) -> Path:
    ready = served.root / "late-server-may-answer"
    # Serve waits for no server, so the first connect may wait for the file as long as it likes;
    # a short connect_timeout only made every attempt of a loaded machine (a child's start and
    # imports past 2 s) fail, and the backoff outgrow WAIT_LIMIT.
    served.write_config(mcp_servers={"late": late_server(ready, connect_timeout=30)})
    return ready


def test_a_server_connecting_while_serving_notifies_a_2025_client(served: ServeHome) -> None:
    ready = configure(served)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    async def main() -> tuple[str, str, mcp_types.CallToolResult]:
        async with in_process(served, mode="legacy", message_handler=on_message) as client:
            capabilities = client.session.server_capabilities
            assert capabilities is not None
            assert capabilities.tools is not None
            assert capabilities.tools.list_changed is True
            before = listing((await client.list_tools()).tools)
            ready.touch()
            with anyio.fail_after(WAIT_LIMIT):
                await changed.wait()
            after = listing((await client.list_tools()).tools)
            called = await client.call_tool(
                "tool_call", {"name": LATE_TOOL, "arguments": {"text": "hello"}}
            )
            return before, after, called

    before, after, called = anyio.run(main)
    assert LATE_TOOL not in before
    assert LATE_TOOL in after
    assert called.is_error is False
    assert called.content[0].text == "late: hello"  # type: ignore[union-attr]


def test_a_server_dropping_while_serving_notifies_a_2025_client(served: ServeHome) -> None:
    ready = served.root / "late-server-may-answer"
    ready.touch()
    served.write_config(mcp_servers={"late": late_server(ready, connect_timeout=30)})
    changes: list[object] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changes.append(message)

    async def main() -> tuple[str, str]:
        async with in_process(served, mode="legacy", message_handler=on_message) as client:
            # Serve answers at once; the server joins the list once connected.
            before = listing(await served_tools_once_listed(client, LATE_TOOL))
            # The listing may show the server before the client has heard that it joined; that
            # notice must not count as the one about the drop.
            with anyio.fail_after(WAIT_LIMIT):
                while not changes:
                    await anyio.sleep(0.05)
            heard = len(changes)
            (child,) = processes_mentioning(str(ready))
            # Without the file the reconnect cannot succeed, so the server stays unavailable.
            ready.unlink()
            os.kill(child, signal.SIGKILL)
            with anyio.fail_after(WAIT_LIMIT):
                while len(changes) == heard:
                    await anyio.sleep(0.05)
            return before, listing((await client.list_tools()).tools)

    before, after = anyio.run(main)
    assert LATE_TOOL in before
    assert LATE_TOOL not in after


def test_a_server_connecting_while_serving_notifies_a_2026_client_on_its_listen_stream(
    served: ServeHome,
) -> None:
    ready = configure(served)

    async def main() -> tuple[str, str]:
        async with in_process(served) as client:
            assert client.protocol_version == "2026-07-28"
            before = listing((await client.list_tools()).tools)
            async with client.listen(tools_list_changed=True) as subscription:
                ready.touch()
                with anyio.fail_after(WAIT_LIMIT):
                    event = await subscription.__anext__()
            assert isinstance(event, ToolsListChanged)
            return before, listing((await client.list_tools()).tools)

    before, after = anyio.run(main)
    assert LATE_TOOL not in before
    assert LATE_TOOL in after


def test_over_http_a_2026_client_hears_of_the_change_on_its_listen_stream(
    served: ServeHome,
) -> None:
    ready = configure(served)

    async def main() -> tuple[str, str]:
        async with http_in_process(served) as server, server.client() as client:
            before = listing((await client.list_tools()).tools)
            async with client.listen(tools_list_changed=True) as subscription:
                ready.touch()
                with anyio.fail_after(WAIT_LIMIT):
                    event = await subscription.__anext__()
            assert isinstance(event, ToolsListChanged)
            return before, listing((await client.list_tools()).tools)

    before, after = anyio.run(main)
    assert LATE_TOOL not in before
    assert LATE_TOOL in after


def test_a_stateless_http_server_promises_no_list_changes_to_a_2025_client(
    served: ServeHome,
) -> None:
    served.write_config()

    async def main() -> bool | None:
        async with http_in_process(served) as server, server.client(mode="legacy") as client:
            capabilities = client.session.server_capabilities
            assert capabilities is not None
            assert capabilities.tools is not None
            return capabilities.tools.list_changed

    assert anyio.run(main) is False


class AnnouncementCounter(HostServer):
    """The real server face, counting its announcements instead of needing a connected client."""

    announcements = 0

    async def announce_tool_list_changed(self) -> None:
        self.announcements += 1
        await super().announce_tool_list_changed()


def test_a_registry_change_is_announced_at_once_without_polling(served: ServeHome) -> None:
    env = Environment(home=served.home, cwd=served.work, variables=served.variables())

    async def main() -> list[int]:
        counts = []
        async with Host(Config.model_validate({"plugins": {"enabled": ["files"]}}), env) as host:
            server = AnnouncementCounter(host)
            async with anyio.create_task_group() as group:
                group.start_soon(server.watch_tool_list)
                await anyio.wait_all_tasks_blocked()
                with host.registry.batch():  # a server's tools replaced: one change
                    host.registry.register(Tool("comet_one", "A comet."), owner="mcp:sky")
                    host.registry.register(Tool("comet_two", "A comet."), owner="mcp:sky")
                await anyio.wait_all_tasks_blocked()  # no time passes: a poller would still sleep
                counts.append(server.announcements)
                host.registry.unregister("comet_two")
                host.registry.register(Tool("comet_two", "A comet."), owner="mcp:sky")
                await anyio.wait_all_tasks_blocked()  # the list clients see is what it was
                counts.append(server.announcements)
                group.cancel_scope.cancel()
        return counts

    assert anyio.run(main) == [1, 1]

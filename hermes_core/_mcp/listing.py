"""Listing a server's tools: every page of ``tools/list``, each answer screened tool by tool.

The SDK validates a ``tools/list`` answer as a whole: one tool that breaks the schema (no
``name``, an ``inputSchema`` that is not an object, ``required`` that is not a list) would
reject the entire answer and cost the server every tool. So each answer is screened tool by
tool before the SDK reads it (:class:`ListingScreen`): a tool that hermes
(:func:`~hermes_core._mcp.manifests.tool_problem`, the rule manifests are read with, and a
schema nested too deep or too large: :func:`~hermes_core._mcp.manifests.listed_schema_problem`)
or the SDK's schema of the negotiated protocol version rejects is skipped with one warning
line, and the others are listed (:func:`list_all_tools`); a description over the cap is
shortened, with one warning line too.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp import Client
from mcp.shared.message import SessionMessage
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

from hermes_core._mcp.failures import McpConnectError, detail_line
from hermes_core._mcp.manifests import (
    capped_description,
    description_problem,
    listed_schema_problem,
    tool_problem,
)

__all__ = [
    "FALLBACK_VERSION",
    "MAX_LIST_PAGES",
    "MAX_SERVER_TOOLS",
    "ListingScreen",
    "ShortenedTool",
    "SkippedTool",
    "list_all_tools",
    "screen_tools",
]

log = logging.getLogger("hermes_core._mcp")

MAX_LIST_PAGES = 1000
"""A server whose ``tools/list`` never stops paging is cut off here."""
MAX_SERVER_TOOLS = 10_000
"""The most tools (skipped ones included) hermes takes from one server's listing; a server that
lists more is refused whole (docs/mcp.md: why this bound, and why no part of the listing)."""

FALLBACK_VERSION = "2025-11-25"
"""The version the SDK validates an answer under before a version is negotiated."""


@dataclass(frozen=True)
class SkippedTool:
    """A listed tool left out: its position in its ``tools/list`` page, its name when it has
    one, and what is wrong with it (one line)."""

    index: int
    name: str | None
    problem: str

    def describe(self, offset: int = 0) -> str:
        """``'name' (tools[3])``, or ``tools[3] (no name)``; ``offset`` is the number of tools
        listed on the pages before this one."""
        where = f"tools[{self.index + offset}]"
        return f"{self.name!r} ({where})" if self.name else f"{where} (no name)"


class ShortenedTool(SkippedTool):
    """A listed tool kept with its description shortened (``problem`` says how long it was:
    :func:`~hermes_core._mcp.manifests.description_problem`)."""


def _name_of(entry: Any) -> str | None:
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) and name else None


def _rejected_by_sdk(
    result: Mapping[str, Any], tools: Sequence[Any], version: str
) -> dict[int, str]:
    """Position -> problem of each of ``tools`` that the SDK rejects in the answer ``result``
    under ``version``: the schema of that version, then the SDK's own model, as the SDK reads
    an answer."""
    data = {**result, "tools": list(tools)}
    rejected: dict[int, str] = {}
    checks: list[Callable[[], object]] = [
        lambda: validate_server_result("tools/list", version, data),
        lambda: mcp_types.ListToolsResult.model_validate(data, by_name=False),
    ]
    for check in checks:
        try:
            check()
        except ValidationError as exc:
            for detail in exc.errors(include_url=False):
                loc = detail["loc"]
                if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int):
                    rejected.setdefault(loc[1], detail_line(detail, 2))
        except (KeyError, ValueError):  # a method or version this SDK has no schema for
            pass
    return rejected


def screen_tools(
    result: Mapping[str, Any], version: str | None
) -> tuple[list[Any], list[SkippedTool], list[ShortenedTool]]:
    """The tools of one ``tools/list`` answer (``result``, its ``tools`` a list) that hermes
    and the SDK can use, each description over the cap shortened
    (:func:`~hermes_core._mcp.manifests.capped_description`); the skipped ones and the
    shortened ones, in listing order. An error that names no tool (the answer itself is
    malformed) is left for the SDK to report."""
    tools: list[Any] = result["tools"]
    skipped: dict[int, SkippedTool] = {}
    for index, entry in enumerate(tools):
        if not isinstance(entry, dict):
            problem = f"expected a tool object, got {type(entry).__name__}"
            skipped[index] = SkippedTool(index, None, problem)
        elif (problem_of_entry := tool_problem(entry) or listed_schema_problem(entry)) is not None:
            skipped[index] = SkippedTool(index, _name_of(entry), problem_of_entry)
    # The SDK names every tool it rejects at once; the rounds only make sure that what is
    # left passes, as the SDK will check it again.
    for _ in range(3):
        candidates = [index for index in range(len(tools)) if index not in skipped]
        rejected = _rejected_by_sdk(
            result, [tools[i] for i in candidates], version or FALLBACK_VERSION
        )
        if not rejected:
            break
        for position, problem in rejected.items():
            index = candidates[position]
            skipped[index] = SkippedTool(index, _name_of(tools[index]), problem)
    kept: list[Any] = []
    cut: list[ShortenedTool] = []
    for index, entry in enumerate(tools):
        if index in skipped:
            continue
        if (too_long := description_problem(entry.get("description"))) is not None:
            cut.append(ShortenedTool(index, _name_of(entry), too_long))
            entry = {**entry, "description": capped_description(entry["description"])}
        kept.append(entry)
    return kept, sorted(skipped.values(), key=lambda tool: tool.index), cut


class ListingScreen:
    """Screens the answers to ``tools/list`` on one connection.

    The connection's write stream reports each message the client sends (:meth:`sent`); its
    read stream passes each message the server sends through :meth:`received`, which answers
    a ``tools/list`` without the tools hermes or the SDK cannot use, long descriptions
    shortened. ``version`` gives the negotiated protocol version of the connection to
    ``server``. The skipped and the shortened tools are kept until :meth:`take_skipped`.
    """

    def __init__(self, server: str, version: Callable[[], str | None]) -> None:
        self._server = server
        self._version = version
        self._pending: set[str | int] = set()
        self._skipped: list[SkippedTool] = []
        self._shortened: list[ShortenedTool] = []
        self._warned: set[str] = set()

    def sent(self, item: SessionMessage) -> None:
        """Note the id of a ``tools/list`` request."""
        message = item.message
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/list":
            self._pending.add(message.id)

    def received(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        """``item``, or the answer to a ``tools/list`` without the tools that are skipped."""
        if not self._pending or isinstance(item, Exception):
            return item
        message = item.message
        if not isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
            return item
        if message.id is None or message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        if not isinstance(message, mcp_types.JSONRPCResponse):
            return item
        if not isinstance(message.result.get("tools"), list):
            return item
        try:
            kept, skipped, cut = screen_tools(message.result, self._version())
        except Exception:  # the SDK reads the answer as it came, and reports what it finds
            log.exception(
                "screening the tools/list answer of MCP server %r failed; passed on as it is",
                self._server,
            )
            return item
        if not skipped and not cut:
            return item
        self._skipped.extend(skipped)
        self._shortened.extend(cut)
        answer = message.model_copy(update={"result": {**message.result, "tools": kept}})
        return dataclasses.replace(item, message=answer)

    def first_time(self, warning: str) -> bool:
        """Whether ``warning`` is new on this connection (then noted): a server listed again
        (``tools/list_changed``, which some send right after their first listing) has the
        same tools warned about once."""
        if warning in self._warned:
            return False
        self._warned.add(warning)
        return True

    def take_skipped(self) -> tuple[list[SkippedTool], list[ShortenedTool]]:
        """The tools skipped and the tools shortened since the last call, each in the order
        they were listed."""
        taken = self._skipped, self._shortened
        self._skipped, self._shortened = [], []
        return taken


def _too_many(listed: int, pages: int, more: bool) -> str:
    more_to_come = ", and more to come" if more else ""
    return (
        f"it lists more than {MAX_SERVER_TOOLS:,} tools ({listed:,} on its first {pages:,} "
        f"pages of tools/list{more_to_come}), more than hermes takes from one server: none of "
        "them is registered"
    )


async def list_all_tools(
    client: Client, server: str, screen: ListingScreen | None = None
) -> list[mcp_types.Tool]:
    """Every tool of the server, following ``nextCursor`` through all pages. The tools
    ``screen`` took out of an answer are warned about, one line each. Raises
    :class:`McpConnectError` past :data:`MAX_LIST_PAGES` pages or :data:`MAX_SERVER_TOOLS`
    tools, or at a repeated cursor."""
    tools: list[mcp_types.Tool] = []
    listed = 0  # tools on the pages so far, skipped ones included
    seen_cursors: set[str] = set()
    cursor: str | None = None
    for pages in range(1, MAX_LIST_PAGES + 1):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        skipped, cut = screen.take_skipped() if screen is not None else ([], [])
        for tool in skipped:
            said = (
                f"lists a tool hermes cannot use, skipped: {tool.describe(listed)}: {tool.problem}"
            )
            if screen is None or screen.first_time(said):
                log.warning("MCP server %r %s", server, said)
        for tool in cut:
            said = (
                "lists a tool whose description is too long, shortened: "
                f"{tool.describe(listed)}: {tool.problem}"
            )
            if screen is None or screen.first_time(said):
                log.warning("MCP server %r %s", server, said)
        tools.extend(page.tools)
        listed += len(page.tools) + len(skipped)
        if listed > MAX_SERVER_TOOLS:
            raise McpConnectError(server, _too_many(listed, pages, page.next_cursor is not None))
        cursor = page.next_cursor
        if cursor is None:
            return tools
        if cursor in seen_cursors:
            raise McpConnectError(server, f"tools/list repeated the cursor {cursor!r}")
        seen_cursors.add(cursor)
    raise McpConnectError(server, f"tools/list did not end after {MAX_LIST_PAGES} pages")

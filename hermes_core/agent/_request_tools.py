"""The tools of a conversation's requests, as the schemas a provider sends (each one object at
its top level: :mod:`hermes_core._schema_roots`), and their estimated
tokens: both kept while the assembled tools stay the same (``Host.assemble`` hands out the same
tuple then, to every session with the same tools), so that neither is made again at each
request, nor for each new conversation, nor when a parent's and its subagents' requests (other
tools) take turns."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core._schema_roots import sendable
from hermes_core.agent._wire import ToolSchema
from hermes_core.search._render import tool_tokens

if TYPE_CHECKING:
    from hermes_core._tools import Tool

KEPT = 8
"""Tool lists kept (a root, its subagents' and its workers' toolsets, and some to spare)."""


def schema_tokens(tools: Sequence[ToolSchema]) -> int:
    """The estimated tokens of the tools' schemas, as the tool search counts them."""
    return sum(tool_tokens(tool) for tool in tools)


class _Entry:
    def __init__(self, tools: tuple[Tool, ...], schemas: tuple[ToolSchema, ...]) -> None:
        self.tools = tools  # held: its id is the key
        self.schemas = schemas
        self.tokens: int | None = None


class RequestTools:
    """The schemas of the last :data:`KEPT` assembled tool lists and, once asked for, their
    tokens."""

    def __init__(self) -> None:
        self._lists: OrderedDict[int, _Entry] = OrderedDict()

    def schemas(self, tools: tuple[Tool, ...]) -> tuple[ToolSchema, ...]:
        """``tools`` (an assembled tool list) as schemas: the ones made before for the same
        list."""
        entry = self._lists.get(id(tools))
        if entry is None or entry.tools is not tools:
            schemas = tuple(
                ToolSchema(tool.name, *sendable(tool.description, tool.parameters))
                for tool in tools
            )
            entry = self._lists[id(tools)] = _Entry(tools, schemas)
            while len(self._lists) > KEPT:
                self._lists.popitem(last=False)
        self._lists.move_to_end(id(tools))
        return entry.schemas

    def tokens(self, schemas: Sequence[ToolSchema]) -> int:
        """The estimated tokens of ``schemas``: counted once for schemas :meth:`schemas` gave."""
        entry = next((e for e in self._lists.values() if e.schemas is schemas), None)
        if entry is None:
            return schema_tokens(schemas)
        if entry.tokens is None:
            entry.tokens = schema_tokens(schemas)
        return entry.tokens

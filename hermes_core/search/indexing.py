"""Keeps a search backend in step with the deferred catalog, one group at a time.

The backend is filled lazily (on the first search) and then kept in sync by registry
generation: only the groups whose tools changed are removed and re-added, so a server that
connects mid-session is searchable at once and an unchanged catalog costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core.gc_pause import collector_paused
from hermes_core.search.backend import SearchBackend, ToolDocument
from hermes_core.search.listing import group_of
from hermes_core.tools import Tool

__all__ = ["IndexSync", "tool_document"]


def tool_document(tool: Tool) -> ToolDocument:
    """The document a backend indexes for ``tool``, grouped as the listing groups it."""
    return ToolDocument.from_schema(tool.name, tool.description, group_of(tool), tool.parameters)


class IndexSync:
    """Which tools ``backend`` holds, by group, and at which generation."""

    def __init__(self, backend: SearchBackend) -> None:
        self.backend = backend
        self.generation: int | None = None
        self._groups: dict[str, tuple[Tool, ...]] = {}
        self.groups_rebuilt = 0
        """How many group rebuilds the last sync did (the first sync counts every group)."""

    def sync(self, deferred: Sequence[Tool], generation: int) -> None:
        """Bring the backend to ``deferred`` as of ``generation``; a no-op when it is current."""
        if generation == self.generation:
            return
        with collector_paused():  # a first sync may index hundreds of thousands of tools
            self._sync(deferred, generation)

    def _sync(self, deferred: Sequence[Tool], generation: int) -> None:
        grouped: dict[str, list[Tool]] = {}
        for tool in deferred:
            grouped.setdefault(group_of(tool), []).append(tool)
        groups = {name: tuple(tools) for name, tools in grouped.items()}
        if self.generation is None:
            self.backend.build([tool_document(tool) for tool in deferred])
            self.groups_rebuilt = len(groups)
        else:
            changed = [
                name
                for name in {*self._groups, *groups}
                if not _same_tools(self._groups.get(name, ()), groups.get(name, ()))
            ]
            for name in sorted(changed):
                old = self._groups.get(name, ())
                if old:
                    self.backend.remove([tool.name for tool in old])
            for name in sorted(changed):
                new = groups.get(name, ())
                if new:
                    self.backend.add([tool_document(tool) for tool in new])
            self.groups_rebuilt = len(changed)
        self._groups = groups
        self.generation = generation


def _same_tools(old: Sequence[Tool], new: Sequence[Tool]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))

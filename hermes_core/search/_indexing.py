"""Keeps a search backend in step with the deferred catalog, one group at a time.

The backend is filled lazily (on the first search) and then kept in sync by registry
generation: only the groups whose tools changed are removed and re-added, so a server that
connects mid-session is searchable at once and an unchanged catalog costs nothing. The tools of
a block (a catalog, :mod:`hermes_core._tool_blocks`) are indexed without making them: the first
build gets :class:`~hermes_core.search._backend.KeyedDocuments`, made from the block's fields
when the backend asks, and keyed by the block's content.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hermes_core._gc_pause import collector_paused
from hermes_core._tool_blocks import BlockRun, ToolBlock, runs_of
from hermes_core._tools import Tool
from hermes_core.search._backend import KeyedDocuments, SearchBackend, ToolDocument
from hermes_core.search._listing import block_groups, group_of

__all__ = ["IndexSync", "deferred_documents", "tool_document"]

_KEY_VERSION = "hermes documents 1"
"""Part of every :class:`KeyedDocuments` key: change it when documents are made differently."""


def tool_document(tool: Tool) -> ToolDocument:
    """The document a backend indexes for ``tool``, grouped as the listing groups it."""
    return ToolDocument.from_schema(tool.name, tool.description, group_of(tool), tool.parameters)


def _block_maker(block: ToolBlock, positions: Sequence[int]) -> Callable[[int], ToolDocument]:
    """The document of the ``i``-th of ``positions`` of ``block``, made from its fields (the
    same document :func:`tool_document` makes from the tool)."""
    groups, ids, fields = block_groups(block), block.group_ids, block.fields

    def make(index: int) -> ToolDocument:
        position = positions[index]
        name, description, _, schema = fields(position)
        return ToolDocument.from_schema(name, description, groups[ids[position]], schema)

    return make


def deferred_documents(deferred: Sequence[Tool]) -> Sequence[ToolDocument]:
    """The documents of ``deferred`` in order: a list, or when it holds blocks
    :class:`KeyedDocuments` keyed by the blocks' content keys and the other tools' fields."""
    runs = runs_of(deferred)
    if not any(isinstance(run, BlockRun) for run in runs):
        return [tool_document(tool) for tool in deferred]
    names: list[str] = []
    groups: list[str] = []
    parts: list[tuple[int, Callable[[int], ToolDocument]]] = []
    digest = hashlib.sha256(f"{_KEY_VERSION}\n".encode())
    for run in runs:
        start = len(names)
        if isinstance(run, BlockRun):
            block, indices = run.block, run.indices()
            named = block_groups(block)
            names += run.names()
            ids = block.group_ids
            chosen = ids if run.positions is None else [ids[p] for p in run.positions]
            groups += map(named.__getitem__, chosen)
            parts.append((start, _block_maker(block, indices)))
            digest.update(f"block {block.key} {len(indices)}\n".encode())
            if run.positions is not None:
                digest.update(array("q", run.positions).tobytes())
        else:
            documents = [tool_document(tool) for tool in run]
            names += [document.name for document in documents]
            groups += [document.group for document in documents]
            parts.append((start, documents.__getitem__))
            fields = [
                [d.name, d.description, d.group, d.parameter_names, d.parameter_descriptions]
                for d in documents
            ]
            digest.update(f"tools {len(documents)}\n".encode())
            digest.update(json.dumps(fields).encode())
    return KeyedDocuments(names, groups, parts, digest.hexdigest())


@dataclass(frozen=True)
class _BlockPart:
    """The tools of one group of a block run (``positions``: the run's, ``None`` for all)."""

    block: ToolBlock
    group: int
    positions: tuple[int, ...] | None

    def indices(self) -> list[int]:
        found = self.block.group_positions()[self.group]
        if self.positions is None:
            return found
        kept = set(self.positions)
        return [position for position in found if position in kept]

    def names(self) -> list[str]:
        names = self.block.names
        return [names[position] for position in self.indices()]

    def documents(self) -> list[ToolDocument]:
        indices = self.indices()
        return list(map(_block_maker(self.block, indices), range(len(indices))))


_Member = Tool | _BlockPart


def _grouped(deferred: Sequence[Tool]) -> dict[str, tuple[_Member, ...]]:
    grouped: dict[str, list[_Member]] = {}
    for run in runs_of(deferred):
        if isinstance(run, BlockRun):
            block = run.block
            named = block_groups(block)
            ids = block.group_ids
            present = (
                range(len(block.groups))
                if run.positions is None
                else sorted({ids[position] for position in run.positions})
            )
            for group in present:
                part = _BlockPart(block, group, run.positions)
                grouped.setdefault(named[group], []).append(part)
        else:
            for tool in run:
                grouped.setdefault(group_of(tool), []).append(tool)
    return {name: tuple(members) for name, members in grouped.items()}


def _names(members: Sequence[_Member]) -> list[str]:
    names: list[str] = []
    for member in members:
        names += member.names() if isinstance(member, _BlockPart) else [member.name]
    return names


def _documents(members: Sequence[_Member]) -> list[ToolDocument]:
    documents: list[ToolDocument] = []
    for member in members:
        if isinstance(member, _BlockPart):
            documents += member.documents()
        else:
            documents.append(tool_document(member))
    return documents


class IndexSync:
    """Which tools ``backend`` holds, by group, and at which generation."""

    def __init__(self, backend: SearchBackend) -> None:
        self.backend = backend
        self.generation: int | None = None
        self._groups: dict[str, tuple[_Member, ...]] = {}
        self.groups_rebuilt = 0
        """How many group rebuilds the last sync did (the first sync counts every group)."""

    def sync(self, deferred: Sequence[Tool], generation: int) -> None:
        """Bring the backend to ``deferred`` as of ``generation``; a no-op when it is current."""
        if generation == self.generation:
            return
        with collector_paused():  # a first sync may index hundreds of thousands of tools
            self._sync(deferred, generation)

    def _sync(self, deferred: Sequence[Tool], generation: int) -> None:
        groups = _grouped(deferred)
        if self.generation is None:
            self.backend.build(deferred_documents(deferred))
            self.groups_rebuilt = len(groups)
        else:
            changed = [
                name
                for name in {*self._groups, *groups}
                if not _same_members(self._groups.get(name, ()), groups.get(name, ()))
            ]
            for name in sorted(changed):
                old = self._groups.get(name, ())
                if old:
                    self.backend.remove(_names(old))
            for name in sorted(changed):
                new = groups.get(name, ())
                if new:
                    self.backend.add(_documents(new))
            self.groups_rebuilt = len(changed)
        self._groups = groups
        self.generation = generation


def _same_members(old: Sequence[_Member], new: Sequence[_Member]) -> bool:
    return len(old) == len(new) and all(
        a is b or (isinstance(a, _BlockPart) and a == b) for a, b in zip(old, new, strict=True)
    )

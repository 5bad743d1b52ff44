"""Blocks of tools made on first use, and sequences of tools that hold such blocks whole.

A catalog file may list hundreds of thousands of tools (``tools.catalogs``). Making a
:class:`~hermes_core._tools.Tool` of each at every start costs seconds, so a catalog read from
the cache directory is registered as one :class:`ToolBlock`: the names, each tool's group and
the way to make any one tool, which is made (once) when something asks for it by name or
position. The registry hands such blocks on whole in a :class:`ToolSequence` (a
``Sequence[Tool]`` of *runs*: a few ordinary tools, or positions of one block), so that the
split into visible and deferred tools, the counts per group and the search index can work per
block instead of per tool. Whatever iterates a sequence tool by tool still gets every tool, made
as it goes: slower, never different.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from hermes_core._tools import Tool

__all__ = ["SCANS_BEFORE_INDEX", "BlockRun", "ToolBlock", "ToolSequence", "ToolsByName", "runs_of"]

SCANS_BEFORE_INDEX = 16
"""Names a block looks up by scanning its names before it builds its name index."""


class ToolBlock(ABC):
    """Tools of one owner held compactly, each made on first use and kept (the same object is
    returned every time, as the registry would).

    ``names`` are unique and in registration order; ``group_ids`` gives each position the index
    of its group in ``groups`` (the tools' ``source_name``), ``toolsets`` each group's toolset.
    Every tool of a block has the same ``source``. ``key`` identifies the block's content: two
    blocks with the same key make the same tools. ``group_sizes``, when the maker has counted
    them, are what :meth:`group_sizes` would count.
    """

    def __init__(
        self,
        names: Sequence[str],
        group_ids: Sequence[int],
        groups: Sequence[str],
        toolsets: Sequence[str],
        source: str,
        key: str,
        group_sizes: list[int] | None = None,
    ) -> None:
        self.names = names
        self.group_ids = group_ids
        self.groups = groups
        self.toolsets = toolsets
        self.source = source
        self.key = key
        self._made: dict[int, Tool] = {}
        self._positions: dict[str, int] | None = None
        self._scans = 0
        self._group_positions: list[list[int]] | None = None
        self._group_sizes = group_sizes

    def __len__(self) -> int:
        return len(self.names)

    @property
    def made_count(self) -> int:
        """How many of the block's tools have been made so far."""
        return len(self._made)

    def position(self, name: str) -> int | None:
        """Where ``name`` is in the block, or ``None``."""
        names = self.names
        if (
            self._positions is None
            and self._scans < SCANS_BEFORE_INDEX
            and isinstance(names, list | tuple)
        ):
            # A start asks for a few names (the registry's checks of the tools registered after
            # a catalog): a scan in C each, not an index of every name (0.13 s at 330,000 tools)
            # before the first tools/list. Asked more often, the block builds its index.
            self._scans += 1
            try:
                return names.index(name)
            except ValueError:
                return None
        return self.name_positions().get(name)

    def name_positions(self) -> Mapping[str, int]:
        """Each name's position (made on first use, then kept)."""
        if self._positions is None:
            self._positions = dict(zip(self.names, range(len(self.names)), strict=True))
        return self._positions

    def tool(self, position: int) -> Tool:
        """The tool at ``position``, made on first use."""
        found = self._made.get(position)
        if found is None:
            found = self._made[position] = self._make(position)
        return found

    def group_sizes(self) -> list[int]:
        """How many tools each group holds (indexed like ``groups``; kept)."""
        if self._group_sizes is None:
            counted = Counter(self._group_id_list())  # counted in C: a block may hold 330,000
            self._group_sizes = [counted[group] for group in range(len(self.groups))]
        return self._group_sizes

    def group_positions(self) -> list[list[int]]:
        """The positions of each group's tools, in order (indexed like ``groups``; kept)."""
        if self._group_positions is None:
            # C loops only (one append a tool took seconds at 330,000 tools): a catalog lists
            # each group's tools together, so its positions are a range; otherwise a stable
            # sort by group id, cut at the groups' sizes.
            ids = self._group_id_list()
            order: Sequence[int] = range(len(ids))
            if ids != sorted(ids):
                order = sorted(order, key=ids.__getitem__)
            positions: list[list[int]] = []
            start = 0
            for size in self.group_sizes():
                positions.append(list(order[start : start + size]))
                start += size
            self._group_positions = positions
        return self._group_positions

    def _group_id_list(self) -> list[int]:
        ids = self.group_ids
        return ids.tolist() if isinstance(ids, memoryview) else list(ids)

    @abstractmethod
    def _make(self, position: int) -> Tool:
        """Make the tool at ``position`` (called once per position)."""

    @abstractmethod
    def fields(self, position: int) -> tuple[str, str, str, Mapping[str, Any]]:
        """``(name, description, source_name, parameters)`` of the tool at ``position``,
        without making the tool (what a search document is made from)."""


@dataclass(frozen=True)
class BlockRun:
    """Positions of one block, in order: all of them (``positions`` is ``None``) or those
    listed."""

    block: ToolBlock
    positions: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.block) if self.positions is None else len(self.positions)

    def indices(self) -> Sequence[int]:
        """The block positions of the run."""
        return range(len(self.block)) if self.positions is None else self.positions

    def names(self) -> list[str]:
        """The names of the run's tools, in order."""
        names = self.block.names
        if self.positions is None:
            return list(names)
        return [names[position] for position in self.positions]

    def __iter__(self) -> Iterator[Tool]:
        make = self.block.tool
        return (make(position) for position in self.indices())


Run = tuple["Tool", ...] | BlockRun
"""A run of a :class:`ToolSequence`: ordinary tools, or positions of one block."""


class ToolSequence(Sequence["Tool"]):
    """Tools in order, as runs of ordinary tools and of block positions; indexing or iterating
    makes the block tools it reaches."""

    def __init__(self, runs: Iterable[Run]) -> None:
        self.runs: tuple[Run, ...] = tuple(run for run in runs if len(run))
        starts: list[int] = []
        total = 0
        for run in self.runs:
            starts.append(total)
            total += len(run)
        self._starts = starts
        self._length = total

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Tool: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Tool]: ...

    def __getitem__(self, index: int | slice) -> Tool | Sequence[Tool]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("ToolSequence index out of range")
        slot = bisect.bisect_right(self._starts, index) - 1
        run = self.runs[slot]
        offset = index - self._starts[slot]
        if isinstance(run, BlockRun):
            return run.block.tool(run.indices()[offset])
        return run[offset]

    def __iter__(self) -> Iterator[Tool]:
        for run in self.runs:
            yield from run

    def names(self) -> list[str]:
        """Every tool's name, in order, without making any tool."""
        names: list[str] = []
        for run in self.runs:
            if isinstance(run, BlockRun):
                names += run.names()
            else:
                names += [tool.name for tool in run]
        return names

    def blocks(self) -> list[BlockRun]:
        """The block runs."""
        return [run for run in self.runs if isinstance(run, BlockRun)]


def runs_of(tools: Sequence[Tool]) -> tuple[Run, ...]:
    """The runs of ``tools``: its own for a :class:`ToolSequence`, else one run of them all."""
    if isinstance(tools, ToolSequence):
        return tools.runs
    return (tuple(tools),) if tools else ()


class ToolsByName(Mapping[str, "Tool"]):
    """The tools of a :class:`ToolSequence` by name; a block tool is made when it is looked
    up, membership costs none."""

    def __init__(self, tools: ToolSequence) -> None:
        self._plain: dict[str, Tool] = {}
        self._runs: list[tuple[BlockRun, frozenset[int] | None]] = []
        for run in tools.runs:
            if isinstance(run, BlockRun):
                allowed = None if run.positions is None else frozenset(run.positions)
                self._runs.append((run, allowed))
            else:
                self._plain.update((tool.name, tool) for tool in run)
        self._length = len(tools)
        self._tools = tools

    def _find(self, name: str) -> tuple[ToolBlock, int] | None:
        for run, allowed in self._runs:
            position = run.block.position(name)
            if position is not None and (allowed is None or position in allowed):
                return run.block, position
        return None

    def __getitem__(self, name: str) -> Tool:
        found = self._plain.get(name)
        if found is not None:
            return found
        located = self._find(name) if isinstance(name, str) else None
        if located is None:
            raise KeyError(name)
        return located[0].tool(located[1])

    def __contains__(self, name: object) -> bool:
        if name in self._plain:
            return True
        return isinstance(name, str) and self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools.names())

    def __len__(self) -> int:
        return self._length

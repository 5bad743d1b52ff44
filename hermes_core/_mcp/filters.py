"""``include`` and ``exclude``: which tools of a server are kept.

``include`` globs are applied first (no ``include`` keeps everything), then ``exclude`` globs
remove tools. Globs match the tool's original MCP name, case-sensitively. A filtered tool is
neither listed nor callable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["FilterOutcome", "ToolFilter"]


@dataclass(frozen=True)
class FilterOutcome:
    """What a filter did to one listing: kept and filtered names, and patterns matching nothing."""

    kept: tuple[str, ...]
    filtered: tuple[str, ...]
    unmatched_patterns: tuple[str, ...]


@dataclass(frozen=True)
class ToolFilter:
    """The ``include`` then ``exclude`` rule of one server."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def from_lists(cls, include: Sequence[str], exclude: Sequence[str]) -> ToolFilter:
        """A filter from the ``include`` and ``exclude`` lists of a server entry."""
        return cls(tuple(include), tuple(exclude))

    def allows(self, name: str) -> bool:
        """Whether the tool called ``name`` passes ``include`` and is not hit by ``exclude``."""
        if self.include and not any(fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatchcase(name, p) for p in self.exclude)

    def apply(self, names: Iterable[str]) -> FilterOutcome:
        """Split ``names`` into kept and filtered, and report the patterns that matched nothing."""
        listed = list(names)
        verdicts = [(n, self.allows(n)) for n in listed]
        kept = tuple(n for n, allowed in verdicts if allowed)
        filtered = tuple(n for n, allowed in verdicts if not allowed)
        unmatched = tuple(
            pattern
            for pattern in (*self.include, *self.exclude)
            if not any(fnmatchcase(n, pattern) for n in listed)
        )
        return FilterOutcome(kept, filtered, unmatched)

    def describe_refusal(self, server: str, name: str) -> str:
        """The message a call to a filtered tool gets: which rule filtered it and where."""
        if self.include and not any(fnmatchcase(name, p) for p in self.include):
            rule = f"it matches none of include {list(self.include)}"
        else:
            hit = next(p for p in self.exclude if fnmatchcase(name, p))
            rule = f"exclude pattern {hit!r} matches it"
        return (
            f"The tool {name!r} of MCP server {server!r} is filtered out ({rule} in "
            f"mcp_servers.{server}); it cannot be called."
        )

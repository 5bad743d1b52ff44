"""The search backend interface: what the host indexes, what a search returns, and the protocol
every backend (the bundled ``bm25`` one or a plugin's) implements."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["ADMISSION_MODES", "Admission", "SearchBackend", "SearchHit", "ToolDocument"]

Admission = Literal["strict", "lenient", "off"]
"""What may be ranked at all; see :mod:`hermes_core.search.admission`."""

ADMISSION_MODES: tuple[Admission, ...] = ("strict", "lenient", "off")


@dataclass(frozen=True)
class ToolDocument:
    """One tool as a backend indexes it.

    ``group`` is the MCP server, the plugin name, or ``"other"``. ``parameter_names`` are the
    top-level parameter names of the tool's input schema.
    """

    name: str
    description: str
    group: str
    parameter_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchHit:
    """One ranked tool: its name, its score and the query tokens it contains."""

    name: str
    score: float
    matched_tokens: tuple[str, ...]


@runtime_checkable
class SearchBackend(Protocol):
    """A searchable index of tool documents, keyed by tool name.

    Names are unique: adding a document whose name is indexed replaces the old one. Registry
    order is the order documents were added; backends keep it for ties.
    """

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index with ``documents``."""
        ...

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index more documents (typically one server's tools) without rebuilding the rest."""
        ...

    def remove(self, names: Collection[str]) -> None:
        """Drop the documents with these names; unknown names are ignored."""
        ...

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        """At most ``limit`` hits for ``query``, best first.

        ``extra`` are candidates for this query only (connector hits from a gateway); they are
        ranked in the same pass as the indexed documents, so ``limit`` caps both together.
        """
        ...

    def __len__(self) -> int:
        """The number of indexed documents."""
        ...

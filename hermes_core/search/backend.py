"""The search backend interface: what the host indexes, what a search returns, and the protocol
every backend (the bundled ``bm25`` one or a plugin's) implements."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["ADMISSION_MODES", "Admission", "SearchBackend", "SearchHit", "ToolDocument"]

Admission = Literal["strict", "lenient", "off"]
"""What may be ranked at all; see :mod:`hermes_core.search.admission`."""

ADMISSION_MODES: tuple[Admission, ...] = ("strict", "lenient", "off")


@dataclass(frozen=True)
class ToolDocument:
    """One tool as a backend indexes it.

    ``group`` is the MCP server, the plugin name, or ``"other"``. ``parameter_names`` are the
    top-level parameter names of the tool's input schema; ``parameter_descriptions`` the
    descriptions and enum values of those parameters. :meth:`from_schema` derives both.
    """

    name: str
    description: str
    group: str
    parameter_names: tuple[str, ...] = ()
    parameter_descriptions: tuple[str, ...] = ()

    @classmethod
    def from_schema(
        cls, name: str, description: str, group: str, schema: Mapping[str, Any] | None
    ) -> ToolDocument:
        """The document of a tool whose input schema is ``schema`` (any JSON value: what is
        not a schema object with ``properties`` gives no parameters)."""
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        if not isinstance(properties, Mapping):
            return cls(name, description, group)
        texts: list[str] = []
        for spec in properties.values():
            if not isinstance(spec, Mapping):
                continue
            text = spec.get("description")
            if isinstance(text, str) and text:
                texts.append(text)
            values = spec.get("enum")
            if isinstance(values, list):
                texts.extend(value for value in values if isinstance(value, str))
        return cls(name, description, group, tuple(str(key) for key in properties), tuple(texts))


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

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """The words of ``query`` that none of ``hits`` (what :meth:`search` returned for it)
        contains, in query order, each once; with no hits, the words no indexed document (nor
        any of ``extra``) contains. ``tool_search`` reports them as ``unmatched``."""
        ...

    def __len__(self) -> int:
        """The number of indexed documents."""
        ...

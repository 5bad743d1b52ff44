"""The search backend interface: what the host indexes, what a search returns, and the protocol
every backend (the bundled ``bm25`` one or a plugin's) implements."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, overload, runtime_checkable

__all__ = [
    "ADMISSION_MODES",
    "OTHER_GROUP",
    "Admission",
    "KeyedDocuments",
    "SearchBackend",
    "SearchHit",
    "ToolDocument",
    "bare_tool_name",
]

Admission = Literal["strict", "lenient", "off"]
"""What may be ranked at all: ``strict`` and ``lenient`` admit only tools holding the query's
rarest words, ``off`` ranks every tool sharing a word (docs/tool-search.md, "Admission")."""

ADMISSION_MODES: tuple[Admission, ...] = ("strict", "lenient", "off")

OTHER_GROUP = "other"
"""The group of a tool whose server or plugin is unknown."""

_MCP_PREFIX = "mcp__"


def bare_tool_name(name: str) -> str:
    """``name`` without its ``mcp__<server>__`` prefix (``mcp__github__create_issue`` ->
    ``create_issue``); other names unchanged."""
    if name.startswith(_MCP_PREFIX):
        server, separator, rest = name[len(_MCP_PREFIX) :].partition("__")
        if separator and server and rest:
            return rest
    return name


@dataclass(frozen=True)
class ToolDocument:
    """One tool as a backend indexes it.

    ``group`` is the MCP server, the plugin name, or :data:`OTHER_GROUP` (``"other"``).
    ``parameter_names`` are the top-level parameter names of the tool's input schema;
    ``parameter_descriptions`` the descriptions and enum values of those parameters.
    :meth:`from_schema` derives both.
    """

    OTHER_GROUP: ClassVar[str] = OTHER_GROUP

    name: str
    description: str
    group: str
    parameter_names: tuple[str, ...] = ()
    parameter_descriptions: tuple[str, ...] = ()

    @property
    def bare_name(self) -> str:
        """The name without its ``mcp__<server>__`` prefix: how the server itself calls it."""
        return bare_tool_name(self.name)

    @classmethod
    def from_schema(
        cls, name: str, description: str, group: str, schema: Mapping[str, Any] | None
    ) -> ToolDocument:
        """The document of a tool whose input schema is ``schema`` (any JSON value: what is
        not a schema object with ``properties`` gives no parameters)."""
        # ``type(...) is dict`` first: parsed JSON gives dicts, and the ABC check is the slow
        # path (a host may index 330,000 catalog tools at its first search).
        properties = (
            schema.get("properties")
            if type(schema) is dict or isinstance(schema, Mapping)
            else None
        )
        if type(properties) is not dict and not isinstance(properties, Mapping):
            return cls(name, description, group)
        texts: list[str] = []
        for spec in properties.values():
            if type(spec) is not dict and not isinstance(spec, Mapping):
                continue
            text = spec.get("description")
            if isinstance(text, str) and text:
                texts.append(text)
            values = spec.get("enum")
            if isinstance(values, list):
                texts.extend(value for value in values if isinstance(value, str))
        return cls(name, description, group, tuple(map(str, properties)), tuple(texts))


class KeyedDocuments(Sequence[ToolDocument]):
    """Documents made when they are asked for (the host passes them to
    :meth:`SearchBackend.build` for a large catalog), whose ``names`` and ``groups`` are known
    without making any, and whose ``key`` identifies them: equal keys mean equal documents in
    the same order. Names are unique.

    An optional capability: a backend that knows this type may key what it keeps (a persisted
    index) on ``key`` instead of reading every document, and make only the documents it needs;
    any other backend simply iterates the sequence. Each document is made anew when asked for.
    """

    def __init__(
        self,
        names: Sequence[str],
        groups: Sequence[str],
        parts: Sequence[tuple[int, Callable[[int], ToolDocument]]],
        key: str,
    ) -> None:
        self.names = names
        self.groups = groups
        self.key = key
        self._starts = [start for start, _ in parts]
        self._makers = [make for _, make in parts]
        if len(names) != len(groups):
            raise ValueError("KeyedDocuments: names and groups differ in length")

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> ToolDocument: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ToolDocument]: ...

    def __getitem__(self, index: int | slice) -> ToolDocument | Sequence[ToolDocument]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("KeyedDocuments index out of range")
        part = bisect.bisect_right(self._starts, index) - 1
        return self._makers[part](index - self._starts[part])

    def __iter__(self) -> Iterator[ToolDocument]:
        ends = [*self._starts[1:], len(self)]
        for start, end, make in zip(self._starts, ends, self._makers, strict=True):
            yield from map(make, range(end - start))


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
        """Replace the whole index with ``documents`` (a :class:`KeyedDocuments` for a large
        catalog: a plain sequence to a backend that does not use its key)."""
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

"""The search backend interface: what the host indexes, what a search returns, and the protocol
every backend (the bundled ``bm25`` one or a plugin's) implements."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

__all__ = [
    "ADMISSION_MODES",
    "OTHER_GROUP",
    "Admission",
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

"""The search index follows the catalog by generation, one group at a time."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import anyio
from bridge_fixtures import core_tool, mcp_tool, registry_of, session, tool_search
from engine import BM25Index

from hermes_core.search._backend import Admission, SearchHit, ToolDocument


class CountingBM25:
    """The real BM25 index, counting the documents it is asked to build, add and remove."""

    def __init__(self) -> None:
        self.index = BM25Index()
        self.built: list[str] = []
        self.added: list[str] = []
        self.removed: list[str] = []
        self.searches = 0

    def build(self, documents: Sequence[ToolDocument]) -> None:
        self.built.extend(document.name for document in documents)
        self.index.build(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        self.added.extend(document.name for document in documents)
        self.index.add(documents)

    def remove(self, names: Collection[str]) -> None:
        self.removed.extend(names)
        self.index.remove(names)

    def search(
        self, query: str, limit: int, admission: Admission, extra: Sequence[ToolDocument] = ()
    ) -> list[SearchHit]:
        self.searches += 1
        return self.index.search(query, limit, admission, extra)

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        return self.index.unmatched_words(query, hits, extra)

    def __len__(self) -> int:
        return len(self.index)


def _matches(answer: dict[str, object]) -> list[str]:
    results = answer["results"]
    assert isinstance(results, list)
    return [name for result in results for name in result["matches"]]


def test_index_is_built_lazily_on_the_first_search() -> None:
    backend = CountingBM25()
    registry = registry_of([core_tool("read_file"), mcp_tool("github", "create_issue")])
    search = tool_search(registry, backend=backend)
    search.assemble(200_000)
    assert backend.built == []
    assert len(backend) == 0
    anyio.run(search.search, ["issue"], None, session())
    assert backend.built == ["mcp__github__create_issue"]


def test_server_added_mid_session_is_searchable_at_once() -> None:
    backend = CountingBM25()
    registry = registry_of([mcp_tool("github", "create_issue", "Create an issue.")])
    search = tool_search(registry, backend=backend)
    conversation = session()
    assert _matches(anyio.run(search.search, ["calendar event"], None, conversation)) == []
    registry.register(mcp_tool("gcal", "create_event", "Create a calendar event."), owner="gcal")
    found = _matches(anyio.run(search.search, ["calendar event"], None, conversation))
    assert found == ["mcp__gcal__create_event"]
    assert backend.added == ["mcp__gcal__create_event"]
    assert backend.removed == []


def test_only_changed_groups_are_rebuilt() -> None:
    backend = CountingBM25()
    tools = [mcp_tool("github", f"op_{index}") for index in range(5)]
    tools += [mcp_tool("slack", f"op_{index}") for index in range(3)]
    registry = registry_of(tools)
    search = tool_search(registry, backend=backend)
    anyio.run(search.search, ["op"], None, session())
    registry.unregister("mcp__slack__op_2")
    anyio.run(search.search, ["op"], None, session())
    assert sorted(backend.removed) == ["mcp__slack__op_0", "mcp__slack__op_1", "mcp__slack__op_2"]
    assert backend.added == ["mcp__slack__op_0", "mcp__slack__op_1"]
    assert len(backend) == 7


def test_removed_server_leaves_the_index() -> None:
    registry = registry_of([mcp_tool("github", "create_issue"), mcp_tool("jira", "create_ticket")])
    search = tool_search(registry)
    conversation = session()
    assert _matches(anyio.run(search.search, ["create"], None, conversation)) == [
        "mcp__github__create_issue",
        "mcp__jira__create_ticket",
    ]
    registry.unregister_owner("jira")
    assert _matches(anyio.run(search.search, ["create"], None, conversation)) == [
        "mcp__github__create_issue"
    ]


def test_unchanged_registry_costs_no_reindexing() -> None:
    backend = CountingBM25()
    registry = registry_of([mcp_tool("github", "create_issue")])
    search = tool_search(registry, backend=backend)
    for _ in range(3):
        anyio.run(search.search, ["issue"], None, session())
    assert backend.built == ["mcp__github__create_issue"]
    assert backend.added == []
    assert backend.removed == []
    assert backend.searches == 3

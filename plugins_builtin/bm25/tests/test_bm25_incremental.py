"""Incremental add and remove leave the index exactly as a full rebuild would."""

from __future__ import annotations

import pytest
from bm25_modules import STRENGTH, BM25Index
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.search._backend import ToolDocument

WORDS = ["issue", "create", "list", "file", "read", "user", "zone", "record", "send", "message"]
QUERIES = [
    "issue",
    "create issue",
    "list file user",
    "send message zone record read",
    "issue issue create message",
    "absent",
    "tool_3",
]

words = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
documents = st.builds(
    ToolDocument,
    name=st.sampled_from([f"tool_{n}" for n in range(40)]),
    description=words,
    group=st.sampled_from(["alpha", "beta", "other"]),
    parameter_names=st.lists(st.sampled_from(WORDS), max_size=2).map(tuple),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(documents, min_size=1, max_size=8)),
        st.tuples(
            st.just("remove"),
            st.lists(st.sampled_from([f"tool_{n}" for n in range(40)]), max_size=8),
        ),
    ),
    max_size=12,
)


def _apply(registry: dict[str, ToolDocument], operation: str, payload: list) -> None:  # type: ignore[type-arg]
    if operation == "add":
        for document in payload:
            registry.pop(document.name, None)
            registry[document.name] = document
    else:
        for name in payload:
            registry.pop(name, None)


@pytest.mark.parametrize("strength", STRENGTH)
def test_incremental_add_and_remove_equal_a_full_rebuild(strength: int) -> None:
    @settings(max_examples=30 * strength, deadline=None)
    @given(
        initial=st.lists(documents, max_size=20),
        steps=operations,
        compact=st.sampled_from([1, 4, 1024]),
    )
    def check(
        initial: list[ToolDocument],
        steps: list[tuple[str, list]],
        compact: int,  # type: ignore[type-arg]
    ) -> None:
        _incremental_add_and_remove_equal_a_full_rebuild(initial, steps, compact)

    check()


def _incremental_add_and_remove_equal_a_full_rebuild(
    initial: list[ToolDocument],
    steps: list[tuple[str, list]],
    compact: int,  # type: ignore[type-arg]
) -> None:
    index = BM25Index(initial, compact_min_dead=compact)
    registry: dict[str, ToolDocument] = {}
    _apply(registry, "add", initial)
    for operation, payload in steps:
        if operation == "add":
            index.add(payload)
        else:
            index.remove(payload)
        _apply(registry, operation, payload)
    rebuilt = BM25Index(list(registry.values()))
    assert len(index) == len(rebuilt) == len(registry)
    assert index.names == rebuilt.names
    for query in QUERIES:
        for admission in ("strict", "lenient", "off"):
            assert index.search(query, 50, admission) == rebuilt.search(query, 50, admission)


@pytest.mark.parametrize("strength", STRENGTH)
def test_admission_filters_but_does_not_change_scores(strength: int) -> None:
    @settings(max_examples=20 * strength, deadline=None)
    @given(catalog=st.lists(documents, max_size=30), query=st.sampled_from(QUERIES))
    def check(catalog: list[ToolDocument], query: str) -> None:
        _admission_filters_but_does_not_change_scores(catalog, query)

    check()


def _admission_filters_but_does_not_change_scores(catalog: list[ToolDocument], query: str) -> None:
    # strict and lenient look the rarest token's holders up; off scores every holder of any
    # token in one dense pass. An admitted tool must score exactly as under off.
    index = BM25Index(catalog)
    plain = {hit.name: hit for hit in index.search(query, 100, "off")}
    for admission in ("strict", "lenient"):
        for hit in index.search(query, 100, admission):
            assert hit == plain[hit.name]

"""The ``bm25`` backend: ranking rules, exact names, ties, extra candidates, incremental updates."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from bm25_modules import KERNEL_NAMES, STRENGTH, BM25Index, fields, index
from bm25_modules import admission as admission_rules
from bm25_modules import kernel as kernel_module
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.search._backend import SearchBackend, SearchHit, ToolDocument

NAME_BOOST, bm25_idf = index.NAME_BOOST, index.bm25_idf
FIELDS, FIELD_WEIGHTS = fields.FIELDS, fields.FIELD_WEIGHTS


def _doc(name: str, description: str = "", group: str = "other", *params: str) -> ToolDocument:
    return ToolDocument(name, description, group, tuple(params))


GITHUB = [
    _doc("mcp__github__create_issue", "Create a new issue in a repository", "github", "title"),
    _doc("mcp__github__list_pull_requests", "List pull requests of a repository", "github"),
    _doc("mcp__github__get_file", "Read one file of a repository", "github", "path"),
]


def _names(index: BM25Index, query: str, admission: str = "strict", limit: int = 10) -> list[str]:
    return [hit.name for hit in index.search(query, limit, admission)]  # type: ignore[arg-type]


def test_index_implements_the_backend_protocol() -> None:
    assert isinstance(BM25Index(), SearchBackend)


def test_issues_finds_create_issue() -> None:
    index = BM25Index(GITHUB)
    assert _names(index, "issues") == ["mcp__github__create_issue"]


def test_exact_name_ranks_first() -> None:
    documents = [
        _doc("mcp__jira__search", "search search search issues with jql search", "jira"),
        _doc("mcp__github__search", "Search code", "github"),
        _doc("mcp__github__search_code", "Search code search", "github"),
    ]
    index = BM25Index(documents)
    assert _names(index, "search_code")[0] == "mcp__github__search_code"
    assert _names(index, "MCP__GITHUB__SEARCH_CODE")[0] == "mcp__github__search_code"
    # Two servers expose a tool named "search": both come first, in registry order.
    assert _names(index, "search")[:2] == ["mcp__jira__search", "mcp__github__search"]


_PIECES = st.sampled_from(["mcp__", "s__", "Get", "get", " ", "_x", "x"])
_NAMES = st.builds("".join, st.lists(_PIECES, min_size=1, max_size=4))


@pytest.mark.parametrize("strength", STRENGTH)
def test_exact_name_bypass_puts_every_tool_the_query_names_first_in_registry_order(
    strength: int,
) -> None:
    @settings(max_examples=40 * strength, deadline=None)
    @given(
        first=st.lists(_NAMES, min_size=1, max_size=8),
        added=st.lists(_NAMES, max_size=4),
        removed=st.lists(_NAMES, max_size=4),
        query=_NAMES,
    )
    def check(first: list[str], added: list[str], removed: list[str], query: str) -> None:
        _exact_names_first(first, added, removed, query)

    check()


def _exact_names_first(first: list[str], added: list[str], removed: list[str], query: str) -> None:
    # Names in any case, with spaces and mcp__ prefixes, through builds, adds and removes.
    index = BM25Index([_doc(name, "a tool") for name in first])
    index.add([_doc(name, "a tool") for name in added])
    index.remove(removed)
    key = query.strip().lower()
    named = [
        name for name in index.names if key in admission_rules.exact_name_keys(_doc(name, "a tool"))
    ]
    hits = _names(index, query, "strict", limit=len(index.names) + 1)
    assert hits[: len(named)] == named


def test_exact_name_is_admitted_whatever_the_admission() -> None:
    # "zzz" is in no description, so strict would admit nothing, but it names a tool.
    index = BM25Index([_doc("zzz", "an oddly named tool"), *GITHUB])
    assert _names(index, "zzz", "strict") == ["zzz"]


def test_ties_keep_registry_order() -> None:
    documents = [_doc(f"tool_{index}", "send an email message") for index in range(30)]
    index = BM25Index(documents)
    hits = index.search("email", 12, "strict")
    assert [hit.name for hit in hits] == [f"tool_{index}" for index in range(12)]
    assert len({hit.score for hit in hits}) == 1


def test_one_field_of_weight_one_scores_okapi_bm25_with_the_spec_idf() -> None:
    documents = [_doc("a", "alpha beta"), _doc("b", "beta gamma gamma delta"), _doc("c", "x")]
    only_description = dict.fromkeys(FIELDS, 0.0) | {"description": 1.0}
    index = BM25Index(documents, field_weights=only_description, equivalents={})
    lengths = [2, 4, 1]
    average = sum(lengths) / 3
    tf, length = 2, lengths[1]
    expected = bm25_idf(3, 1) * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * length / average))
    (hit,) = index.search("gamma", 5, "off")
    assert hit.name == "b"
    assert math.isclose(hit.score, expected, rel_tol=1e-12)
    assert math.isclose(bm25_idf(3, 1), math.log(1 + (3 - 1 + 0.5) / (1 + 0.5)), rel_tol=1e-12)


def test_field_weighting_normalizes_each_field_by_its_own_length() -> None:
    # BM25F: x = sum over fields of w_f tf_f / (1 - b + b len_f / avglen_f); score =
    # idf (k1 + 1) x / (k1 + x). "gamma" is in get_gamma's name (1 of 2 tokens) and twice in
    # its description (6 tokens).
    documents = [
        _doc("alpha", "one two three"),
        _doc("get_gamma", "gamma gamma and more words here"),
        _doc("delta", "x"),
    ]
    index = BM25Index(documents, equivalents={})
    name_average = (1 + 2 + 1) / 3
    description_average = (3 + 6 + 1) / 3
    x = FIELD_WEIGHTS["name"] * 1 / (0.25 + 0.75 * 2 / name_average) + FIELD_WEIGHTS[
        "description"
    ] * 2 / (0.25 + 0.75 * 6 / description_average)
    bm25f = bm25_idf(3, 1) * 2.5 * x / (1.5 + x)
    (hit,) = index.search("gamma", 5, "off")
    # The query holds half of the tool's name: name coverage 1/2.
    assert math.isclose(hit.score, bm25f * (1 + NAME_BOOST / 2), rel_tol=1e-12)


def test_hits_report_matched_tokens() -> None:
    index = BM25Index(GITHUB)
    (hit, *_) = index.search("create repository issue", 5, "off")
    assert hit.name == "mcp__github__create_issue"
    # With the expansion token of "create": the tool holds one of its equivalents ("new").
    assert set(hit.matched_tokens) == {"creat", "repositori", "issu", "~creat"}


def test_group_name_is_indexed_when_not_in_the_name() -> None:
    index = BM25Index([_doc("send", "Send a message", "slack"), _doc("post", "Post", "other")])
    assert _names(index, "slack") == ["send"]
    assert _names(index, "other") == []


def test_extra_candidates_rank_in_the_same_pass() -> None:
    local = [*GITHUB, _doc("mcp__gitlab__create_issue", "Create an issue", "gitlab")]
    extra = [
        _doc("connectors__linear__create_issue", "Create a Linear issue", "connectors"),
        _doc("connectors__slack__post", "Post a message", "connectors"),
    ]
    together = BM25Index([*local, *extra])
    index = BM25Index(local)
    for query in ("create issue", "linear", "post message", "repository"):
        for admission in ("strict", "lenient", "off"):
            assert index.search(query, 3, admission, extra=extra) == together.search(
                query, 3, admission
            )
    # The extra candidates are for one query only.
    assert _names(index, "linear") == []
    assert len(index) == len(local)


def test_limit_caps_local_and_extra_hits_together() -> None:
    index = BM25Index([_doc(f"local_{n}", "create issue") for n in range(5)])
    extra = [_doc("connectors__linear__create_issue", "create issue linear", "connectors")]
    hits = index.search("linear issue", 2, "off", extra=extra)
    assert hits[0].name == "connectors__linear__create_issue"
    assert len(hits) == 2


def test_connector_holding_the_rarest_token_is_not_crowded_out() -> None:
    index = BM25Index([_doc(f"local_{n}", "create issue issue create") for n in range(20)])
    extra = [_doc("connectors__linear__save", "Save a linear ticket", "connectors")]
    hits = index.search("create issue linear", 1, "strict", extra=extra)
    assert [hit.name for hit in hits] == ["connectors__linear__save"]


def test_add_replaces_a_document_of_the_same_name() -> None:
    index = BM25Index(GITHUB)
    index.add([_doc("mcp__github__create_issue", "Open a ticket", "github")])
    assert len(index) == 3
    assert _names(index, "ticket") == ["mcp__github__create_issue"]
    assert _names(index, "new") == []
    assert index.names[-1] == "mcp__github__create_issue"


def test_remove_ignores_unknown_names() -> None:
    index = BM25Index(GITHUB)
    index.remove(["nope", "mcp__github__get_file"])
    assert len(index) == 2
    assert _names(index, "file") == []
    assert _names(index, "get_file") == []


def test_empty_index_and_zero_limit_return_nothing() -> None:
    assert BM25Index().search("anything", 5, "off") == []
    assert BM25Index(GITHUB).search("issue", 0, "off") == []


def test_hits_are_search_hits_equal_to_the_constructed_ones() -> None:
    hits = BM25Index(GITHUB).search("create issue", 5, "off")
    assert hits
    assert all(type(hit) is SearchHit for hit in hits)
    assert hits == [SearchHit(hit.name, hit.score, hit.matched_tokens) for hit in hits]
    assert {hash(hit) for hit in hits} == {
        hash(SearchHit(hit.name, hit.score, hit.matched_tokens)) for hit in hits
    }


def test_hits_are_made_by_the_constructor_of_a_hit_class_the_kernel_cannot_fill() -> None:
    @dataclass(frozen=True, slots=True)
    class Slotted:
        name: str
        score: float
        matched_tokens: tuple[str, ...]

    @dataclass(frozen=True)
    class Checked:
        name: str
        score: float
        matched_tokens: tuple[str, ...]

        def __post_init__(self) -> None:
            raise ValueError("checked")

    @dataclass(frozen=True)
    class Wider:
        name: str
        score: float
        matched_tokens: tuple[str, ...]
        rank: int = 0

    for kind in (Slotted, Checked, Wider):
        assert not index.plain_hits(kind)  # type: ignore[arg-type]
    assert index.plain_hits(SearchHit)


@pytest.mark.parametrize("plain", [True, False])
def test_hits_are_the_same_whoever_makes_them(plain: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "_PLAIN_HITS", plain)
    for kernel_name in KERNEL_NAMES:
        built = BM25Index(GITHUB, kernel=kernel_module.KERNELS[kernel_name])
        extra = [_doc("box__create_issue", "Create an issue in a box", "box")]
        hits = built.search("create issue", 5, "off", extra=extra)
        assert [hit.name for hit in hits] == ["mcp__github__create_issue", "box__create_issue"]
        assert all(type(hit) is SearchHit for hit in hits)
        assert hits == [SearchHit(hit.name, hit.score, hit.matched_tokens) for hit in hits]

"""A keyword query is ranked by its similarity to the tools' summaries (name and first
sentence), a request by its similarity to their whole texts, and the no-match thresholds always
compare whole texts; with the real model."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hermes_search_hybrid.store import content_key
from hermes_search_hybrid.text import embedded_text, summary_text
from hybrid_fixtures import DEV_SETS, TOOLS, MakeBackend, names

from hermes_core.search import ToolDocument
from hermes_core.search._evaluation import catalog_documents, load_catalog, load_sets

DENSE_ONLY = {
    "dense_weight": 1.0,
    "dense_weight_unmatched": 1.0,
    "dense_weight_keyword": 1.0,
    "no_match_below": -1,
    "min_similarity": -1,
}
REQUEST = (
    "I keep getting texts from the bank and I would like to answer one of them from my laptop, "
    "could you do that for me"
)


def catalog_tools(set_name: str, server: str) -> list[ToolDocument]:
    """The tools of ``server`` in the catalog of the dev set ``set_name``."""
    (item,) = [item for item in load_sets(DEV_SETS) if item.name == set_name]
    return [tool for tool in catalog_documents(load_catalog(item.catalog)) if tool.group == server]


def test_keyword_query_finds_the_tool_its_summary_names(make_backend: MakeBackend) -> None:
    # From the SaaS dev set: issueCreateIssue's summary is "gitea issue create issue: Create an
    # issue."; its whole text goes on about deadlines and lists a dozen parameters.
    gitea = catalog_tools("saas-keyword", "gitea")
    query = "gitea new issue ops/deploy"
    backend = make_backend()
    backend.build(gitea)
    whole_texts = make_backend(keyword_max_words=0)  # every query ranked as a request
    whole_texts.build(gitea)

    assert "gitea__issueCreateIssue" in names(backend.search(query, 3, "off"))
    assert "gitea__issueCreateIssue" not in names(whole_texts.search(query, 5, "off"))


def test_keyword_query_is_ordered_by_summaries_and_a_request_by_whole_texts(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(**DENSE_ONLY)
    backend.build(TOOLS)
    encode = backend.encoder.encode

    def expected_order(query: str, text: Callable[[ToolDocument], str]) -> list[str]:
        tools = encode([text(tool) for tool in TOOLS], max_tokens=64)
        cosine = tools @ encode([query], max_tokens=256)[0]
        return [TOOLS[i].name for i in np.argsort(-cosine, kind="stable")]

    keyword = "answer a text message"
    assert names(backend.ranked(keyword, "off")) == expected_order(keyword, summary_text)
    assert names(backend.ranked(REQUEST, "off")) == expected_order(REQUEST, embedded_text)


def test_keyword_query_reports_and_thresholds_the_whole_texts_similarity(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(**DENSE_ONLY)
    backend.build(TOOLS)
    query = "answer a text message"
    vectors = backend.encoder.encode(
        [query, *(embedded_text(tool) for tool in TOOLS)], max_tokens=256
    )
    whole = dict(zip((tool.name for tool in TOOLS), vectors[1:] @ vectors[0], strict=True))

    for tool in backend.ranked(query, "off"):
        assert tool.similarity == pytest.approx(float(whole[tool.name]), abs=1e-3)


def test_keyword_query_like_a_tool_only_by_its_summary_still_gets_no_match(
    make_backend: MakeBackend,
) -> None:
    # From the MCP dev set's negatives: convert_time's summary ("time convert time: Convert
    # time between timezones") is 0.25 similar to a currency conversion, its whole text 0.22.
    query = "convert 100 usd to eur"
    threshold = 0.235
    time_server = catalog_tools("mcp-servers", "time")
    backend = make_backend(no_match_below=threshold, absent_service_no_match=False)
    backend.build(time_server)

    def best(text: Callable[[ToolDocument], str]) -> float:
        vectors = backend.encoder.encode([query, *map(text, time_server)], max_tokens=64)
        return float(np.max(vectors[1:] @ vectors[0]))

    assert best(embedded_text) < threshold <= best(summary_text)
    assert backend.search(query, 5, "off") == []


def test_keyword_query_weighs_the_dense_side_by_its_own_weight(make_backend: MakeBackend) -> None:
    query = "calendar text message"  # bm25 prefers send_sms, the summaries create_event
    unfiltered = {"no_match_below": -1, "min_similarity": -1}
    requests_dense = {"dense_weight": 1.0, "dense_weight_unmatched": 1.0, **unfiltered}
    lexical_only = make_backend(dense_weight_keyword=0.0, **requests_dense)
    lexical_only.build(TOOLS)
    dense_only = make_backend(dense_weight_keyword=1.0, **requests_dense)
    dense_only.build(TOOLS)
    hits = lexical_only.lexical.search(query, 5, "off")
    lexical = names(sorted(hits, key=lambda hit: -hit.score))  # the scores the blend scales

    assert names(lexical_only.ranked(query, "off"))[: len(lexical)] == lexical
    assert names(dense_only.search(query, 1, "off")) != lexical[:1]


def test_cache_of_whole_texts_only_embeds_each_tool_once_more(make_backend: MakeBackend) -> None:
    # A cache written by the release before summaries holds each tool's whole text only.
    first = make_backend()
    wholes = [embedded_text(tool) for tool in TOOLS]
    keys = [content_key(first.encoder.key, text) for text in wholes]
    first.store.put(keys, first.encoder.encode(wholes, max_tokens=64))
    first.store.save()
    embedded_before = first.encoder.texts_embedded

    backend = make_backend()
    backend.build(TOOLS)

    assert backend.documents_embedded == len(TOOLS)  # counted once a tool
    assert backend.encoder.texts_embedded - embedded_before == len(TOOLS)  # the summaries only


def test_tool_replaced_by_add_is_ranked_by_its_new_summary(make_backend: MakeBackend) -> None:
    backend = make_backend(**DENSE_ONLY)
    backend.build(TOOLS)
    query = "play a song on the speaker"
    before = names(backend.ranked(query, "off"))[0]
    backend.add([ToolDocument("list_files", "Play a song on the speaker.", "music", ("song",))])

    assert before != "list_files"
    assert names(backend.ranked(query, "off"))[0] == "list_files"

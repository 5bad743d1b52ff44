"""A keyword query is ranked by its similarity to the tools' summaries (name and first
sentence), a request by its similarity to their whole texts, and the no-match thresholds always
compare whole texts; with the real model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hermes_search_hybrid.text import embedded_text, summary_text
from hybrid_fixtures import TOOLS

from hermes_core import ToolDocument
from hermes_core.search.evaluation import catalog_documents, load_catalog, load_sets

MakeBackend = Callable[..., Any]

REPO = Path(__file__).resolve().parents[3]
DEV_SETS = REPO / "benchmarks" / "data" / "sets.json"
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


def names(hits: list[Any]) -> list[str]:
    return [hit.name for hit in hits]


def test_keyword_query_finds_the_tool_its_summary_names(make_backend: MakeBackend) -> None:
    # From the SaaS dev set: issueCreateIssue's description goes on about labels, milestones
    # and assignees, which pull its whole text away from "new issue".
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
    # From the MCP dev set's negatives: convert_time's summary ("convert time: Convert time
    # between timezones") is close to a currency conversion; its whole text is not.
    time_server = catalog_tools("mcp-servers", "time")
    backend = make_backend()
    backend.build(time_server)
    vectors = backend.encoder.encode(
        ["convert 100 usd to eur", *(summary_text(tool) for tool in time_server)], max_tokens=64
    )

    assert float(np.max(vectors[1:] @ vectors[0])) >= backend.settings.no_match_below
    assert backend.search("convert 100 usd to eur", 5, "off") == []

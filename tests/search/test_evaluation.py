"""The eval loaders (errors name file, entry or line, and field) and the metric definitions."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from hermes_core.search._evaluation import (
    METRIC_KEYS,
    CatalogEntry,
    EvalQuery,
    EvaluationDataError,
    evaluate,
    evaluate_backend,
    load_catalog,
    load_queries,
    percentile,
    recall_at,
    score_rankings,
)
from hermes_core.testing import make_search_backend


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_catalog_loads_name_description_schema_and_server(tmp_path: Path) -> None:
    entries = [
        {"name": "a", "description": "first", "server": "s", "input_schema": {"type": "object"}},
        {"name": "b", "description": "second"},
    ]
    catalog = load_catalog(_write(tmp_path / "c.json", json.dumps(entries)))
    assert catalog == [
        CatalogEntry("a", "first", {"type": "object"}, "s"),
        CatalogEntry("b", "second", {}, None),
    ]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"name": "a"}, "expected a JSON array"),
        ([{"name": "a", "description": "x"}, 3], "entry 1: expected an object"),
        ([{"description": "x"}], "entry 0: field 'name'"),
        ([{"name": "a", "description": 5}], "entry 0 (a): field 'description'"),
        ([{"name": "a", "description": "", "input_schema": []}], "field 'input_schema'"),
        ([{"name": "a", "description": "", "server": 1}], "entry 0 (a): field 'server'"),
        ([{"name": "a", "description": ""}] * 2, "entry 1: field 'name': 'a' appears twice"),
    ],
)
def test_catalog_error_names_index_and_field(tmp_path: Path, entries: object, message: str) -> None:
    path = _write(tmp_path / "catalog.json", json.dumps(entries))
    with pytest.raises(EvaluationDataError, match=re.escape(message)) as caught:
        load_catalog(path)
    assert str(path) in str(caught.value)


def test_catalog_that_is_not_json_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "catalog.json", "[{")
    with pytest.raises(EvaluationDataError, match="not valid JSON"):
        load_catalog(path)
    with pytest.raises(EvaluationDataError, match="cannot read"):
        load_catalog(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":3: not valid JSON"),
        ('["q"]', ":3: expected an object"),
        ('{"relevant": ["a"]}', ":3: field 'query'"),
        ('{"query": "q", "relevant": []}', ":3: field 'relevant'"),
        ('{"query": "q", "relevant": "a"}', ":3: field 'relevant'"),
    ],
)
def test_query_error_names_the_line(tmp_path: Path, line: str, message: str) -> None:
    good = '{"query": "send mail", "relevant": ["send_email"]}'
    path = _write(tmp_path / "queries.jsonl", f"{good}\n\n{line}\n")
    with pytest.raises(EvaluationDataError, match=message):
        load_queries(path)


def test_metrics_follow_their_definitions() -> None:
    catalog = [CatalogEntry(name, "") for name in "abcdefghijkl"]
    rankings = {"q1": ["x", "a", "y", "z", "w", "b"], "q2": [], "q3": ["c"]}
    queries = [
        EvalQuery("q1", ("a", "b")),  # a at rank 2, b at rank 6
        EvalQuery("q2", ("c",)),  # nothing returned
        EvalQuery("q3", ("c",)),  # c at rank 1
    ]
    result = evaluate(lambda query, limit: rankings[query][:limit], catalog, queries)
    assert tuple(result) == METRIC_KEYS
    assert result["recall@1"] == round(100 * (0 + 0 + 1) / 3, 2)
    assert result["recall@5"] == round(100 * (0.5 + 0 + 1) / 3, 2)
    assert result["recall@10"] == round(100 * (1 + 0 + 1) / 3, 2)
    assert result["mrr"] == round(100 * (0.5 + 0 + 1) / 3, 2)
    ndcg_q1 = (1 / math.log2(3) + 1 / math.log2(7)) / (1 + 1 / math.log2(3))
    assert result["ndcg@10"] == round(100 * (ndcg_q1 + 0 + 1) / 3, 2)
    assert result["no_match_rate"] == round(100 / 3, 2)
    assert result["queries"] == 3
    assert result["tools"] == 12
    assert 0 <= result["p50_ms"] <= result["p99_ms"]


def test_evaluate_backend_builds_the_backend_from_the_catalog() -> None:
    catalog = [
        CatalogEntry("send_email", "Send an email", {"properties": {"to": {}}}, "mail"),
        CatalogEntry("list_events", "List calendar events", {}, "calendar"),
    ]
    queries = [EvalQuery("email", ("send_email",)), EvalQuery("calendar", ("list_events",))]
    result = evaluate_backend(make_search_backend("bm25"), catalog, queries, "strict")
    assert result["recall@1"] == 100.0
    assert result["no_match_rate"] == 0.0
    # "someone" is in no tool: strict admits nothing, lenient and off rank on "email".
    absent = [EvalQuery("email someone", ("send_email",))]
    for admission, recall in (("strict", 0.0), ("lenient", 100.0), ("off", 100.0)):
        metrics = evaluate_backend(make_search_backend("bm25"), catalog, absent, admission)
        assert metrics["recall@1"] == recall, admission


def test_score_rankings_matches_evaluate_for_precomputed_results() -> None:
    catalog = [CatalogEntry(name, "") for name in "abc"]
    queries = [EvalQuery("q1", ("a", "b")), EvalQuery("q2", ("c",))]
    rankings = [["b", "x", "a"], []]
    direct = evaluate(lambda query, limit: rankings[int(query[1]) - 1], catalog, queries)
    given = score_rankings(queries, rankings, tools=3, latencies_ms=[1.0, 3.0])
    assert {key: given[key] for key in METRIC_KEYS if not key.endswith("_ms")} == {
        key: direct[key] for key in METRIC_KEYS if not key.endswith("_ms")
    }
    assert recall_at(1, queries, rankings) == 25.0
    assert (given["p50_ms"], given["p99_ms"]) == (1.0, 3.0)
    assert percentile([5.0, 1.0, 3.0, 2.0], 50) == 2.0
    assert percentile([], 99) == 0.0


def test_hit_at_k_counts_a_query_with_any_relevant_tool_in_the_top_k() -> None:
    queries = [EvalQuery("q1", ("a", "b")), EvalQuery("q2", ("c",)), EvalQuery("q3", ("d",))]
    rankings = [["x", "b"], ["y"] * 5 + ["c"], []]
    result = score_rankings(queries, rankings, tools=9)
    assert result["hit@1"] == 0.0
    assert result["hit@5"] == round(100 / 3, 2)  # q1: b at rank 2; q2: c at rank 6
    assert result["recall@5"] == round(100 * 0.5 / 3, 2)


def test_negative_queries_are_scored_apart_from_the_positive_ones() -> None:
    queries = [
        EvalQuery("send mail", ("send_email",)),
        EvalQuery("slack post message", (), negative=True, absent=("slack",)),
        EvalQuery("stripe refund", (), negative=True, absent=("stripe",)),
        EvalQuery("fax it", (), negative=True),
        EvalQuery("notion page", (), negative=True, absent=("notion",)),
    ]
    rankings = [["send_email"], ["post_chat"], [], ["send_fax"], ["page_tool"]]
    unmatched = [[], ["slack"], ["stripe", "refund"], [], ["page"]]
    result = score_rankings(queries, rankings, tools=5, unmatched=unmatched)
    assert (result["queries"], result["negatives"]) == (1, 4)
    assert result["recall@1"] == result["hit@1"] == 100.0
    assert result["no_match_rate"] == 0.0  # over the positive query only
    assert result["negatives_no_match"] == 25.0  # stripe
    # slack (flagged by its absent word) and stripe (no match); not fax (nothing unmatched)
    # nor notion (the wrong word unmatched).
    assert result["negatives_flagged"] == 50.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query": "q", "relevant": ["a"], "negative": true}', "'relevant' must be []"),
        ('{"query": "q", "relevant": [], "negative": "yes"}', "'negative' must be true or false"),
        ('{"query": "q", "relevant": ["a"], "absent": ["b"]}', "for negative queries only"),
        ('{"query": "q", "negative": true, "absent": "b"}', "'absent' must be a list"),
    ],
)
def test_negative_query_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path / "queries.jsonl", f"{line}\n")
    with pytest.raises(EvaluationDataError, match=r":1: .*" + re.escape(message)):
        load_queries(path)


def test_negative_query_loads_with_its_absent_words(tmp_path: Path) -> None:
    line = '{"query": "slack post", "relevant": [], "negative": true, "absent": ["slack"]}'
    (query,) = load_queries(_write(tmp_path / "queries.jsonl", line))
    assert query == EvalQuery("slack post", (), negative=True, absent=("slack",))

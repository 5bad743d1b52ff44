"""Search quality on the third-party eval sets, against the plain rank-bm25 reference figures of
``shared/data/README.md`` (recall@5 and nDCG@10, name split + description, no stemming).

These are quality floors on real data, not timings. Admission ``lenient`` (what the issue asks to
measure) and ``off`` clear the reference by more than 5 points on both sets; ``strict``, made for
the keyword queries a model sends, is reported in ``docs/performance.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.search.backend import Admission
from hermes_core.search.evaluation import METRIC_KEYS, evaluate_bm25, load_catalog, load_queries

REFERENCE = {
    "toolbench": {"recall@5": 59.15, "ndcg@10": 60.54},
    "metatool": {"recall@5": 46.42, "ndcg@10": 40.91},
}


@pytest.mark.parametrize("admission", ["lenient", "off"])
@pytest.mark.parametrize("eval_set", ["toolbench", "metatool"])
def test_ranking_beats_rank_bm25_reference_by_five_points(
    data_dir: Path, eval_set: str, admission: Admission
) -> None:
    folder = data_dir / "eval" / eval_set
    catalog = load_catalog(folder / "catalog.json")
    queries = load_queries(folder / "queries.jsonl")
    result = evaluate_bm25(catalog, queries, admission)
    assert tuple(result) == METRIC_KEYS
    assert result["queries"] == len(queries)
    assert result["tools"] == len(catalog)
    for metric, reference in REFERENCE[eval_set].items():
        assert result[metric] >= reference + 5, (metric, result)

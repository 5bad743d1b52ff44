"""With admission ``off`` and the same tokens, the index ranks like rank-bm25 with the spec's BM25.

rank-bm25's ``BM25Okapi`` computes idf as ln((N - df + 0.5) / (df + 0.5)) and floors negative
values at ``epsilon`` times the average idf; the spec's idf is ln(1 + (N - df + 0.5) / (df + 0.5)),
always positive. The reference below is ``BM25Okapi`` (its term-frequency and document-length
machinery unchanged) with only ``_calc_idf`` replaced by the spec's formula.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from hermes_core.search.bm25 import K1, B, BM25Index
from hermes_core.search.documents import document_tokens
from hermes_core.search.evaluation import catalog_documents, load_catalog, load_queries
from hermes_core.search.tokenize import query_tokens


class SpecIdfBM25(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi BM25 with the spec's idf."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {
            word: math.log1p((self.corpus_size - df + 0.5) / (df + 0.5)) for word, df in nd.items()
        }


def test_off_ranks_the_toolbench_catalog_like_rank_bm25(data_dir: Path) -> None:
    folder = data_dir / "eval" / "toolbench"
    documents = catalog_documents(load_catalog(folder / "catalog.json"))
    queries = load_queries(folder / "queries.jsonl")[::5]
    index = BM25Index(documents)
    reference = SpecIdfBM25([document_tokens(d) for d in documents], k1=K1, b=B)
    names = [document.name for document in documents]
    assert len(queries) > 150
    for item in queries:
        tokens = query_tokens(item.query)
        hits = index.search_tokens(tokens, 10, "off")
        expected = reference.get_scores(tokens)
        order = np.argsort(-expected, kind="stable")
        top = [int(i) for i in order[:10] if expected[i] > 0]
        assert len(hits) == len(top), item.query
        expected_by_name = dict(zip(names, expected, strict=True))
        for hit, slot in zip(hits, top, strict=True):
            # Same score at every rank; the name may differ only between exactly tied tools.
            assert math.isclose(hit.score, expected[slot], abs_tol=1e-6), item.query
            assert math.isclose(expected_by_name[hit.name], expected[slot], abs_tol=1e-6)
        # Ties keep registry order on both sides (a stable sort of the reference scores).
        assert [hit.name for hit in hits] == [names[slot] for slot in top], item.query

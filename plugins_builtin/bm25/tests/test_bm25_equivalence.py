"""The index computes the formulas it documents, checked against independent references.

- One field of weight 1, admission ``off``: the index ranks like rank-bm25 fed the same tokens,
  with the spec's BM25. rank-bm25's ``BM25Okapi`` computes idf as ln((N - df + 0.5) / (df +
  0.5)) and floors negative values at ``epsilon`` times the average idf; the spec's idf is
  ln(1 + (N - df + 0.5) / (df + 0.5)), always positive. The reference is ``BM25Okapi`` (its
  term-frequency and document-length machinery unchanged) with only ``_calc_idf`` replaced.
- Every field at its weight: the scores are the BM25F of the module docstring of
  :mod:`hermes_core.search.bm25`, computed here directly from the documents' fields.

Both compare the ranking before the name-coverage boost and without named groups (the groups
are ``other``), which other tests check by their rules.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from bm25_modules import BM25Index, analysis, fields
from bm25_modules import index as bm25
from bm25_modules import tokenize as tokenizer
from rank_bm25 import BM25Okapi

from hermes_core.search import ToolDocument
from hermes_core.search._evaluation import catalog_documents, load_catalog, load_queries

K1, B = bm25.K1, bm25.B
FIELDS, FIELD_WEIGHTS, document_fields = fields.FIELDS, fields.FIELD_WEIGHTS, fields.document_fields
analyze_query, tokenize = analysis.analyze_query, tokenizer.tokenize


class SpecIdfBM25(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi BM25 with the spec's idf."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {
            word: math.log1p((self.corpus_size - df + 0.5) / (df + 0.5)) for word, df in nd.items()
        }


def _toolbench(data_dir: Path) -> tuple[list[ToolDocument], list[str]]:
    folder = data_dir / "eval" / "toolbench"
    documents = [
        dataclasses.replace(document, group="other")
        for document in catalog_documents(load_catalog(folder / "catalog.json"))
    ]
    # Every tenth query: each is one rank_bm25 pass over the whole catalog (its scores a
    # Python loop over every document a token), most of the test's CPU.
    queries = [item.query for item in load_queries(folder / "queries.jsonl")[::10]]
    assert len(queries) > 75
    return documents, queries


def _assert_ranks_like(
    index: BM25Index, tokens: list[str], expected: np.ndarray, names: list[str]
) -> None:  # type: ignore[type-arg]
    hits = index.search_tokens(tokens, 10, "off")
    order = np.argsort(-expected, kind="stable")
    top = [int(i) for i in order[:10] if expected[i] > 0]
    assert len(hits) == len(top), tokens
    expected_by_name = dict(zip(names, expected, strict=True))
    for hit, slot in zip(hits, top, strict=True):
        # Same score at every rank; the name may differ only between exactly tied tools.
        assert math.isclose(hit.score, expected[slot], abs_tol=1e-6), tokens
        assert math.isclose(expected_by_name[hit.name], expected[slot], abs_tol=1e-6)
    # Tools of exactly equal scores keep registry order. (The two sides may order tools whose
    # scores differ in the last bits differently: they compute the same formula in another
    # order of floating-point operations.)
    position = {name: index for index, name in enumerate(names)}
    for earlier, later in itertools.pairwise(hits):
        if earlier.score == later.score:
            assert position[earlier.name] < position[later.name], tokens


def test_one_field_ranks_the_toolbench_catalog_like_rank_bm25(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25, "NAME_BOOST", 0.0)
    documents, queries = _toolbench(data_dir)
    only_description = dict.fromkeys(FIELDS, 0.0) | {"description": 1.0}
    index = BM25Index(documents, field_weights=only_description, equivalents={})
    reference = SpecIdfBM25([tokenize(d.description) for d in documents], k1=K1, b=B)
    names = [document.name for document in documents]
    for query in queries:
        tokens = list(analyze_query(query, lambda t: index.document_frequency(t) > 0, {}).tokens)
        _assert_ranks_like(index, tokens, reference.get_scores(tokens), names)


class _BM25F:
    """BM25F as the bm25 module docstring states it, one document at a time; the documents'
    fields, their average lengths and the tokens' document frequencies counted once."""

    def __init__(self, documents: list[ToolDocument]) -> None:
        self.fields = [document_fields(document) for document in documents]
        count = len(documents)
        self.averages = [
            sum(len(f[column]) for f in self.fields) / count for column in range(len(FIELDS))
        ]
        self.frequency = Counter(
            token for f in self.fields for token in {t for field in f for t in field}
        )

    def scores(self, tokens: list[str]) -> np.ndarray:  # type: ignore[type-arg]
        fields, averages, frequency = self.fields, self.averages, self.frequency
        weights = [FIELD_WEIGHTS[name] for name in FIELDS]
        count = len(fields)
        scores = np.zeros(count)
        for position, document_fields_ in enumerate(fields):
            for token in tokens:
                x = 0.0
                for column, field in enumerate(document_fields_):
                    tf = field.count(token)
                    if tf:
                        norm = 1 - B + B * len(field) / averages[column]
                        x += weights[column] * tf / norm
                if x:
                    idf = math.log1p((count - frequency[token] + 0.5) / (frequency[token] + 0.5))
                    scores[position] += idf * (K1 + 1) * x / (K1 + x)
        return scores


def test_every_field_at_its_weight_scores_the_bm25f_formula(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25, "NAME_BOOST", 0.0)
    documents, queries = _toolbench(data_dir)
    documents, queries = documents[:400], queries[:40]
    index = BM25Index(documents, equivalents={})
    names = [document.name for document in documents]
    formula = _BM25F(documents)
    for query in queries:
        tokens = list(analyze_query(query, lambda t: index.document_frequency(t) > 0, {}).tokens)
        _assert_ranks_like(index, tokens, formula.scores(tokens), names)

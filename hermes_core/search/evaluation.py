"""Measuring search quality: the eval catalog and query formats, and the metrics.

Definitions (``relevant`` is a query's set of relevant names, ``ranked`` what search returned):

- recall@k: |relevant ∩ ranked[:k]| / |relevant|, averaged over queries (a query with two
  relevant tools and one of them in the top k counts 0.5).
- nDCG@10: binary gains, DCG = Σ 1/log2(rank + 1) over relevant tools in the top 10, divided by
  the DCG of the ideal ranking (min(|relevant|, 10) relevant tools first).
- MRR: 1 / the rank of the first relevant tool in the returned list (0 when none), averaged.
- no_match_rate: the share of queries for which search returned nothing.
- p50_ms / p99_ms: latency of the search callable per query, nearest-rank percentiles.

Rates are percentages (0-100).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.errors import HermesError
from hermes_core.search.backend import Admission, ToolDocument
from hermes_core.search.bm25 import BM25Index
from hermes_core.search.documents import OTHER_GROUP, parameter_names

__all__ = [
    "METRIC_KEYS",
    "CatalogEntry",
    "EvalQuery",
    "EvaluationDataError",
    "bm25_search",
    "catalog_documents",
    "evaluate",
    "evaluate_bm25",
    "load_catalog",
    "load_queries",
    "percentile",
    "recall_at",
    "score_rankings",
]

SearchFunction = Callable[[str, int], list[str]]
"""Takes a query and a limit, returns tool names best first."""

METRIC_KEYS = (
    "recall@1",
    "recall@5",
    "recall@10",
    "ndcg@10",
    "mrr",
    "no_match_rate",
    "p50_ms",
    "p99_ms",
    "queries",
    "tools",
)
_DEPTH = 10


class EvaluationDataError(HermesError):
    """An eval catalog or query file that cannot be read; names the file and the entry."""


@dataclass(frozen=True)
class CatalogEntry:
    """One tool of an eval catalog."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    server: str | None = None


@dataclass(frozen=True)
class EvalQuery:
    """One eval query and the names of the tools that answer it."""

    query: str
    relevant: tuple[str, ...]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvaluationDataError(f"{path}: cannot read: {error}") from error


def load_catalog(path: Path) -> list[CatalogEntry]:
    """Read a JSON array of ``{name, description, input_schema?, server?}``; a bad entry is an
    error naming the file, the entry's index and the field."""
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise EvaluationDataError(f"{path}: not valid JSON: {error}") from error
    if not isinstance(data, list):
        raise EvaluationDataError(f"{path}: expected a JSON array of tools")
    entries: list[CatalogEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(data):
        where = f"{path}: entry {index}"
        if not isinstance(item, dict):
            raise EvaluationDataError(f"{where}: expected an object")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise EvaluationDataError(f"{where}: field 'name' must be a non-empty string")
        if name in seen:
            raise EvaluationDataError(f"{where}: field 'name': {name!r} appears twice")
        seen.add(name)
        description = item.get("description")
        if not isinstance(description, str):
            raise EvaluationDataError(f"{where} ({name}): field 'description' must be a string")
        schema = item.get("input_schema", {})
        if schema is None:
            schema = {}
        if not isinstance(schema, dict):
            raise EvaluationDataError(f"{where} ({name}): field 'input_schema' must be an object")
        server = item.get("server")
        if server is not None and not isinstance(server, str):
            raise EvaluationDataError(f"{where} ({name}): field 'server' must be a string")
        entries.append(CatalogEntry(name, description, schema, server))
    return entries


def load_queries(path: Path) -> list[EvalQuery]:
    """Read JSON Lines ``{"query": str, "relevant": [names]}``; a bad line is an error naming
    the file and the 1-based line number. Blank lines are skipped."""
    queries: list[EvalQuery] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise EvaluationDataError(f"{where}: not valid JSON: {error}") from error
        if not isinstance(item, dict):
            raise EvaluationDataError(f"{where}: expected an object")
        query = item.get("query")
        if not isinstance(query, str):
            raise EvaluationDataError(f"{where}: field 'query' must be a string")
        relevant = item.get("relevant")
        if (
            not isinstance(relevant, list)
            or not relevant
            or not all(isinstance(name, str) for name in relevant)
        ):
            raise EvaluationDataError(
                f"{where}: field 'relevant' must be a non-empty list of tool names"
            )
        queries.append(EvalQuery(query, tuple(dict.fromkeys(relevant))))
    return queries


def catalog_documents(catalog: Sequence[CatalogEntry]) -> list[ToolDocument]:
    """The search documents of an eval catalog (group: the entry's server, else ``other``)."""
    return [
        ToolDocument(
            name=entry.name,
            description=entry.description,
            group=entry.server or OTHER_GROUP,
            parameter_names=parameter_names(entry.input_schema),
        )
        for entry in catalog
    ]


def percentile(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of ``values`` (0.0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def recall_at(k: int, queries: Sequence[EvalQuery], rankings: Sequence[Sequence[str]]) -> float:
    """recall@k in percent: |relevant ∩ ranked[:k]| / |relevant|, averaged over queries."""
    if not queries:
        return 0.0
    total = sum(
        len(set(item.relevant).intersection(ranked[:k])) / len(item.relevant)
        for item, ranked in zip(queries, rankings, strict=True)
    )
    return round(100.0 * total / len(queries), 2)


def score_rankings(
    queries: Sequence[EvalQuery],
    rankings: Sequence[Sequence[str]],
    *,
    tools: int,
    latencies_ms: Sequence[float] = (),
) -> dict[str, float | int]:
    """The metrics of the module docstring for rankings already obtained (``rankings[i]`` is
    what search returned for ``queries[i]``, best first), e.g. by an asynchronous caller; the
    result has exactly the keys of :data:`METRIC_KEYS`."""
    ndcg = reciprocal = 0.0
    empty = 0
    for item, ranked in zip(queries, rankings, strict=True):
        relevant = set(item.relevant)
        if not ranked:
            empty += 1
        gains = sum(
            1.0 / math.log2(rank + 2)
            for rank, name in enumerate(ranked[:_DEPTH])
            if name in relevant
        )
        ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(relevant), _DEPTH)))
        ndcg += gains / ideal
        first = next((rank for rank, name in enumerate(ranked) if name in relevant), None)
        if first is not None:
            reciprocal += 1.0 / (first + 1)
    count = len(queries)

    def share(total: float) -> float:
        return round(100.0 * total / count, 2) if count else 0.0

    return {
        "recall@1": recall_at(1, queries, rankings),
        "recall@5": recall_at(5, queries, rankings),
        "recall@10": recall_at(10, queries, rankings),
        "ndcg@10": share(ndcg),
        "mrr": share(reciprocal),
        "no_match_rate": share(empty),
        "p50_ms": round(percentile(latencies_ms, 50), 4),
        "p99_ms": round(percentile(latencies_ms, 99), 4),
        "queries": count,
        "tools": tools,
    }


def evaluate(
    search: SearchFunction,
    catalog: Sized,
    queries: Sequence[EvalQuery],
) -> dict[str, float | int]:
    """Run every query through ``search`` (asking for 10 hits), timing each call, and compute
    the metrics of the module docstring over ``catalog`` (only its size is used); the result
    has exactly the keys of :data:`METRIC_KEYS`."""
    rankings: list[list[str]] = []
    latencies: list[float] = []
    for item in queries:
        started = time.perf_counter()
        ranked = search(item.query, _DEPTH)
        latencies.append((time.perf_counter() - started) * 1000.0)
        rankings.append(list(ranked))
    return score_rankings(queries, rankings, tools=len(catalog), latencies_ms=latencies)


def bm25_search(index: BM25Index, admission: Admission) -> SearchFunction:
    """A search callable over a BM25 index for :func:`evaluate`."""

    def search(query: str, limit: int) -> list[str]:
        return [hit.name for hit in index.search(query, limit, admission)]

    return search


def evaluate_bm25(
    catalog: Sequence[CatalogEntry],
    queries: Sequence[EvalQuery],
    admission: Admission = "strict",
) -> dict[str, float | int]:
    """Build the bundled BM25 index over ``catalog`` and evaluate ``queries`` against it."""
    index = BM25Index(catalog_documents(catalog))
    return evaluate(bm25_search(index, admission), catalog, queries)

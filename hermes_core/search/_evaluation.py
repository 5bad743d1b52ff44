"""Measuring search quality: the eval catalog and query formats, and the metrics.

A query is *positive* (it has relevant tools) or *negative* (``"negative": true``: its right
answer is "no tool", e.g. a service nobody has). Definitions over the positive queries
(``relevant`` is a query's set of relevant names, ``ranked`` what search returned):

- recall@k: |relevant ∩ ranked[:k]| / |relevant|, averaged over queries (a query with two
  relevant tools and one of them in the top k counts 0.5).
- hit@k: the share of queries with at least one relevant tool in ranked[:k].
- nDCG@10: binary gains, DCG = Σ 1/log2(rank + 1) over relevant tools in the top 10, divided by
  the DCG of the ideal ranking (min(|relevant|, 10) relevant tools first).
- MRR: 1 / the rank of the first relevant tool in the returned list (0 when none), averaged.
- no_match_rate: the share of queries for which search returned nothing.

Over the negative queries, each asked for :data:`NEGATIVE_LIMIT` hits (the default number a
model gets):

- negatives_no_match: the share answered with no match at all.
- negatives_flagged: the share answered with no match, or whose ``unmatched`` words (the words
  none of the returned tools holds: how the model tells an absent service) include every word
  of the query's ``absent`` list (any unmatched word when the query has none).

And for all: p50_ms / p99_ms, the latency of the search callable per query (nearest-rank
percentiles). Rates are percentages (0-100); a rate over no queries is 0.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Collection, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core._errors import HermesError
from hermes_core._shown import did_you_mean
from hermes_core.search._backend import OTHER_GROUP, Admission, SearchBackend, ToolDocument

__all__ = [
    "METRIC_KEYS",
    "NEGATIVE_LIMIT",
    "CatalogEntry",
    "EvalQuery",
    "EvalSet",
    "EvaluationDataError",
    "backend_search",
    "catalog_documents",
    "check_relevant",
    "evaluate",
    "evaluate_backend",
    "hit_at",
    "load_catalog",
    "load_queries",
    "load_sets",
    "percentile",
    "recall_at",
    "score_rankings",
]

SearchFunction = Callable[[str, int], "list[str] | tuple[list[str], Sequence[str]]"]
"""Takes a query and a limit, returns tool names best first, or those names and the query's
unmatched words."""

METRIC_KEYS = (
    "recall@1",
    "recall@5",
    "recall@10",
    "hit@1",
    "hit@5",
    "ndcg@10",
    "mrr",
    "no_match_rate",
    "negatives_no_match",
    "negatives_flagged",
    "p50_ms",
    "p99_ms",
    "queries",
    "negatives",
    "tools",
)
_DEPTH = 10
NEGATIVE_LIMIT = 5
"""Hits asked for a negative query: ``tools.tool_search.search_default_limit``'s default."""


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
    """One eval query and the names of the tools that answer it; a ``negative`` query has none
    (its right answer is "no tool")."""

    query: str
    relevant: tuple[str, ...]
    negative: bool = False
    absent: tuple[str, ...] = ()
    """Of a negative query: the words naming what nobody has (``slack``), expected unmatched."""
    line: int = field(default=0, compare=False)
    """The 1-based line of its query file (0 when it was not read from one)."""


@dataclass(frozen=True)
class EvalSet:
    """A named pair of an eval catalog and its query file."""

    name: str
    catalog: Path
    queries: Path
    description: str = ""


def load_sets(path: Path) -> list[EvalSet]:
    """Read a JSON array of ``{name, catalog, queries, description?}`` whose paths are relative
    to ``path``'s directory; a bad entry is an error naming the file, the entry and the field,
    and so is a catalog or queries file that is not there (before any set is measured)."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise EvaluationDataError(f"{path}: expected a JSON array of sets")
    sets: list[EvalSet] = []
    for index, item in enumerate(data):
        where = f"{path}: entry {index}"
        if not isinstance(item, dict):
            raise EvaluationDataError(f"{where}: expected an object")
        for key in ("name", "catalog", "queries"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise EvaluationDataError(f"{where}: field {key!r} must be a non-empty string")
        description = item.get("description", "")
        if not isinstance(description, str):
            raise EvaluationDataError(f"{where}: field 'description' must be a string")
        for key in ("catalog", "queries"):
            target = path.parent / item[key]
            if not target.is_file():
                state = "not a file" if target.exists() else "no such file"
                raise EvaluationDataError(
                    f"{where} (set {item['name']!r}): field {key!r}: {item[key]} is not there "
                    f"({target.resolve()}: {state})"
                )
        base = path.parent
        sets.append(
            EvalSet(item["name"], base / item["catalog"], base / item["queries"], description)
        )
    return sets


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvaluationDataError(f"{path}: cannot read: {error}") from error


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise EvaluationDataError(f"{path}: not valid JSON: {error}") from error


def load_catalog(path: Path) -> list[CatalogEntry]:
    """Read a JSON array of ``{name, description, input_schema?, server?}``; a bad entry is an
    error naming the file, the entry's index and the field."""
    data = _read_json(path)
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
    """Read JSON Lines ``{"query": str, "relevant": [names]}`` or, for a negative query,
    ``{"query": str, "relevant": [], "negative": true, "absent": [words]?}``; a bad line is an
    error naming the file and the 1-based line number. Blank lines are skipped; a file with no
    query is an error (its figures would all be 0)."""
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
        negative = item.get("negative", False)
        if not isinstance(negative, bool):
            raise EvaluationDataError(f"{where}: field 'negative' must be true or false")
        relevant = item.get("relevant", [] if negative else None)
        if negative:
            if relevant != []:
                raise EvaluationDataError(
                    f"{where}: a negative query has no relevant tools: 'relevant' must be []"
                )
        elif (
            not isinstance(relevant, list)
            or not relevant
            or not all(isinstance(name, str) for name in relevant)
        ):
            raise EvaluationDataError(
                f"{where}: field 'relevant' must be a non-empty list of tool names"
            )
        absent = item.get("absent", [])
        if not isinstance(absent, list) or not all(isinstance(word, str) for word in absent):
            raise EvaluationDataError(f"{where}: field 'absent' must be a list of words")
        if absent and not negative:
            raise EvaluationDataError(f"{where}: field 'absent' is for negative queries only")
        queries.append(
            EvalQuery(query, tuple(dict.fromkeys(relevant)), negative, tuple(absent), number)
        )
    if not queries:
        raise EvaluationDataError(f"{path}: no queries")
    return queries


def check_relevant(
    queries: Sequence[EvalQuery], names: Collection[str], *, queries_path: Path, catalog_path: Path
) -> None:
    """Raise :class:`EvaluationDataError` naming the first relevant tool of ``queries`` that is
    not among ``names`` (the catalog's), with its file and line: a label no search can return
    (a typo, a stale name) would lower every figure without a word."""
    known = set(names)
    for item in queries:
        for name in item.relevant:
            if name not in known:
                raise EvaluationDataError(
                    f"{queries_path}:{item.line}: relevant tool {name!r} is not in the catalog "
                    f"{catalog_path}.{did_you_mean(name, known)}"
                )


def catalog_documents(catalog: Sequence[CatalogEntry]) -> list[ToolDocument]:
    """The search documents of an eval catalog (group: the entry's server, else ``other``)."""
    return [
        ToolDocument.from_schema(
            entry.name, entry.description, entry.server or OTHER_GROUP, entry.input_schema
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
    """recall@k in percent over the positive queries: |relevant ∩ ranked[:k]| / |relevant|,
    averaged."""
    pairs = [
        (item, ranked) for item, ranked in zip(queries, rankings, strict=True) if item.relevant
    ]
    if not pairs:
        return 0.0
    total = sum(
        len(set(item.relevant).intersection(ranked[:k])) / len(item.relevant)
        for item, ranked in pairs
    )
    return round(100.0 * total / len(pairs), 2)


def hit_at(k: int, queries: Sequence[EvalQuery], rankings: Sequence[Sequence[str]]) -> float:
    """hit@k in percent: the share of positive queries with a relevant tool in ranked[:k]."""
    pairs = [
        (item, ranked) for item, ranked in zip(queries, rankings, strict=True) if item.relevant
    ]
    if not pairs:
        return 0.0
    hits = sum(1 for item, ranked in pairs if set(item.relevant).intersection(ranked[:k]))
    return round(100.0 * hits / len(pairs), 2)


def score_rankings(
    queries: Sequence[EvalQuery],
    rankings: Sequence[Sequence[str]],
    *,
    tools: int,
    latencies_ms: Sequence[float] = (),
    unmatched: Sequence[Sequence[str]] | None = None,
) -> dict[str, float | int]:
    """The metrics of the module docstring for rankings already obtained (``rankings[i]`` is
    what search returned for ``queries[i]``, best first, and ``unmatched[i]`` its unmatched
    words), e.g. by an asynchronous caller; the result has exactly the keys of
    :data:`METRIC_KEYS`."""
    words: Sequence[Sequence[str]] = unmatched if unmatched is not None else [()] * len(queries)
    ndcg = reciprocal = 0.0
    empty = positives = no_match = flagged = 0
    for item, ranked, missing in zip(queries, rankings, words, strict=True):
        if item.negative:
            no_match += not ranked
            named = set(item.absent) <= set(missing) if item.absent else bool(missing)
            flagged += not ranked or (bool(missing) and named)
            continue
        positives += 1
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
    negatives = len(queries) - positives

    def share(total: float, count: int) -> float:
        return round(100.0 * total / count, 2) if count else 0.0

    return {
        "recall@1": recall_at(1, queries, rankings),
        "recall@5": recall_at(5, queries, rankings),
        "recall@10": recall_at(10, queries, rankings),
        "hit@1": hit_at(1, queries, rankings),
        "hit@5": hit_at(5, queries, rankings),
        "ndcg@10": share(ndcg, positives),
        "mrr": share(reciprocal, positives),
        "no_match_rate": share(empty, positives),
        "negatives_no_match": share(no_match, negatives),
        "negatives_flagged": share(flagged, negatives),
        "p50_ms": round(percentile(latencies_ms, 50), 4),
        "p99_ms": round(percentile(latencies_ms, 99), 4),
        "queries": positives,
        "negatives": negatives,
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
    unmatched: list[Sequence[str]] = []
    latencies: list[float] = []
    for item in queries:
        started = time.perf_counter()
        answer = search(item.query, NEGATIVE_LIMIT if item.negative else _DEPTH)
        latencies.append((time.perf_counter() - started) * 1000.0)
        ranked, missing = answer if isinstance(answer, tuple) else (answer, ())
        rankings.append(list(ranked))
        unmatched.append(missing)
    return score_rankings(
        queries, rankings, tools=len(catalog), latencies_ms=latencies, unmatched=unmatched
    )


def backend_search(backend: SearchBackend, admission: Admission) -> SearchFunction:
    """A search callable over any search backend (already built) for :func:`evaluate`."""

    def search(query: str, limit: int) -> tuple[list[str], Sequence[str]]:
        hits = backend.search(query, limit, admission)
        return [hit.name for hit in hits], backend.unmatched_words(query, hits)

    return search


def evaluate_backend(
    backend: SearchBackend,
    catalog: Sequence[CatalogEntry],
    queries: Sequence[EvalQuery],
    admission: Admission = "off",
) -> dict[str, float | int]:
    """Build ``backend`` over ``catalog`` and evaluate ``queries`` against it, without a host
    (what ``hermes eval search`` measures through the real ``tool_search`` minus the host's
    own deferred tools)."""
    backend.build(catalog_documents(catalog))
    return evaluate(backend_search(backend, admission), catalog, queries)

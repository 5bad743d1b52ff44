"""``HybridBackend``: the lexical backend's ranking fused with the model's dense one."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from hermes_core.search import (
    Admission,
    SearchBackend,
    SearchHit,
    ToolDocument,
    query_language,
)
from hermes_search_hybrid.absent import ActionWords, asks_for_absent_service
from hermes_search_hybrid.fusion import blend
from hermes_search_hybrid.model import DOCUMENT_MAX_TOKENS, QUERY_MAX_TOKENS, Encoder, Vectors
from hermes_search_hybrid.settings import HybridSettings
from hermes_search_hybrid.store import EmbeddingStore, content_key
from hermes_search_hybrid.text import (
    embedded_text,
    query_texts,
    reads_as_sentence,
    summary_text,
    word_count,
)

__all__ = ["PROGRESS_MIN_TOOLS", "HybridBackend", "RankedTool"]

PROGRESS_MIN_TOOLS = 256
"""From this many tools to embed on, a progress bar is shown when stderr is a terminal."""

_BATCH = 32
_MCP_PREFIX = "mcp__"
_KEPT_QUERIES = 256


@dataclass(frozen=True)
class RankedTool:
    """One candidate of a query: its fused ``score`` (0..1), the cosine ``similarity`` of its
    whole text (not its summary) to the query (the greatest of the query's and its sentences',
    :func:`query_texts`), whether the query names it ``exact``-ly, and the query tokens the
    lexical side matched in it."""

    name: str
    score: float
    similarity: float
    exact: bool
    matched_tokens: tuple[str, ...]


class _Progress(Protocol):
    def update(self, n: int) -> object: ...

    def close(self) -> None: ...


def _exact_keys(name: str) -> set[str]:
    """The queries that name this tool exactly: its name, and its name without an
    ``mcp__<server>__`` prefix (lowercased), as the ``bm25`` backend compares them."""
    keys = {name.lower()}
    if name.startswith(_MCP_PREFIX):
        server, separator, rest = name[len(_MCP_PREFIX) :].partition("__")
        if server and separator and rest:
            keys.add(rest.lower())
    return keys


class HybridBackend:
    """A :class:`~hermes_core.search._backend.SearchBackend` over two rankings of the same
    tools: the ``lexical`` backend's (``bm25`` by default) and the cosine similarity of each
    tool's embedded text to the query. Each tool has two vectors: its whole text's
    (:func:`embedded_text`), which requests are matched against, and its summary's
    (:func:`summary_text`), which keyword queries are (``keyword_max_words``).

    ``documents_embedded`` and ``queries_embedded`` count what this backend had the model
    embed: tools with a text whose vector was not cached yet, and queries. The vectors of the last
    ``kept_queries`` queries are kept, since a model often repeats a query.
    """

    def __init__(
        self,
        lexical: SearchBackend,
        encoder: Encoder,
        store: EmbeddingStore,
        settings: HybridSettings,
    ) -> None:
        self.lexical = lexical
        self.encoder = encoder
        self.store = store
        self.settings = settings
        self.documents_embedded = 0
        self.queries_embedded = 0
        self._documents: dict[str, ToolDocument] = {}
        self._vectors: dict[str, Vectors] = {}
        self._summaries: dict[str, Vectors] = {}
        self._actions = ActionWords()
        self._matrix: Vectors | None = None
        self._summary_matrix: Vectors | None = None
        self._names: list[str] = []
        self._positions: dict[str, int] = {}
        self.kept_queries = _KEPT_QUERIES
        self._queries: dict[str, Vectors] = {}

    # Indexing ---------------------------------------------------------------------------------

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index with ``documents``."""
        self.lexical.build(documents)
        self._documents = {}
        self._vectors = {}
        self._summaries = {}
        self._actions = ActionWords()
        self._index(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index more documents; a known name is replaced."""
        self.lexical.add(documents)
        self._index(documents)

    def remove(self, names: Collection[str]) -> None:
        """Drop the documents with these names; unknown names are ignored."""
        self.lexical.remove(names)
        for name in names:
            removed = self._documents.pop(name, None)
            if removed is not None:
                self._actions.remove([removed])
            self._vectors.pop(name, None)
            self._summaries.pop(name, None)
        self._matrix = self._summary_matrix = None

    def __len__(self) -> int:
        return len(self._documents)

    def _index(self, documents: Sequence[ToolDocument]) -> None:
        vectors, summaries = self._vectors_of(documents)
        self.store.save()
        for document, vector, summary in zip(documents, vectors, summaries, strict=True):
            replaced = self._documents.pop(document.name, None)  # it moves to the end
            if replaced is not None:
                self._actions.remove([replaced])
            self._documents[document.name] = document
            self._actions.add([document])
            self._vectors[document.name] = vector
            self._summaries[document.name] = summary
        self._matrix = self._summary_matrix = None

    def _vectors_of(self, documents: Sequence[ToolDocument]) -> tuple[Vectors, Vectors]:
        """The vectors of ``documents``' whole texts and of their summaries, embedding (and
        caching) those not cached yet."""
        texts = [(embedded_text(document), summary_text(document)) for document in documents]
        keys = [
            (content_key(self.encoder.key, whole), content_key(self.encoder.key, summary))
            for whole, summary in texts
        ]
        missing = set(self.store.missing([key for pair in keys for key in pair]))
        if missing:
            # One group a tool, so the progress bar and ``documents_embedded`` count tools.
            groups: list[dict[bytes, str]] = []
            queued: set[bytes] = set()
            for pair_texts, pair_keys in zip(texts, keys, strict=True):
                group = {
                    key: text
                    for key, text in zip(pair_keys, pair_texts, strict=True)
                    if key in missing and key not in queued
                }
                if group:
                    groups.append(group)
                    queued.update(group)
            self._embed(groups)
        return (
            self.store.vectors([whole for whole, _ in keys]),
            self.store.vectors([summary for _, summary in keys]),
        )

    def _embed(self, groups: list[dict[bytes, str]]) -> None:
        """Embed and cache the texts of ``groups`` (each a tool's texts not cached yet, by
        key)."""
        # Longest first, so the texts of each call are of about the same lengths (the model
        # sorts a call's texts by word pieces itself, and pads each batch to its longest).
        groups = sorted(groups, key=lambda group: -max(map(len, group.values())))
        bar = self._progress(len(groups))
        try:
            for start in range(0, len(groups), _BATCH * 4):
                chunk = groups[start : start + _BATCH * 4]
                keys = [key for group in chunk for key in group]
                vectors = self.encoder.encode(
                    [text for group in chunk for text in group.values()],
                    max_tokens=DOCUMENT_MAX_TOKENS,
                    batch_size=_BATCH,
                    parallel=True,
                )
                self.store.put(keys, vectors)
                self.documents_embedded += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()

    @staticmethod
    def _progress(total: int) -> _Progress | None:
        """A progress bar on stderr for a large first embedding on a terminal, else ``None``."""
        if total < PROGRESS_MIN_TOOLS or not sys.stderr.isatty():
            return None
        from tqdm import tqdm  # type: ignore[import-untyped]

        bar = tqdm(total=total, desc="hybrid: embedding tools", unit="tool", file=sys.stderr)
        return cast(_Progress, bar)

    def _matrices_now(self) -> tuple[list[str], Vectors, Vectors]:
        """The names of the indexed tools, in order, and their vectors, one row each: of their
        whole texts, and of their summaries."""
        if self._matrix is None or self._summary_matrix is None:
            self._names = list(self._documents)
            self._positions = {name: index for index, name in enumerate(self._names)}
            self._matrix = self._stacked(self._vectors)
            self._summary_matrix = self._stacked(self._summaries)
        return self._names, self._matrix, self._summary_matrix

    def _stacked(self, vectors: dict[str, Vectors]) -> Vectors:
        if not self._names:
            return np.zeros((0, self.encoder.dimension), dtype=np.float32)
        return np.stack([vectors[name] for name in self._names])

    # Searching --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        """At most ``limit`` hits for ``query``, best first: :meth:`ranked` less the tools less
        similar to the query than ``min_similarity``, and none at all when no tool is at least
        ``no_match_below`` similar to it (``no_match_below_request`` for a request, or a
        shorter query that :func:`reads_as_sentence`; a tool the query names exactly stays) or, with
        ``absent_service_no_match``, when the query names a service nobody has
        (:meth:`names_absent_service`). A query certainly in another language than English
        (:func:`~hermes_core.search.query_language`) gets the lexical side's answer: the model
        reads English, so its similarity to such a query says nothing, and its thresholds
        would drop what the lexical side's translation found."""
        if limit <= 0:
            return []
        if query_language(query, certain=True) != "en":
            return self.lexical.search(query, limit, admission, extra)
        if self.settings.absent_service_no_match and self.names_absent_service(
            query, admission, extra
        ):
            return []
        tools = self.ranked(query, admission, extra, depth=limit)
        if not tools:
            return []
        settings = self.settings
        floor = settings.min_similarity
        text = query.strip()
        keyword = self._is_keyword(text) and not reads_as_sentence(text)
        no_match = settings.no_match_below if keyword else settings.no_match_below_request
        if not tools[0].exact and max(t.similarity for t in tools) < no_match:
            return []
        hits: list[SearchHit] = []
        for tool in tools:
            if tool.exact or tool.similarity >= floor:
                hits.append(SearchHit(tool.name, tool.score, tool.matched_tokens))
                if len(hits) == limit:
                    break
        return hits

    def names_absent_service(
        self, query: str, admission: Admission = "off", extra: Sequence[ToolDocument] = ()
    ) -> bool:
        """Whether ``query`` reads ``<service> <action> <object>`` for a service that no tool
        (nor any of ``extra``) has (:func:`~hermes_search_hybrid.absent.asks_for_absent_service`
        over the lexical side, with its ``candidates`` best hits under ``admission``). Such a
        query cannot name a tool exactly, since no tool holds its first word."""
        return asks_for_absent_service(
            query,
            self.lexical,
            self._actions,
            admission=admission,
            extra=extra,
            candidates=self.settings.candidates,
        )

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """The lexical side's answer: the words of ``query`` none of ``hits`` holds. A tool found
        only by similarity holds none, so a word naming a service nobody has is still reported
        (the similarity of "quickbooks create invoice" to Square's ``CreateInvoice`` is high)."""
        return self.lexical.unmatched_words(query, hits, extra)

    def ranked(
        self,
        query: str,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
        *,
        depth: int = 0,
    ) -> list[RankedTool]:
        """Every candidate for ``query``, best first, with no threshold: the lexical side's best
        ``max(candidates, depth)`` hits (under ``admission``, with ``extra``) and as many of the
        tools most similar to the query, fused with the dense weight of :meth:`_dense_weight`; a
        tool the query names exactly comes first. A keyword query (at most
        ``keyword_max_words`` words) is ranked by its similarity to the tools' summaries, a
        longer one by its similarity to their whole texts; each tool's ``similarity``, which the
        thresholds of :meth:`search` compare, is to its whole text."""
        text = query.strip()
        if not text:
            return []
        count = max(self.settings.candidates, depth)
        lexical = {hit.name: hit for hit in self.lexical.search(query, count, admission, extra)}
        keyword = self._is_keyword(text)
        names, whole, summaries = self._matrices_now()
        if extra:
            names = [*names, *(document.name for document in extra)]
            extra_whole, extra_summaries = self._vectors_of(extra)
            whole = np.concatenate([whole, extra_whole])
            if keyword:
                summaries = np.concatenate([summaries, extra_summaries])
        if not names:
            return []
        queries = self._query_vectors(text)
        similarity = self.encoder.similarities(whole, queries)
        ranking = self.encoder.similarities(summaries, queries) if keyword else similarity
        position = self._positions if not extra else {name: i for i, name in enumerate(names)}
        most_similar = self._most_similar(names, ranking, count)
        if keyword:  # the thresholds of search() read the most similar whole text
            most_similar += self._most_similar(names, similarity, 1)
        candidates = [name for name in dict.fromkeys([*lexical, *most_similar]) if name in position]
        cosine = np.array([ranking[position[name]] for name in candidates], dtype=np.float64)
        lexical_scores = np.array(
            [lexical[name].score if name in lexical else np.nan for name in candidates],
            dtype=np.float64,
        )
        fused = blend(lexical_scores, cosine, self._dense_weight(query, extra, keyword=keyword))
        wanted = text.lower()
        tools = [
            RankedTool(
                name=name,
                score=float(fused[index]),
                similarity=float(similarity[position[name]]),
                exact=wanted in _exact_keys(name),
                matched_tokens=lexical[name].matched_tokens if name in lexical else (),
            )
            for index, name in enumerate(candidates)
        ]
        order = sorted(range(len(tools)), key=lambda i: (not tools[i].exact, -tools[i].score, i))
        return [tools[index] for index in order]

    def _is_keyword(self, query: str) -> bool:
        """Whether ``query`` is a keyword query: at most ``keyword_max_words`` words (never
        when that is 0)."""
        limit = self.settings.keyword_max_words
        return limit > 0 and word_count(query) <= limit

    def _dense_weight(self, query: str, extra: Sequence[ToolDocument], *, keyword: bool) -> float:
        """``dense_weight_keyword`` for a ``keyword`` query; for a request,
        ``dense_weight_unmatched`` when a word of it is in no tool (the lexical side's answer,
        with no hits), else ``dense_weight``."""
        settings = self.settings
        if keyword:
            return settings.dense_weight_keyword
        if settings.dense_weight_unmatched == settings.dense_weight:
            return settings.dense_weight
        unknown = self.lexical.unmatched_words(query, [], extra)
        return settings.dense_weight_unmatched if unknown else settings.dense_weight

    def _query_vectors(self, text: str) -> Vectors:
        """The vectors of a query and of its sentences (:func:`query_texts`), one row each; the
        last few queries' are kept, since a model often repeats a query."""
        vectors = self._queries.pop(text, None)
        if vectors is None:
            vectors = self.encoder.encode(query_texts(text), max_tokens=QUERY_MAX_TOKENS)
            self.queries_embedded += 1
        self._queries[text] = vectors
        while len(self._queries) > self.kept_queries:
            self._queries.pop(next(iter(self._queries)))
        return vectors

    @staticmethod
    def _most_similar(names: list[str], similarity: Vectors, count: int) -> list[str]:
        if count >= len(names):
            top = np.argsort(-similarity, kind="stable")
        else:
            part = np.argpartition(-similarity, count)[:count]
            top = part[np.argsort(-similarity[part], kind="stable")]
        return [names[index] for index in top]

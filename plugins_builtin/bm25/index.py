"""The BM25 index: BM25F over numpy postings, with incremental add and remove.

Scoring (BM25F, one normalization per field): a document's pseudo-frequency of token t is

    x(t, d) = Σ_f w_f · tf_f(t, d) / (1 - b + b · len_f(d) / avglen_f)

over the fields of :mod:`hermes_core.search.documents` with their weights w_f, and its score
for a query is Σ_t idf(t) · (k1 + 1) · x / (k1 + x), with k1 = 1.5, b = 0.75 and
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (a token repeated in the query counts again). A long
description therefore weakens the description's matches only, never the name's. N, df and the
average field lengths are always those of the live documents (plus a query's ``extra``
candidates), exactly. Each document adds its term scores in query-token order whichever path
scores it, so scores are bit-identical across paths and across incremental updates. With one
field of weight 1 this is Okapi BM25.

Layout: every document gets a *slot*, increasing in insertion (registry) order. Documents added
together form a *segment* holding term-major postings (slot ids as int32, each field's term
frequency as uint16) and the same data doc-major, so a removal can subtract its document
frequencies. A token's pseudo-frequencies are computed from its postings on its first query
after a change and kept until the next change. Removing marks slots dead; small trailing
segments are merged as they accumulate (so a query visits few segments), and the whole index is
rebuilt once dead slots outnumber live ones.

A query never loops over documents in Python:

- ``strict``/``lenient``: the candidates are the holders of the rarest token; each other token's
  postings are searched for them (``searchsorted``), so the cost follows the rarest token.
- ``off``: keyword queries are pruned (MaxScore): the holders of the rarest tokens are scored
  first, and the search stops once the other tokens' summed weights cannot lift any other
  document into the top ``limit``. Otherwise one dense pass over the concatenated postings
  (``np.bincount``).
- Top-k by ``np.partition``, then a stable sort that keeps registry order for ties.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress

import numpy as np
import numpy.typing as npt

from hermes_core import Admission, SearchHit, ToolDocument

from .admission import coverage_floor, exact_name_keys, required_tokens
from .analysis import QueryAnalysis, analyze_query, unmatched_in
from .equivalents import (
    EQUIVALENT_WEIGHT,
    EQUIVALENTS,
    Equivalents,
    equivalent_words,
    expansion_token,
)
from .fields import FIELD_WEIGHTS, FIELDS, document_fields, extra_document_fields
from .tokenize import tokenize

__all__ = ["K1", "B", "BM25Index", "bm25_idf"]

K1 = 1.5
B = 0.75

IntArray = npt.NDArray[np.int64]
SlotArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
CountArray = npt.NDArray[np.uint16]
_FIELD_COUNT = len(FIELDS)
_MAX_COUNT = np.iinfo(np.uint16).max
_NO_LENGTHS: FloatArray = np.zeros((0, _FIELD_COUNT), dtype=np.float64)
_NO_SLOTS: SlotArray = np.zeros(0, dtype=np.int32)
_NO_SCORES: FloatArray = np.zeros(0, dtype=np.float64)
_NO_FLAGS: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
NAME_BOOST = 0.3
"""Name coverage: a score is multiplied by ``1 + NAME_BOOST * c``, ``c`` the share of the tool's
distinct name tokens that the query holds (its words or their equivalents)."""
NAMED_GROUP_SHARE = 0.7
"""A query names a group (server) when it holds every token of the group's name and, for each,
at least this share of the tools holding it belong to the group."""
_PRUNE = True
"""Whether admission ``off`` prunes with MaxScore (tests turn it off to compare)."""
_PRUNE_MAX_TOKENS = 8
_DENSE_SHARE = 0.25
"""Past this share of all documents as candidates, pruning gives way to the dense pass."""


def bm25_idf(document_count: int, document_frequency: int) -> float:
    """The spec's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); always positive."""
    return math.log1p((document_count - document_frequency + 0.5) / (document_frequency + 0.5))


BoolArray = npt.NDArray[np.bool_]
Run = tuple[SlotArray, FloatArray, BoolArray]
"""Slot-sorted postings of one token: the slots, their saturated pseudo-frequencies
``x / (x + k1)``, and whether the token is in each document's name."""
_NAME = 0
"""The column of the ``name`` field in :data:`~.fields.FIELDS`."""


@dataclass
class _Segment:
    """Postings of the documents in slots ``first_slot .. first_slot + size - 1``."""

    first_slot: int
    size: int
    # term-major: postings of term t are slots[offsets[t]:offsets[t + 1]] (t < len(offsets) - 1)
    offsets: IntArray
    slots: SlotArray
    counts: CountArray
    """Per posting, the term's frequency in each field (columns in FIELDS order)."""
    # doc-major: the distinct terms of local document d are doc_terms[doc_offsets[d]:...]
    doc_offsets: IntArray
    doc_terms: IntArray
    doc_counts: CountArray
    dead: int = 0
    normalized: dict[int, Run] = field(default_factory=dict)
    """Live postings and saturated pseudo-frequencies by term, valid for
    ``normalized_version`` of the index."""
    expanded: dict[str, Run] = field(default_factory=dict)
    """Merged runs of expansion tokens, valid for ``normalized_version`` too."""
    normalized_version: int = -1

    def postings(self, term: int) -> tuple[SlotArray, CountArray] | None:
        if term >= len(self.offsets) - 1:
            return None
        start, end = int(self.offsets[term]), int(self.offsets[term + 1])
        if start == end:
            return None
        return self.slots[start:end], self.counts[start:end]


def _segment_from_pairs(
    first_slot: int,
    size: int,
    local_docs: IntArray,
    terms: IntArray,
    counts: CountArray,
    vocabulary_size: int,
) -> _Segment:
    """A segment from doc-major (local doc, term, field counts) rows sorted by doc then term."""
    doc_counts = np.bincount(local_docs, minlength=size)
    doc_offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(doc_counts, out=doc_offsets[1:])
    order = np.argsort(terms, kind="stable")  # stable: postings stay in slot order
    term_counts = np.bincount(terms, minlength=vocabulary_size)
    offsets = np.zeros(vocabulary_size + 1, dtype=np.int64)
    np.cumsum(term_counts, out=offsets[1:])
    return _Segment(
        first_slot=first_slot,
        size=size,
        offsets=offsets,
        slots=(local_docs[order] + first_slot).astype(np.int32),
        counts=counts[order],
        doc_offsets=doc_offsets,
        doc_terms=terms,
        doc_counts=counts,
    )


class BM25Index:
    """BM25F search over tool documents; implements
    :class:`~hermes_core.search.backend.SearchBackend`.

    ``build`` indexes a catalog; ``add``/``remove`` change it incrementally (one server's tools)
    and leave every score exactly as a full rebuild would give it. ``field_weights`` maps each
    field of :data:`~hermes_core.search.documents.FIELDS` to its weight (a field of weight 0 is
    not indexed); ``equivalents`` is the lexical equivalence table queries are expanded with.
    """

    def __init__(
        self,
        documents: Sequence[ToolDocument] = (),
        *,
        compact_min_dead: int = 1024,
        field_weights: Mapping[str, float] = FIELD_WEIGHTS,
        equivalents: Equivalents = EQUIVALENTS,
    ) -> None:
        # Dead slots cost memory and a filter per query; past this many (and more dead than
        # live) the index rebuilds itself from the live documents.
        self._compact_min_dead = compact_min_dead
        self._weights = np.array([float(field_weights[name]) for name in FIELDS])
        self._equivalents = equivalents
        self._version = 0
        """Changes with every build, add and remove: the key of the cached query analysis and
        of the pseudo-frequencies."""
        self.build(documents)

    # -- building ------------------------------------------------------------------------------

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index with ``documents`` (a repeated name keeps its last copy)."""
        self._vocabulary: dict[str, int] = {}
        self._document_frequency: IntArray = np.zeros(0, dtype=np.int64)
        self._lengths: FloatArray = np.zeros((0, _FIELD_COUNT), dtype=np.float64)
        self._total_lengths: FloatArray = np.zeros(_FIELD_COUNT, dtype=np.float64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._documents: list[ToolDocument | None] = []
        self._slot_of: dict[str, int] = {}
        self._exact: dict[str, list[int]] = {}
        self._segments: list[_Segment] = []
        self._live = 0
        self._name_sizes: FloatArray = np.zeros(0, dtype=np.float64)
        """How many distinct tokens each slot's name has (the name coverage's denominator)."""
        # Groups: an id per group name, each slot's group id, live members and name tokens, and
        # for each token the groups whose names hold it.
        self._group_ids: dict[str, int] = {}
        self._slot_groups: IntArray = np.zeros(0, dtype=np.int64)
        self._group_sizes: list[int] = []
        self._group_tokens: list[tuple[str, ...]] = []
        self._group_names: list[str] = []
        self._groups_of_token: dict[str, list[int]] = {}
        self._last_analysis: tuple[tuple[object, ...], QueryAnalysis] | None = None
        self._factors: tuple[int, FloatArray] | None = None
        self._version += 1
        self.add(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index ``documents`` after the existing ones; a name already indexed is replaced (its
        new copy takes the new registry position)."""
        self._version += 1
        latest: dict[str, ToolDocument] = {}
        for document in documents:
            latest.pop(document.name, None)
            latest[document.name] = document
        if not latest:
            return
        replaced = [name for name in latest if name in self._slot_of]
        if replaced:
            self._remove_slots([self._slot_of.pop(name) for name in replaced])
        batch = list(latest.values())
        first_slot = len(self._documents)
        segment, lengths = self._index_batch(first_slot, batch)
        self._documents.extend(batch)
        self._lengths = np.concatenate([self._lengths, lengths])
        self._alive = np.concatenate([self._alive, np.ones(len(batch), dtype=bool)])
        for offset, document in enumerate(batch):
            slot = first_slot + offset
            self._slot_of[document.name] = slot
            for key in exact_name_keys(document):
                self._exact.setdefault(key, []).append(slot)
        groups = [self._group_id(document.group) for document in batch]
        for group in groups:
            self._group_sizes[group] += 1
        self._slot_groups = np.concatenate([self._slot_groups, np.asarray(groups, dtype=np.int64)])
        self._live += len(batch)
        self._total_lengths += lengths.sum(axis=0)
        self._segments.append(segment)
        self._merge_small_segments()

    def _group_id(self, group: str) -> int:
        found = self._group_ids.get(group)
        if found is None:
            found = self._group_ids[group] = len(self._group_sizes)
            self._group_sizes.append(0)
            self._group_names.append(group)
            named = group and group != ToolDocument.OTHER_GROUP
            tokens = tuple(dict.fromkeys(tokenize(group))) if named else ()
            self._group_tokens.append(tokens)
            for token in tokens:
                self._groups_of_token.setdefault(token, []).append(found)
        return found

    def _term_ids(self, tokens: list[str]) -> list[int]:
        vocabulary = self._vocabulary
        for token in dict.fromkeys(tokens):
            if token not in vocabulary:
                vocabulary[token] = len(vocabulary)
        return list(map(vocabulary.__getitem__, tokens))

    def _index_batch(
        self, first_slot: int, batch: Sequence[ToolDocument]
    ) -> tuple[_Segment, FloatArray]:
        tokens, fields, counts, lengths = self._field_tokens(batch)
        flat_terms = np.asarray(self._term_ids(tokens), dtype=np.int64)
        vocabulary_size = len(self._vocabulary)
        local_docs = np.repeat(np.arange(len(batch), dtype=np.int64), counts)
        keys, inverse = np.unique(local_docs * vocabulary_size + flat_terms, return_inverse=True)
        pair_docs = keys // max(vocabulary_size, 1)
        pair_terms = keys % max(vocabulary_size, 1)
        field_counts = np.bincount(
            inverse * _FIELD_COUNT + fields, minlength=len(keys) * _FIELD_COUNT
        ).reshape(len(keys), _FIELD_COUNT)
        segment = _segment_from_pairs(
            first_slot,
            len(batch),
            pair_docs,
            pair_terms,
            np.minimum(field_counts, _MAX_COUNT).astype(np.uint16),
            vocabulary_size,
        )
        in_name = field_counts[:, _NAME] > 0
        # At least 1, so the coverage needs no guard (a name without tokens covers nothing).
        name_sizes = np.maximum(np.bincount(pair_docs[in_name], minlength=len(batch)), 1)
        name_sizes = name_sizes.astype(np.float64)
        self._name_sizes = np.concatenate([self._name_sizes, name_sizes])
        frequency = self._document_frequency
        if len(frequency) < vocabulary_size:
            frequency = np.concatenate(
                [frequency, np.zeros(vocabulary_size - len(frequency), dtype=np.int64)]
            )
        frequency += np.bincount(pair_terms, minlength=vocabulary_size)
        self._document_frequency = frequency
        return segment, lengths

    def _field_tokens(
        self, batch: Sequence[ToolDocument]
    ) -> tuple[list[str], IntArray, IntArray, FloatArray]:
        """The tokens of ``batch``, document after document, of the fields that count; each
        token's field; how many tokens each document has; and each document's field lengths."""
        tokens: list[str] = []
        fields: list[int] = []
        counts = np.zeros(len(batch), dtype=np.int64)
        lengths = np.zeros((len(batch), _FIELD_COUNT), dtype=np.float64)
        indexed = [bool(weight) for weight in self._weights]
        for position, document in enumerate(batch):
            total = 0
            for column, field_tokens in enumerate(document_fields(document)):
                if field_tokens and indexed[column]:
                    tokens.extend(field_tokens)
                    fields.extend([column] * len(field_tokens))
                    total += len(field_tokens)
                    lengths[position, column] = len(field_tokens)
            counts[position] = total
        return tokens, np.asarray(fields, dtype=np.int64), counts, lengths

    # -- removing ------------------------------------------------------------------------------

    def remove(self, names: Collection[str]) -> None:
        """Drop the documents named in ``names``; unknown names are ignored."""
        slots = [self._slot_of.pop(name) for name in set(names) if name in self._slot_of]
        self._version += 1
        if slots:
            self._remove_slots(slots)
            self._compact_if_sparse()

    def _remove_slots(self, slots: Sequence[int]) -> None:
        for slot in slots:
            segment = self._segment_of(slot)
            local = slot - segment.first_slot
            start, end = segment.doc_offsets[local], segment.doc_offsets[local + 1]
            self._document_frequency[segment.doc_terms[start:end]] -= 1
            segment.dead += 1
            self._alive[slot] = False
            self._live -= 1
            self._group_sizes[int(self._slot_groups[slot])] -= 1
            self._total_lengths -= self._lengths[slot]
            document = self._documents[slot]
            self._documents[slot] = None
            if document is not None:
                for key in exact_name_keys(document):
                    holders = self._exact[key]
                    holders.remove(slot)
                    if not holders:
                        del self._exact[key]

    def _segment_of(self, slot: int) -> _Segment:
        for segment in self._segments:
            if segment.first_slot <= slot < segment.first_slot + segment.size:
                return segment
        raise KeyError(slot)  # pragma: no cover - slots always belong to a segment

    def _compact_if_sparse(self) -> None:
        dead = len(self._documents) - self._live
        if dead >= self._compact_min_dead and dead > self._live:
            self.build([document for document in self._documents if document is not None])

    def _merge_small_segments(self) -> None:
        # Merge the last two segments while the newer is at least half the older: the count of
        # segments stays logarithmic, and adding one server to a large index stays cheap.
        segments = self._segments
        while len(segments) >= 2 and segments[-1].size * 2 >= segments[-2].size:
            newer = segments.pop()
            older = segments.pop()
            segments.append(self._merged(older, newer))

    def _merged(self, older: _Segment, newer: _Segment) -> _Segment:
        size = older.size + newer.size
        docs: list[IntArray] = []
        terms: list[IntArray] = []
        counts: list[CountArray] = []
        for segment in (older, newer):
            per_doc = np.diff(segment.doc_offsets)
            local = np.repeat(np.arange(segment.size, dtype=np.int64), per_doc)
            keep = self._alive[local + segment.first_slot]
            docs.append(local[keep] + (segment.first_slot - older.first_slot))
            terms.append(segment.doc_terms[keep])
            counts.append(segment.doc_counts[keep])
        # Dead slots keep their place, without postings, until the next full compaction; so the
        # merged segment needs no liveness filter until its next removal.
        return _segment_from_pairs(
            older.first_slot,
            size,
            np.concatenate(docs),
            np.concatenate(terms),
            np.concatenate(counts),
            len(self._vocabulary),
        )

    # -- searching -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._live

    def __contains__(self, name: object) -> bool:
        return name in self._slot_of

    @property
    def names(self) -> list[str]:
        """The indexed names in registry order."""
        return [document.name for document in self._documents if document is not None]

    def _length_factors(self) -> FloatArray:
        """:func:`_length_factors` of the live documents, computed once per version."""
        cached = self._factors
        if cached is None or cached[0] != self._version:
            cached = self._factors = (
                self._version,
                _length_factors(self._total_lengths, max(self._live, 1)),
            )
        return cached[1]

    def document_frequency(self, token: str) -> int:
        """How many indexed documents contain ``token`` (an already stemmed token)."""
        term = self._vocabulary.get(token)
        return 0 if term is None else int(self._document_frequency[term])

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        """At most ``limit`` hits for ``query``, best first; see the module docstring."""
        analysis = self.analyze(query, extra)
        return self.search_tokens(
            analysis.tokens,
            limit,
            admission,
            extra=extra,
            exact_query=query,
            expanded=analysis.expanded,
        )

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """The words of ``query`` that none of ``hits`` answers (holds it, one of its compounds
        or equivalents); with no hits, the words no document (nor any of ``extra``) holds."""
        return unmatched_in(self.analyze(query, extra), [hit.matched_tokens for hit in hits])

    def analyze(self, query: str, extra: Sequence[ToolDocument] = ()) -> QueryAnalysis:
        """``query``'s tokens and unmatched words against this index and ``extra``
        (:mod:`hermes_core.search.analysis`); the last answer is kept, as ``tool_search`` asks
        for the hits and the unmatched words of each query."""
        key = (query, tuple(document.name for document in extra), self._version)
        if self._last_analysis is not None and self._last_analysis[0] == key:
            return self._last_analysis[1]
        extra_tokens: set[str] = set()
        for document in extra:
            for field_tokens in extra_document_fields(document):
                extra_tokens.update(field_tokens)

        def known(token: str) -> bool:
            return token in extra_tokens or self.document_frequency(token) > 0

        analysis = analyze_query(query, known, self._equivalents)
        self._last_analysis = (key, analysis)
        return analysis

    def search_tokens(
        self,
        tokens: Sequence[str],
        limit: int,
        admission: Admission,
        *,
        extra: Sequence[ToolDocument] = (),
        exact_query: str | None = None,
        expanded: Sequence[str] = (),
    ) -> list[SearchHit]:
        """Rank for already analyzed ``tokens``, and the expansion tokens of ``expanded`` (their
        equivalents, at :data:`~.equivalents.EQUIVALENT_WEIGHT`, never deciding admission);
        ``exact_query`` is the raw text checked for the exact-name rule (``None``: none)."""
        if limit <= 0:
            return []
        query_terms: dict[str, float] = {}
        for token in tokens:
            query_terms[token] = query_terms.get(token, 0.0) + 1.0
        admitting = list(query_terms)
        expansions = {
            expansion_token(token): words
            for token in expanded
            if (words := equivalent_words(self._equivalents, token))
        }
        component_terms = {word for words in expansions.values() for word in words}

        extra_documents: list[ToolDocument] = []
        extra_postings: dict[str, tuple[SlotArray, CountArray]] = {}
        extra_lengths = _NO_LENGTHS
        extra_name_sizes = _NO_SCORES
        if extra:
            unique_extra = {document.name: document for document in extra}
            extra_documents = [d for d in unique_extra.values() if d.name not in self._slot_of]
            extra_postings, extra_lengths = self._extra_postings(
                extra_documents, query_terms.keys() | component_terms
            )
            extra_name_sizes = np.asarray(
                [max(len(set(extra_document_fields(d)[_NAME])), 1) for d in extra_documents],
                dtype=np.float64,
            )
        slot_count = len(self._documents)
        document_count = self._live + len(extra_documents)
        if document_count == 0:
            return []

        def frequency(token: str) -> int:
            extra_hits = extra_postings.get(token)
            return self.document_frequency(token) + (
                0 if extra_hits is None else len(extra_hits[0])
            )

        frequencies = {token: frequency(token) for token in query_terms}
        known = [token for token, df in frequencies.items() if df > 0]
        weights = {
            token: query_terms[token] * bm25_idf(document_count, frequencies[token]) * (K1 + 1.0)
            for token in known
        }
        # An expansion token's runs hold its equivalents' term scores, already weighted: its
        # weight multiplies by 1, and its bound (what it can add at most) is their sum.
        bounds = dict(weights)
        component_weights: dict[str, float] = {}
        for expansion, words in expansions.items():
            bound = 0.0
            for word in words:
                df = frequency(word)
                if df:
                    weight = EQUIVALENT_WEIGHT * bm25_idf(document_count, df) * (K1 + 1.0)
                    component_weights[word] = weight
                    bound += weight
            if bound:
                known.append(expansion)
                weights[expansion] = 1.0
                bounds[expansion] = bound
        exact = self._exact_slots(exact_query, extra_documents, slot_count)
        ranking = _Ranking(
            self,
            extra_postings,
            extra_lengths,
            document_count,
            {expansion: expansions[expansion] for expansion in known if expansion in expansions},
            component_weights,
        )
        named = self._named_groups(known, frequencies, extra_documents)
        if admission == "off":
            # Pruning pays for keyword queries; in a long request no few tokens outweigh the
            # rest, so it would only rescore growing candidate sets. A named group puts its
            # tools first however they score: that needs every candidate.
            prune = _PRUNE and len(known) <= _PRUNE_MAX_TOKENS and not named
            score_off = ranking.score_top if prune else ranking.score_all
            candidates, scores, name_hits, admitted, memberships = score_off(
                known, weights, bounds, exact, limit - len(exact)
            )
        else:
            admission_frequencies = {token: frequencies[token] for token in admitting}
            required = required_tokens(admission, admission_frequencies, document_count)
            if any(frequencies[token] == 0 for token in required):
                required = frozenset()  # a token no tool has: nothing but an exact name passes
            known_admitting = sum(1 for token in admitting if frequencies[token] > 0)
            candidates, scores, name_hits, admitted, memberships = ranking.score_holders(
                known, weights, required, coverage_floor(known_admitting, admission), exact
            )
        sizes = self._name_sizes_of(candidates, extra_name_sizes, slot_count)
        boosted = scores * (1.0 + NAME_BOOST * (name_hits / sizes))
        first = self._in_groups(candidates, named, extra_documents, slot_count) if named else None
        positions = _top(candidates, boosted, admitted, limit - len(exact), first)
        final = boosted[positions]
        if exact:
            exact_positions = candidates.searchsorted(np.asarray(exact, dtype=np.int32))
            final = np.concatenate([boosted[exact_positions], final])[:limit]
            positions = np.concatenate([exact_positions, positions])[:limit]
        found_tokens, columns = memberships(positions)
        return [
            SearchHit(
                name=self._name_at(slot, extra_documents, slot_count),
                score=score,
                matched_tokens=tuple(compress(found_tokens, column)),
            )
            for slot, score, column in zip(
                candidates[positions].tolist(), final.tolist(), columns, strict=True
            )
        ]

    def _named_groups(
        self,
        tokens: Sequence[str],
        frequencies: Mapping[str, int],
        extra: Sequence[ToolDocument],
    ) -> frozenset[str]:
        """The groups the query names: it holds every token of the group's name, and for each
        at least :data:`NAMED_GROUP_SHARE` of its holders are the group's tools."""
        held = set(tokens)
        sizes: dict[str, int] = {}
        names: dict[str, tuple[str, ...]] = {}
        # A group is named only if it holds NAMED_GROUP_SHARE of each of its tokens' holders:
        # a token held by more tools than the largest group can name none (so "aws" in a
        # catalog of many aws_* servers costs nothing).
        largest = max(self._group_sizes, default=0) / NAMED_GROUP_SHARE
        for token in held:
            if frequencies.get(token, 0) > largest:
                continue
            for group_id in self._groups_of_token.get(token, ()):
                if self._group_sizes[group_id]:
                    group = self._group_names[group_id]
                    sizes[group] = self._group_sizes[group_id]
                    names[group] = self._group_tokens[group_id]
        for document in extra:
            group = document.group
            if group and group != ToolDocument.OTHER_GROUP:
                if group not in names:
                    known_id = self._group_ids.get(group)
                    names[group] = (
                        self._group_tokens[known_id]
                        if known_id is not None
                        else tuple(dict.fromkeys(tokenize(group)))
                    )
                    sizes[group] = self._group_sizes[known_id] if known_id is not None else 0
                sizes[group] += 1
        return frozenset(
            group
            for group, group_tokens in names.items()
            if group_tokens
            and all(
                token in held and sizes[group] >= NAMED_GROUP_SHARE * frequencies.get(token, 0)
                for token in group_tokens
            )
        )

    def _in_groups(
        self,
        slots: SlotArray,
        groups: frozenset[str],
        extra: Sequence[ToolDocument],
        slot_count: int,
    ) -> BoolArray:
        """Which of ``slots`` (index slots, then extra candidates) belong to ``groups``."""
        ids = [self._group_ids[g] for g in groups if g in self._group_ids]
        if not extra:
            groups_of_slots = self._slot_groups[slots]
            if len(ids) == 1:
                only: BoolArray = groups_of_slots == ids[0]
                return only
            return np.isin(groups_of_slots, ids)
        if not len(slots):
            return np.zeros(0, dtype=bool)
        local = slots < slot_count
        groups_of = self._slot_groups[slots[local]]
        marked = np.zeros(len(slots), dtype=bool)
        if len(ids) == 1:
            marked[local] = groups_of == ids[0]
        elif ids:
            marked[local] = np.isin(groups_of, ids)
        for position in np.flatnonzero(~local).tolist():
            marked[position] = extra[int(slots[position]) - slot_count].group in groups
        return marked

    def _name_sizes_of(
        self, slots: SlotArray, extra_sizes: FloatArray, slot_count: int
    ) -> FloatArray:
        """How many distinct tokens the names of ``slots`` (index slots, then extra
        candidates) have."""
        if not len(extra_sizes):
            return self._name_sizes[slots]
        sizes = np.empty(len(slots), dtype=np.float64)
        local = slots < slot_count
        sizes[local] = self._name_sizes[slots[local]]
        sizes[~local] = extra_sizes[slots[~local] - slot_count]
        return sizes

    def _extra_postings(
        self, documents: Sequence[ToolDocument], query_terms: Collection[str]
    ) -> tuple[dict[str, tuple[SlotArray, CountArray]], FloatArray]:
        """Postings of the query's own tokens in the extra candidates, which take the slots
        after the index's; and the candidates' field lengths. Nothing is added to the index."""
        first_slot = len(self._documents)
        lengths = np.zeros((len(documents), _FIELD_COUNT), dtype=np.float64)
        found: dict[str, tuple[list[int], list[list[int]]]] = {}
        indexed = [bool(weight) for weight in self._weights]
        for local, document in enumerate(documents):
            counts: dict[str, list[int]] = {}
            for column, field_tokens in enumerate(extra_document_fields(document)):
                if not indexed[column]:
                    continue
                lengths[local, column] = len(field_tokens)
                for token in field_tokens:
                    if token in query_terms:
                        counts.setdefault(token, [0] * _FIELD_COUNT)[column] += 1
            for token, row in counts.items():
                slots, rows = found.setdefault(token, ([], []))
                slots.append(first_slot + local)
                rows.append(row)
        postings = {
            token: (
                np.asarray(slots, dtype=np.int32),
                np.minimum(np.asarray(rows), _MAX_COUNT).astype(np.uint16),
            )
            for token, (slots, rows) in found.items()
        }
        return postings, lengths

    def _exact_slots(
        self, query: str | None, extra: Sequence[ToolDocument], slot_count: int
    ) -> list[int]:
        if query is None:
            return []
        key = query.strip().lower()
        slots = list(self._exact.get(key, ()))
        slots.sort()
        slots.extend(
            slot_count + index
            for index, document in enumerate(extra)
            if key in exact_name_keys(document)
        )
        return slots

    def _name_at(self, slot: int, extra: Sequence[ToolDocument], slot_count: int) -> str:
        if slot >= slot_count:
            return extra[slot - slot_count].name
        document = self._documents[slot]
        assert document is not None
        return document.name


def _lookup(runs: Sequence[SlotArray], slots: SlotArray) -> BoolArray:
    """For each run of slot-sorted postings (a row) and each of ``slots`` (a column): whether the
    slot occurs in the run. One ``searchsorted`` per run, then one comparison over the grid."""
    all_slots = np.concatenate(runs) if len(runs) > 1 else runs[0]
    positions = np.empty((len(runs), len(slots)), dtype=np.int64)
    start = 0
    for row, run_slots in enumerate(runs):
        found_at = run_slots.searchsorted(slots)
        np.minimum(found_at, len(run_slots) - 1, out=found_at)
        positions[row] = found_at + start
        start += len(run_slots)
    found: BoolArray = all_slots[positions] == slots
    return found


def _union(runs: Sequence[SlotArray]) -> SlotArray:
    """The sorted distinct slots of several slot-sorted runs (the run itself when only one)."""
    if len(runs) == 1:
        return runs[0]
    if runs:
        return np.unique(np.concatenate(runs))
    return np.zeros(0, dtype=np.int32)


def _member(sorted_slots: SlotArray, slots: SlotArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Which of ``slots`` occur in ``sorted_slots``, and where (valid where they occur)."""
    positions = sorted_slots.searchsorted(slots)
    np.minimum(positions, len(sorted_slots) - 1, out=positions)
    return sorted_slots[positions] == slots, positions


def _length_factors(totals: FloatArray, document_count: int) -> FloatArray:
    """B / avglen_f per field, or 0 for a field no document has (nothing holds it either)."""
    averages = totals / document_count
    factors: FloatArray = np.divide(B, averages, out=np.zeros_like(averages), where=averages > 0)
    return factors


def _top(
    candidates: SlotArray,
    scores: FloatArray,
    admitted: BoolArray | None,
    limit: int,
    first: BoolArray | None = None,
) -> IntArray:
    """Positions (into ``candidates``) of the ``limit`` best admitted candidates (``None``:
    all), best first; candidates ``first`` marks come before all others; equal scores keep
    registry (slot) order."""
    positions = np.arange(len(candidates)) if admitted is None else admitted.nonzero()[0]
    if limit <= 0 or not len(positions):
        return positions[:0]
    if first is None:
        return _best(candidates, scores, positions, limit)
    marked = first[positions]
    leading = _best(candidates, scores, positions[marked], limit)
    if len(leading) >= limit:
        return leading
    return np.concatenate(
        [leading, _best(candidates, scores, positions[~marked], limit - len(leading))]
    )


def _best(candidates: SlotArray, scores: FloatArray, positions: IntArray, limit: int) -> IntArray:
    """The ``limit`` best of ``positions`` by score, ties in slot order."""
    if len(positions) > 4 * limit + 64:
        # Keep everything scoring at least the limit-th best, so ties at the cut keep registry
        # order after the stable sort below.
        chosen = scores[positions]
        cut = len(chosen) - limit
        positions = positions[chosen >= np.partition(chosen, cut)[cut]]
    order = np.lexsort((candidates[positions], -scores[positions]))[:limit]
    return positions[order]


MembershipLookup = Callable[[IntArray], tuple[list[str], list[list[bool]]]]
"""For the candidates at given positions: the query's distinct tokens, and per candidate
whether it holds each."""
Scored = tuple[SlotArray, FloatArray, FloatArray, "BoolArray | None", MembershipLookup]
"""Candidates (sorted slots), their scores, how many query tokens are in each one's name,
which are admitted (``None``: all), and a lookup of the tokens each holds."""


class _Ranking:
    """One query's scoring pass over the index's segments plus the query's extra candidates.

    A run holds, per posting, the saturated pseudo-frequency ``x / (x + k1)``; a token's term
    score in a document is its query weight times that.
    """

    def __init__(
        self,
        index: BM25Index,
        extra_postings: dict[str, tuple[SlotArray, CountArray]],
        extra_lengths: FloatArray,
        document_count: int,
        expansions: Mapping[str, tuple[str, ...]] | None = None,
        component_weights: Mapping[str, float] | None = None,
    ) -> None:
        self.index = index
        self.extra_postings = extra_postings
        self.extra_lengths = extra_lengths
        self.expansions = expansions or {}
        """Each expansion token of the query and the equivalents it stands for."""
        self.component_weights = component_weights or {}
        """Each equivalent's weight: its share of an expansion token's term scores."""
        self.slot_count = len(index._documents)
        # Extra candidates change the averages for this query only: the cached runs are not
        # theirs.
        self.cached = not len(extra_lengths)
        if self.cached:
            self.length_factors = index._length_factors()
        else:
            self.length_factors = _length_factors(
                index._total_lengths + extra_lengths.sum(axis=0), document_count
            )

    def saturated(self, slots: SlotArray, counts: CountArray, lengths: FloatArray) -> FloatArray:
        """``x / (x + k1)`` per posting, ``x`` the BM25F pseudo-frequency of the module
        docstring; ``lengths`` are the postings' documents' field lengths."""
        denominators = (1.0 - B) + lengths * self.length_factors
        x: FloatArray = (counts * (self.index._weights / denominators)).sum(axis=1)
        return x / (x + K1)

    def postings(self, token: str) -> list[Run]:
        """The live postings of ``token`` (slot-sorted runs, one per segment)."""
        if token in self.expansions:
            return self._expansion_postings(token)
        found: list[Run] = []
        index = self.index
        term = index._vocabulary.get(token)
        if term is not None:
            for segment in index._segments:
                run = self._segment_run(segment, term)
                if run is not None:
                    found.append(run)
        extra = self.extra_postings.get(token)
        if extra is not None:
            slots, counts = extra
            saturated = self.saturated(slots, counts, self._lengths_of(slots))
            found.append((slots, saturated, counts[:, _NAME] > 0))
        return found

    def _expansion_postings(self, expansion: str) -> list[Run]:
        """The runs of an expansion token, one per segment (and one of the extra candidates):
        its equivalents' postings merged, each posting's weighted term scores added in the
        order of the equivalence table; cached until the index changes."""
        words = self.expansions[expansion]
        found: list[Run] = []
        for segment in self.index._segments:
            if self.cached:
                if segment.normalized_version != self.index._version:
                    segment.normalized.clear()
                    segment.expanded.clear()
                    segment.normalized_version = self.index._version
                cached = segment.expanded.get(expansion)
                if cached is not None:
                    if len(cached[0]):
                        found.append(cached)
                    continue
            parts: list[tuple[str, Run]] = []
            for word in words:
                term = self.index._vocabulary.get(word)
                if term is not None and word in self.component_weights:
                    run = self._segment_run(segment, term)
                    if run is not None:
                        parts.append((word, run))
            merged = self._merged(parts)
            if self.cached:
                segment.expanded[expansion] = merged
            if len(merged[0]):
                found.append(merged)
        extra_parts: list[tuple[str, Run]] = []
        for word in words:
            posting = self.extra_postings.get(word)
            if posting is not None and word in self.component_weights:
                slots, counts = posting
                saturated = self.saturated(slots, counts, self._lengths_of(slots))
                extra_parts.append((word, (slots, saturated, counts[:, _NAME] > 0)))
        if extra_parts:
            found.append(self._merged(extra_parts))
        return found

    def _merged(self, parts: Sequence[tuple[str, Run]]) -> Run:
        """One run of the postings of ``parts`` (an equivalent and its run each): per slot, the
        sum of each equivalent's weight times its saturated pseudo-frequency, and whether any
        of them is in the name."""
        if not parts:
            return (_NO_SLOTS, _NO_SCORES, _NO_FLAGS)
        slots = np.concatenate([run[0] for _, run in parts])
        contributions = np.concatenate(
            [self.component_weights[word] * run[1] for word, run in parts]
        )
        names = np.concatenate([run[2] for _, run in parts])
        merged, inverse = np.unique(slots, return_inverse=True)
        totals = np.bincount(inverse, weights=contributions, minlength=len(merged))
        in_name = np.bincount(inverse, weights=names, minlength=len(merged)) > 0
        return (merged.astype(np.int32), totals.astype(np.float64, copy=False), in_name)

    def _segment_run(self, segment: _Segment, term: int) -> Run | None:
        index = self.index
        if self.cached:
            if segment.normalized_version != index._version:
                segment.normalized.clear()
                segment.expanded.clear()
                segment.normalized_version = index._version
            cached = segment.normalized.get(term)
            if cached is not None:
                return None if not len(cached[0]) else cached
        posting = segment.postings(term)
        if posting is None:
            run: Run = (_NO_SLOTS, _NO_SCORES, _NO_FLAGS)
        else:
            slots, counts = posting
            if segment.dead:
                keep = index._alive[slots]
                slots, counts = slots[keep], counts[keep]
            saturated = self.saturated(slots, counts, self._lengths_of(slots))
            run = (slots, saturated, counts[:, _NAME] > 0)
        if self.cached:
            segment.normalized[term] = run
        return None if not len(run[0]) else run

    def _lengths_of(self, slots: SlotArray) -> FloatArray:
        """Field lengths of ``slots`` (index slots, then extra candidates)."""
        if not len(self.extra_lengths):
            return self.index._lengths[slots]
        lengths = np.empty((len(slots), _FIELD_COUNT), dtype=np.float64)
        local = slots < self.slot_count
        lengths[local] = self.index._lengths[slots[local]]
        lengths[~local] = self.extra_lengths[slots[~local] - self.slot_count]
        return lengths

    def score_all(
        self,
        known: Sequence[str],
        weights: dict[str, float],
        bounds: dict[str, float],
        exact: Sequence[int],
        limit: int = 0,
    ) -> Scored:
        """Admission ``off``: score every document holding a query token in one pass over the
        concatenated postings (``np.bincount`` adds each document's term scores in query-token
        order, as the holder lookup does)."""
        total = self.slot_count + len(self.extra_lengths)
        scores: FloatArray
        runs: list[tuple[str, Run]] = [
            (token, run) for token in known for run in self.postings(token)
        ]
        if runs:
            slots = np.concatenate([run[0] for _, run in runs])
            saturated = np.concatenate([run[1] for _, run in runs])
            in_name = np.concatenate([run[2] for _, run in runs])
            weight = np.repeat([weights[token] for token, _ in runs], [len(r[0]) for _, r in runs])
            contributions = weight * saturated
            scores = np.bincount(slots, weights=contributions, minlength=total).astype(
                np.float64, copy=False
            )
            name_hits = np.bincount(slots, weights=in_name, minlength=total).astype(
                np.float64, copy=False
            )
        else:
            scores = np.zeros(total, dtype=np.float64)
            name_hits = np.zeros(total, dtype=np.float64)
        # Every term score is positive (idf > 0, x > 0): a positive total means a shared token.
        candidates: SlotArray = np.flatnonzero(scores).astype(np.int32)
        admitted: npt.NDArray[np.bool_] | None = None
        if exact:
            exact_slots = np.asarray(exact, dtype=np.int32)
            candidates = np.union1d(candidates, exact_slots)
            admitted = np.ones(len(candidates), dtype=bool)
            admitted[candidates.searchsorted(exact_slots)] = False

        def memberships(positions: IntArray) -> tuple[list[str], list[list[bool]]]:
            if not runs:
                return [], [[] for _ in range(len(positions))]
            grid = _lookup([run[0] for _, run in runs], candidates[positions])
            return _Grid([token for token, _ in runs], grid, len(positions)).columns(None)

        return candidates, scores[candidates], name_hits[candidates], admitted, memberships

    def score_holders(
        self,
        known: Sequence[str],
        weights: dict[str, float],
        required: frozenset[str],
        floor: int,
        exact: Sequence[int],
    ) -> Scored:
        """Admission ``strict``/``lenient``: score only the holders of a rarest token (plus the
        exact-name tools), looking each up in the other tokens' postings."""
        postings = {token: self.postings(token) for token in known}
        runs = [run[0] for token in required for run in postings[token]]
        if exact:
            runs.append(np.asarray(exact, dtype=np.int32))
        candidates = _union(runs)
        scores, name_hits, grid = self.score_candidates(candidates, known, weights, postings)
        admitted = grid.holders(required)
        if floor:
            admitted &= grid.matched() >= floor
        if exact:
            admitted[candidates.searchsorted(np.asarray(exact, dtype=np.int32))] = False
        return candidates, scores, name_hits, admitted, grid.memberships

    def score_top(
        self,
        known: Sequence[str],
        weights: dict[str, float],
        bounds: dict[str, float],
        exact: Sequence[int],
        limit: int,
    ) -> Scored:
        """Admission ``off`` with pruning (MaxScore): score the holders of the rarest tokens
        first; a document holding none of them scores less than the sum of the other tokens'
        weights (each term score is below its weight), so once that sum falls under the
        ``limit``-th best score so far, no other document can enter the top ``limit``, even
        with the name boost (bounds and scores are compared with ``1 + NAME_BOOST`` of room).
        The result is exactly the top of :meth:`score_all`; it falls back to it when pruning
        does not pay."""
        postings = {token: self.postings(token) for token in known}
        order = sorted(known, key=lambda token: -bounds[token])
        exact_run = [np.asarray(exact, dtype=np.int32)] if exact else []
        total = self.slot_count + len(self.extra_lengths)
        # Take the rarest 1, 2, 4... tokens: few rounds even for long natural-language queries.
        steps = (
            [0] if limit <= 0 else [*(1 << n for n in range(len(order).bit_length())), len(order)]
        )
        for taken in sorted(set(steps)):
            candidates = _union(
                [run[0] for token in order[:taken] for run in postings[token]] + exact_run
            )
            if len(candidates) > total * _DENSE_SHARE:
                break  # most documents are candidates anyway: one dense pass is cheaper
            scores, name_hits, grid = self.score_candidates(candidates, known, weights, postings)
            admitted: npt.NDArray[np.bool_] | None = None
            ranked = scores
            if exact:
                admitted = np.ones(len(candidates), dtype=bool)
                admitted[candidates.searchsorted(exact_run[0])] = False
                ranked = scores[admitted]
            rest = sum(bounds[token] for token in order[taken:]) * (1.0 + NAME_BOOST + 1e-9)
            complete = taken == len(order) or limit <= 0
            if complete or (len(ranked) >= limit and np.partition(ranked, -limit)[-limit] > rest):
                return candidates, scores, name_hits, admitted, grid.memberships
        return self.score_all(known, weights, bounds, exact)

    def score_candidates(
        self,
        candidates: SlotArray,
        known: Sequence[str],
        weights: dict[str, float],
        postings: dict[str, list[Run]],
    ) -> tuple[FloatArray, FloatArray, _Grid]:
        """Full BM25F scores of ``candidates`` (sorted slots), how many query tokens are in each
        one's name, and which candidates hold which token.

        One grid, a row per run and a column per candidate: a ``searchsorted`` per run, then a
        few operations over the grid. Rows are summed in query-token order, as the dense pass
        adds them (a missing posting adds 0.0, which changes nothing).
        """
        count = len(candidates)
        rows = [(token, run) for token in known for run in postings[token]]
        if not count or not rows:
            zeros = np.zeros(count, dtype=np.float64)
            return zeros, zeros.copy(), _Grid([], np.zeros((0, count), dtype=bool), count)
        positions = np.empty((len(rows), count), dtype=np.int64)
        start = 0
        for row, (_, run) in enumerate(rows):
            if run[0] is candidates:
                # The candidates are this run's own postings: nothing to look up.
                positions[row] = np.arange(start, start + count)
            else:
                found_at = run[0].searchsorted(candidates)
                np.minimum(found_at, len(run[0]) - 1, out=found_at)
                found_at += start
                positions[row] = found_at
            start += len(run[0])
        if len(rows) == 1:
            all_slots, all_saturated, all_names = rows[0][1]
        else:
            all_slots = np.concatenate([run[0] for _, run in rows])
            all_saturated = np.concatenate([run[1] for _, run in rows])
            all_names = np.concatenate([run[2] for _, run in rows])
        found = all_slots[positions] == candidates
        row_weights = np.asarray([weights[token] for token, _ in rows], dtype=np.float64)
        contributions = row_weights[:, None] * all_saturated[positions]
        contributions *= found
        # Row after row, in order (sum() would pair rows up past 8 of them).
        scores: FloatArray = contributions[0].copy()
        for row in contributions[1:]:
            scores += row
        name_hits: FloatArray = (all_names[positions] & found).sum(axis=0, dtype=np.float64)
        return scores, name_hits, _Grid([token for token, _ in rows], found, count)


class _Grid:
    """Which candidates hold which token: a row per run (a token has a run per segment)."""

    def __init__(self, row_tokens: list[str], found: BoolArray, count: int) -> None:
        self.row_tokens = row_tokens
        self.found = found
        self.count = count

    def holders(self, tokens: Collection[str]) -> BoolArray:
        """Which candidates hold any of ``tokens``."""
        rows = [row for row, token in enumerate(self.row_tokens) if token in tokens]
        if not rows:
            return np.zeros(self.count, dtype=bool)
        held: BoolArray = np.asarray(self.found[rows].any(axis=0), dtype=bool)
        return held

    def matched(self) -> IntArray:
        """How many distinct query tokens each candidate holds."""
        counts = np.zeros(self.count, dtype=np.int64)
        for token in dict.fromkeys(self.row_tokens):
            counts += self.holders((token,))
        return counts

    def memberships(self, positions: IntArray) -> tuple[list[str], list[list[bool]]]:
        """The distinct tokens, and for each candidate at ``positions`` whether it holds each
        (a :data:`MembershipLookup`)."""
        return self.columns(positions)

    def columns(self, positions: IntArray | None) -> tuple[list[str], list[list[bool]]]:
        """As :meth:`memberships`, for the candidates at ``positions`` (``None``: all)."""
        picked = self.found if positions is None else self.found[:, positions]
        tokens = list(dict.fromkeys(self.row_tokens))
        if len(tokens) != len(self.row_tokens):  # a token with a run per segment: OR its rows
            merged = np.zeros((len(tokens), picked.shape[1]), dtype=bool)
            row_of = {token: row for row, token in enumerate(tokens)}
            for row, token in enumerate(self.row_tokens):
                merged[row_of[token]] |= picked[row]
            picked = merged
        columns: list[list[bool]] = picked.T.tolist()
        return tokens, columns

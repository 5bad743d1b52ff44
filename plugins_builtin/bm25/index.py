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
from .equivalents import EQUIVALENT_WEIGHT, EQUIVALENTS, Equivalents
from .fields import FIELD_WEIGHTS, FIELDS, document_fields
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


Run = tuple[SlotArray, FloatArray]
"""Slot-sorted postings of one token: the slots and their pseudo-frequencies x."""


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
    normalized: dict[int, tuple[SlotArray, FloatArray]] = field(default_factory=dict)
    """Live postings and saturated pseudo-frequencies by term, valid for
    ``normalized_version`` of the index."""
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
        # Name tokens of each slot (term ids, distinct): name_terms[name_offsets[s]:...[s + 1]].
        self._name_offsets: IntArray = np.zeros(1, dtype=np.int64)
        self._name_terms: IntArray = np.zeros(0, dtype=np.int64)
        # Groups: an id per group name, each slot's group id, live members and name tokens.
        self._group_ids: dict[str, int] = {}
        self._slot_groups: IntArray = np.zeros(0, dtype=np.int64)
        self._group_sizes: list[int] = []
        self._group_tokens: list[tuple[str, ...]] = []
        self._last_analysis: tuple[tuple[object, ...], QueryAnalysis] | None = None
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
            named = group and group != ToolDocument.OTHER_GROUP
            self._group_tokens.append(tuple(dict.fromkeys(tokenize(group))) if named else ())
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
        in_name = fields == 0
        name_keys = np.unique(local_docs[in_name] * vocabulary_size + flat_terms[in_name])
        name_counts = np.bincount(name_keys // max(vocabulary_size, 1), minlength=len(batch))
        self._name_offsets = np.concatenate(
            [self._name_offsets, self._name_offsets[-1] + np.cumsum(name_counts)]
        )
        self._name_terms = np.concatenate([self._name_terms, name_keys % max(vocabulary_size, 1)])
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
            equivalents=analysis.equivalents,
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
            for field_tokens in document_fields(document):
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
        equivalents: Sequence[str] = (),
    ) -> list[SearchHit]:
        """Rank for already analyzed ``tokens`` (and ``equivalents``, which count
        :data:`~hermes_core.search.equivalents.EQUIVALENT_WEIGHT` and never decide admission);
        ``exact_query`` is the raw text checked for the exact-name rule (``None``: none)."""
        if limit <= 0:
            return []
        query_terms: dict[str, float] = {}
        for token in tokens:
            query_terms[token] = query_terms.get(token, 0.0) + 1.0
        admitting = list(query_terms)
        for token in equivalents:
            query_terms.setdefault(token, EQUIVALENT_WEIGHT)

        extra_documents: list[ToolDocument] = []
        extra_postings: dict[str, tuple[SlotArray, CountArray]] = {}
        extra_lengths = _NO_LENGTHS
        if extra:
            unique_extra = {document.name: document for document in extra}
            extra_documents = [d for d in unique_extra.values() if d.name not in self._slot_of]
            extra_postings, extra_lengths = self._extra_postings(extra_documents, query_terms)
        slot_count = len(self._documents)
        document_count = self._live + len(extra_documents)
        if document_count == 0:
            return []

        frequencies: dict[str, int] = {}
        for token in query_terms:
            extra_hits = extra_postings.get(token)
            frequencies[token] = self.document_frequency(token) + (
                0 if extra_hits is None else len(extra_hits[0])
            )
        known = [token for token, df in frequencies.items() if df > 0]
        weights = {
            token: query_terms[token] * bm25_idf(document_count, frequencies[token]) * (K1 + 1.0)
            for token in known
        }
        exact = self._exact_slots(exact_query, extra_documents, slot_count)
        ranking = _Ranking(self, extra_postings, extra_lengths, document_count)
        named = self._named_groups(set(known), frequencies, extra_documents)
        if admission == "off":
            # Pruning pays for keyword queries; in a long request no few tokens outweigh the
            # rest, so it would only rescore growing candidate sets. A named group puts its
            # tools first however they score: that needs every candidate.
            prune = _PRUNE and len(known) <= _PRUNE_MAX_TOKENS and not named
            score_off = ranking.score_top if prune else ranking.score_all
            candidates, scores, admitted, memberships = score_off(
                known, weights, exact, limit - len(exact)
            )
        else:
            admission_frequencies = {token: frequencies[token] for token in admitting}
            required = required_tokens(admission, admission_frequencies, document_count)
            if any(frequencies[token] == 0 for token in required):
                required = frozenset()  # a token no tool has: nothing but an exact name passes
            known_admitting = sum(1 for token in admitting if frequencies[token] > 0)
            candidates, scores, admitted, memberships = ranking.score_holders(
                known, weights, required, coverage_floor(known_admitting, admission), exact
            )
        query_ids = np.asarray(
            [self._vocabulary[t] for t in known if t in self._vocabulary], dtype=np.int64
        )
        known_set = set(known)

        def boost(slots: SlotArray) -> FloatArray:
            return 1.0 + NAME_BOOST * self._name_coverage(
                slots, query_ids, known_set, extra_documents, slot_count
            )

        def first(slots: SlotArray) -> npt.NDArray[np.bool_]:
            return self._in_groups(slots, named, extra_documents, slot_count)

        positions, final = _top(
            candidates, scores, admitted, limit - len(exact), boost, first if named else None
        )
        if exact:
            exact_positions = candidates.searchsorted(np.asarray(exact, dtype=np.int32))
            final = np.concatenate([scores[exact_positions], final])[:limit]
            positions = np.concatenate([exact_positions, positions])[:limit]
        found = memberships(positions)
        found_tokens = list(found)
        columns: list[list[bool]] = (
            np.array([found[token] for token in found_tokens]).T.tolist()
            if found_tokens
            else [[] for _ in range(len(positions))]
        )
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
        tokens: set[str],
        frequencies: Mapping[str, int],
        extra: Sequence[ToolDocument],
    ) -> frozenset[str]:
        """The groups the query names: it holds every token of the group's name, and for each
        at least :data:`NAMED_GROUP_SHARE` of its holders are the group's tools."""
        sizes: dict[str, int] = {}
        for group, group_id in self._group_ids.items():
            if self._group_sizes[group_id] and self._group_tokens[group_id]:
                sizes[group] = self._group_sizes[group_id]
        for document in extra:
            if document.group and document.group != ToolDocument.OTHER_GROUP:
                sizes[document.group] = sizes.get(document.group, 0) + 1
        named = set()
        for group, size in sizes.items():
            known_id = self._group_ids.get(group)
            group_tokens = (
                self._group_tokens[known_id]
                if known_id is not None
                else tuple(dict.fromkeys(tokenize(group)))
            )
            if group_tokens and all(
                token in tokens and size >= NAMED_GROUP_SHARE * frequencies.get(token, 0)
                for token in group_tokens
            ):
                named.add(group)
        return frozenset(named)

    def _in_groups(
        self,
        slots: SlotArray,
        groups: frozenset[str],
        extra: Sequence[ToolDocument],
        slot_count: int,
    ) -> npt.NDArray[np.bool_]:
        """Which of ``slots`` (index slots, then extra candidates) belong to ``groups``."""
        ids = np.asarray([self._group_ids[g] for g in groups if g in self._group_ids])
        local = slots < slot_count
        marked = np.zeros(len(slots), dtype=bool)
        marked[local] = np.isin(self._slot_groups[slots[local]], ids)
        for position in np.flatnonzero(~local).tolist():
            marked[position] = extra[int(slots[position]) - slot_count].group in groups
        return marked

    def _name_coverage(
        self,
        slots: SlotArray,
        query_ids: IntArray,
        query_tokens: set[str],
        extra: Sequence[ToolDocument],
        slot_count: int,
    ) -> FloatArray:
        """For each of ``slots``, the share of its distinct name tokens that the query holds."""
        coverage = np.zeros(len(slots), dtype=np.float64)
        local = np.flatnonzero(slots < slot_count)
        if len(local):
            starts = self._name_offsets[slots[local]]
            sizes = self._name_offsets[slots[local] + 1] - starts
            owners = np.repeat(np.arange(len(local)), sizes)
            firsts = np.repeat(np.cumsum(sizes) - sizes, sizes)
            terms = self._name_terms[np.repeat(starts, sizes) + np.arange(len(owners)) - firsts]
            held = np.bincount(owners, weights=np.isin(terms, query_ids), minlength=len(local))
            coverage[local] = held / np.maximum(sizes, 1)
        for position in np.flatnonzero(slots >= slot_count).tolist():
            names = set(document_fields(extra[int(slots[position]) - slot_count])[0])
            if names:
                coverage[position] = len(names & query_tokens) / len(names)
        return coverage

    def _extra_postings(
        self, documents: Sequence[ToolDocument], query_terms: Mapping[str, float]
    ) -> tuple[dict[str, tuple[SlotArray, CountArray]], FloatArray]:
        """Postings of the query's own tokens in the extra candidates, which take the slots
        after the index's; and the candidates' field lengths. Nothing is added to the index."""
        first_slot = len(self._documents)
        lengths = np.zeros((len(documents), _FIELD_COUNT), dtype=np.float64)
        found: dict[str, tuple[list[int], list[list[int]]]] = {}
        indexed = [bool(weight) for weight in self._weights]
        for local, document in enumerate(documents):
            counts: dict[str, list[int]] = {}
            for column, field_tokens in enumerate(document_fields(document)):
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


def _lookup(
    runs: Sequence[tuple[SlotArray, FloatArray]], slots: SlotArray
) -> tuple[npt.NDArray[np.bool_], FloatArray]:
    """For each run of slot-sorted postings (a row) and each of ``slots`` (a column): whether the
    slot occurs in the run, and its term frequency there (meaningless where it does not).

    One ``searchsorted`` per run, then a few operations over the whole grid: a query costs a
    handful of numpy calls per token, not a dozen.
    """
    all_slots = np.concatenate([run[0] for run in runs]) if len(runs) > 1 else runs[0][0]
    all_tf = np.concatenate([run[1] for run in runs]) if len(runs) > 1 else runs[0][1]
    positions = np.empty((len(runs), len(slots)), dtype=np.int64)
    start = 0
    for row, (run_slots, _) in enumerate(runs):
        found_at = run_slots.searchsorted(slots)
        np.minimum(found_at, len(run_slots) - 1, out=found_at)
        positions[row] = found_at + start
        start += len(run_slots)
    return all_slots[positions] == slots, all_tf[positions]


def _union(runs: Sequence[SlotArray]) -> SlotArray:
    """The sorted distinct slots of several slot-sorted runs (the run itself when only one)."""
    if len(runs) == 1:
        return runs[0]
    if runs:
        return np.unique(np.concatenate(runs))
    return np.zeros(0, dtype=np.int32)


def _members_at(members: dict[str, npt.NDArray[np.bool_]]) -> MembershipLookup:
    """A lookup of which tokens the candidates at given positions hold."""

    def memberships(positions: IntArray) -> dict[str, npt.NDArray[np.bool_]]:
        return {token: member[positions] for token, member in members.items()}

    return memberships


def _member(sorted_slots: SlotArray, slots: SlotArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Which of ``slots`` occur in ``sorted_slots``, and where (valid where they occur)."""
    positions = sorted_slots.searchsorted(slots)
    np.minimum(positions, len(sorted_slots) - 1, out=positions)
    return sorted_slots[positions] == slots, positions


def _top(
    candidates: SlotArray,
    scores: FloatArray,
    admitted: npt.NDArray[np.bool_] | None,
    limit: int,
    boost: Callable[[SlotArray], FloatArray] | None = None,
    first: Callable[[SlotArray], npt.NDArray[np.bool_]] | None = None,
) -> tuple[IntArray, FloatArray]:
    """Positions (into ``candidates``) of the ``limit`` best admitted candidates (``None``:
    all), best first, and their final scores; equal scores keep registry (slot) order.

    ``boost`` gives each candidate's score multiplier (at least 1, at most ``1 + NAME_BOOST``);
    candidates ``first`` marks come before all others.
    """
    positions = np.arange(len(candidates)) if admitted is None else admitted.nonzero()[0]
    if limit <= 0 or not len(positions):
        return positions[:0], scores[:0]
    parts = [positions]
    if first is not None:
        marked = first(candidates[positions])
        parts = [positions[marked], positions[~marked]]
    headroom = 1.0 + NAME_BOOST if boost is not None else 1.0
    chosen: list[IntArray] = []
    final: list[FloatArray] = []
    for part in parts:
        need = limit - sum(len(found) for found in chosen)
        if need <= 0 or not len(part):
            continue
        if len(part) > need:
            # Keep what can still reach the need-th best after boosting, and ties at the cut,
            # so the stable sort below keeps registry order.
            raw = scores[part]
            cut = len(raw) - need
            part = part[raw * headroom >= np.partition(raw, cut)[cut]]
        ranked = scores[part] * boost(candidates[part]) if boost is not None else scores[part]
        order = np.lexsort((candidates[part], -ranked))[:need]
        chosen.append(part[order])
        final.append(ranked[order])
    if not chosen:
        return positions[:0], scores[:0]
    return np.concatenate(chosen), np.concatenate(final)


MembershipLookup = Callable[[IntArray], dict[str, npt.NDArray[np.bool_]]]


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
    ) -> None:
        self.index = index
        self.extra_postings = extra_postings
        self.extra_lengths = extra_lengths
        self.slot_count = len(index._documents)
        totals = index._total_lengths + extra_lengths.sum(axis=0)
        averages = totals / document_count
        # B / avglen_f, or 0 for a field no document has (then nothing holds it either).
        self.length_factors = np.divide(
            B, averages, out=np.zeros_like(averages), where=averages > 0
        )
        # Extra candidates change the averages for this query only: the cached runs are not
        # theirs.
        self.cached = not len(extra_lengths)

    def saturated(self, slots: SlotArray, counts: CountArray, lengths: FloatArray) -> FloatArray:
        """``x / (x + k1)`` per posting, ``x`` the BM25F pseudo-frequency of the module
        docstring; ``lengths`` are the postings' documents' field lengths."""
        denominators = (1.0 - B) + lengths * self.length_factors
        x: FloatArray = (counts * (self.index._weights / denominators)).sum(axis=1)
        return x / (x + K1)

    def postings(self, token: str) -> list[Run]:
        """The live postings of ``token`` (slot-sorted runs, one per segment)."""
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
            found.append((slots, self.saturated(slots, counts, self._lengths_of(slots))))
        return found

    def _segment_run(self, segment: _Segment, term: int) -> Run | None:
        index = self.index
        if self.cached:
            if segment.normalized_version != index._version:
                segment.normalized.clear()
                segment.normalized_version = index._version
            cached = segment.normalized.get(term)
            if cached is not None:
                return None if not len(cached[0]) else cached
        posting = segment.postings(term)
        if posting is None:
            run: Run = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64))
        else:
            slots, counts = posting
            if segment.dead:
                keep = index._alive[slots]
                slots, counts = slots[keep], counts[keep]
            run = (slots, self.saturated(slots, counts, self._lengths_of(slots)))
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
        exact: Sequence[int],
        limit: int = 0,
    ) -> tuple[SlotArray, FloatArray, npt.NDArray[np.bool_] | None, MembershipLookup]:
        """Admission ``off``: score every document holding a query token in one pass over the
        concatenated postings (``np.bincount`` adds each document's term scores in query-token
        order, as the holder lookup does)."""
        total = self.slot_count + len(self.extra_lengths)
        scores: FloatArray
        runs: list[tuple[str, SlotArray, FloatArray]] = [
            (token, slots, saturated)
            for token in known
            for slots, saturated in self.postings(token)
        ]
        if runs:
            slots = np.concatenate([run[1] for run in runs])
            saturated = np.concatenate([run[2] for run in runs])
            weight = np.repeat([weights[run[0]] for run in runs], [len(run[1]) for run in runs])
            contributions = weight * saturated
            scores = np.bincount(slots, weights=contributions, minlength=total).astype(
                np.float64, copy=False
            )
        else:
            scores = np.zeros(total, dtype=np.float64)
        # Every term score is positive (idf > 0, x > 0): a positive total means a shared token.
        candidates: SlotArray = np.flatnonzero(scores).astype(np.int32)
        admitted: npt.NDArray[np.bool_] | None = None
        if exact:
            exact_slots = np.asarray(exact, dtype=np.int32)
            candidates = np.union1d(candidates, exact_slots)
            admitted = np.ones(len(candidates), dtype=bool)
            admitted[candidates.searchsorted(exact_slots)] = False

        def memberships(positions: IntArray) -> dict[str, npt.NDArray[np.bool_]]:
            found: dict[str, npt.NDArray[np.bool_]] = {}
            if not runs or not len(positions):
                return found
            grid, _ = _lookup([(run[1], run[2]) for run in runs], candidates[positions])
            for (token, _, _), member in zip(runs, grid, strict=True):
                found[token] = found[token] | member if token in found else member
            return found

        return candidates, scores[candidates], admitted, memberships

    def score_holders(
        self,
        known: Sequence[str],
        weights: dict[str, float],
        required: frozenset[str],
        floor: int,
        exact: Sequence[int],
    ) -> tuple[SlotArray, FloatArray, npt.NDArray[np.bool_], MembershipLookup]:
        """Admission ``strict``/``lenient``: score only the holders of a rarest token (plus the
        exact-name tools), looking each up in the other tokens' postings."""
        postings = {token: self.postings(token) for token in known}
        runs = [slots for token in required for slots, _ in postings[token]]
        if exact:
            runs.append(np.asarray(exact, dtype=np.int32))
        candidates = _union(runs)
        scores, matched, members = self.score_candidates(candidates, known, weights, postings)
        admitted = np.zeros(len(candidates), dtype=bool)
        for token in required:
            admitted |= members[token]
        if floor:
            admitted &= matched >= floor
        if exact:
            admitted[candidates.searchsorted(np.asarray(exact, dtype=np.int32))] = False
        return candidates, scores, admitted, _members_at(members)

    def score_top(
        self, known: Sequence[str], weights: dict[str, float], exact: Sequence[int], limit: int
    ) -> tuple[SlotArray, FloatArray, npt.NDArray[np.bool_] | None, MembershipLookup]:
        """Admission ``off`` with pruning (MaxScore): score the holders of the rarest tokens
        first; a document holding none of them scores less than the sum of the other tokens'
        weights (each term score is below its weight), so once that sum falls under the
        ``limit``-th best score so far, no other document can enter the top ``limit``. The
        result is exactly the top of :meth:`score_all`; it falls back to it when pruning does
        not pay."""
        postings = {token: self.postings(token) for token in known}
        order = sorted(known, key=lambda token: -weights[token])
        exact_run = [np.asarray(exact, dtype=np.int32)] if exact else []
        total = self.slot_count + len(self.extra_lengths)
        # Take the rarest 1, 2, 4... tokens: few rounds even for long natural-language queries.
        steps = (
            [0] if limit <= 0 else [*(1 << n for n in range(len(order).bit_length())), len(order)]
        )
        for taken in sorted(set(steps)):
            candidates = _union(
                [slots for token in order[:taken] for slots, _ in postings[token]] + exact_run
            )
            if len(candidates) > total * _DENSE_SHARE:
                break  # most documents are candidates anyway: one dense pass is cheaper
            scores, _, members = self.score_candidates(candidates, known, weights, postings)
            admitted: npt.NDArray[np.bool_] | None = None
            ranked = scores
            if exact:
                admitted = np.ones(len(candidates), dtype=bool)
                admitted[candidates.searchsorted(exact_run[0])] = False
                ranked = scores[admitted]
            rest = sum(weights[token] for token in order[taken:]) * (1.0 + 1e-9)
            complete = taken == len(order) or limit <= 0
            if complete or (len(ranked) >= limit and np.partition(ranked, -limit)[-limit] > rest):
                return candidates, scores, admitted, _members_at(members)
        return self.score_all(known, weights, exact)

    def score_candidates(
        self,
        candidates: SlotArray,
        known: Sequence[str],
        weights: dict[str, float],
        postings: dict[str, list[Run]],
    ) -> tuple[FloatArray, IntArray, dict[str, npt.NDArray[np.bool_]]]:
        """Full BM25F scores of ``candidates`` (sorted slots), how many query tokens each holds,
        and per token which candidates hold it."""
        count = len(candidates)
        scores = np.zeros(count, dtype=np.float64)
        matched = np.zeros(count, dtype=np.int64)
        members: dict[str, npt.NDArray[np.bool_]] = {}
        for token in known:
            weight = weights[token]
            token_runs = postings[token] if count else []
            if len(token_runs) == 1 and token_runs[0][0] is candidates:
                # The candidates are this token's own postings: nothing to look up.
                scores += weight * token_runs[0][1]
                member = np.ones(count, dtype=bool)
            else:
                member = np.zeros(count, dtype=bool)
                for slots, saturated in token_runs:
                    found, positions = _member(slots, candidates)
                    # meaningless where not found: masked below
                    contribution = weight * saturated[positions]
                    contribution *= found
                    # Documents add their term scores in query-token order, exactly as the
                    # dense pass does (adding 0.0 changes nothing).
                    scores += contribution
                    member |= found
            matched += member
            members[token] = member
        return scores, matched, members

"""The BM25 index: Okapi BM25 over numpy postings, with incremental add and remove.

Scoring: k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), summed over the query's
tokens (a token repeated in the query counts again). N, df and the average document length are
always those of the live documents (plus a query's ``extra`` candidates), exactly. Each document
adds its term scores in query-token order whichever path scores it, so scores are bit-identical
across paths and across incremental updates.

Layout: every document gets a *slot*, increasing in insertion (registry) order. Documents added
together form a *segment* holding term-major postings (slot ids as int32, term frequencies as
float64) and the same data doc-major, so a removal can subtract its document frequencies.
Removing marks slots dead; small trailing segments are merged as they accumulate (so a query
visits few segments), and the whole index is rebuilt once dead slots outnumber live ones.

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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np
import numpy.typing as npt

from hermes_core.search.admission import coverage_floor, exact_name_keys, required_tokens
from hermes_core.search.backend import Admission, SearchHit, ToolDocument
from hermes_core.search.documents import document_tokens
from hermes_core.search.tokenize import query_tokens

__all__ = ["K1", "B", "BM25Index", "bm25_idf"]

K1 = 1.5
B = 0.75

IntArray = npt.NDArray[np.int64]
SlotArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
_NO_LENGTHS: FloatArray = np.zeros(0, dtype=np.float64)
_PRUNE = True
"""Whether admission ``off`` prunes with MaxScore (tests turn it off to compare)."""
_PRUNE_MAX_TOKENS = 8
_DENSE_SHARE = 0.25
"""Past this share of all documents as candidates, pruning gives way to the dense pass."""


def bm25_idf(document_count: int, document_frequency: int) -> float:
    """The spec's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); always positive."""
    return math.log1p((document_count - document_frequency + 0.5) / (document_frequency + 0.5))


@dataclass
class _Segment:
    """Postings of the documents in slots ``first_slot .. first_slot + size - 1``."""

    first_slot: int
    size: int
    # term-major: postings of term t are slots[offsets[t]:offsets[t + 1]] (t < len(offsets) - 1)
    offsets: IntArray
    slots: SlotArray
    frequencies: FloatArray
    # doc-major: the distinct terms of local document d are doc_terms[doc_offsets[d]:...]
    doc_offsets: IntArray
    doc_terms: IntArray
    doc_frequencies: FloatArray
    dead: int = 0

    def postings(self, term: int) -> tuple[SlotArray, FloatArray] | None:
        if term >= len(self.offsets) - 1:
            return None
        start, end = int(self.offsets[term]), int(self.offsets[term + 1])
        if start == end:
            return None
        return self.slots[start:end], self.frequencies[start:end]


def _segment_from_pairs(
    first_slot: int,
    size: int,
    local_docs: IntArray,
    terms: IntArray,
    frequencies: FloatArray,
    vocabulary_size: int,
) -> _Segment:
    """A segment from doc-major (local doc, term, tf) triples sorted by doc then term."""
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
        frequencies=frequencies[order],
        doc_offsets=doc_offsets,
        doc_terms=terms,
        doc_frequencies=frequencies,
    )


class BM25Index:
    """Okapi BM25 search over tool documents; implements
    :class:`~hermes_core.search.backend.SearchBackend`.

    ``build`` indexes a catalog; ``add``/``remove`` change it incrementally (one server's tools)
    and leave every score exactly as a full rebuild would give it.
    """

    def __init__(
        self, documents: Sequence[ToolDocument] = (), *, compact_min_dead: int = 1024
    ) -> None:
        # Dead slots cost memory and a filter per query; past this many (and more dead than
        # live) the index rebuilds itself from the live documents.
        self._compact_min_dead = compact_min_dead
        self.build(documents)

    # -- building ------------------------------------------------------------------------------

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index with ``documents`` (a repeated name keeps its last copy)."""
        self._vocabulary: dict[str, int] = {}
        self._document_frequency: IntArray = np.zeros(0, dtype=np.int64)
        self._lengths: FloatArray = np.zeros(0, dtype=np.float64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._documents: list[ToolDocument | None] = []
        self._slot_of: dict[str, int] = {}
        self._exact: dict[str, list[int]] = {}
        self._segments: list[_Segment] = []
        self._live = 0
        self._total_length = 0
        self.add(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index ``documents`` after the existing ones; a name already indexed is replaced (its
        new copy takes the new registry position)."""
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
            for key in exact_name_keys(document.name):
                self._exact.setdefault(key, []).append(slot)
        self._live += len(batch)
        self._total_length += int(lengths.sum())
        self._segments.append(segment)
        self._merge_small_segments()

    def _term_ids(self, tokens: list[str]) -> list[int]:
        vocabulary = self._vocabulary
        for token in dict.fromkeys(tokens):
            if token not in vocabulary:
                vocabulary[token] = len(vocabulary)
        return list(map(vocabulary.__getitem__, tokens))

    def _index_batch(
        self, first_slot: int, batch: Sequence[ToolDocument]
    ) -> tuple[_Segment, FloatArray]:
        token_lists = [document_tokens(document) for document in batch]
        lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(batch))
        flat_terms = np.asarray(
            self._term_ids([token for tokens in token_lists for token in tokens]), dtype=np.int64
        )
        vocabulary_size = len(self._vocabulary)
        local_docs = np.repeat(np.arange(len(batch), dtype=np.int64), lengths)
        keys, counts = np.unique(local_docs * vocabulary_size + flat_terms, return_counts=True)
        pair_docs = keys // max(vocabulary_size, 1)
        pair_terms = keys % max(vocabulary_size, 1)
        segment = _segment_from_pairs(
            first_slot,
            len(batch),
            pair_docs,
            pair_terms,
            counts.astype(np.float64),
            vocabulary_size,
        )
        frequency = self._document_frequency
        if len(frequency) < vocabulary_size:
            frequency = np.concatenate(
                [frequency, np.zeros(vocabulary_size - len(frequency), dtype=np.int64)]
            )
        frequency += np.bincount(pair_terms, minlength=vocabulary_size)
        self._document_frequency = frequency
        return segment, lengths.astype(np.float64)

    # -- removing ------------------------------------------------------------------------------

    def remove(self, names: Collection[str]) -> None:
        """Drop the documents named in ``names``; unknown names are ignored."""
        slots = [self._slot_of.pop(name) for name in set(names) if name in self._slot_of]
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
            self._total_length -= int(self._lengths[slot])
            document = self._documents[slot]
            self._documents[slot] = None
            if document is not None:
                for key in exact_name_keys(document.name):
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
        frequencies: list[FloatArray] = []
        for segment in (older, newer):
            counts = np.diff(segment.doc_offsets)
            local = np.repeat(np.arange(segment.size, dtype=np.int64), counts)
            keep = self._alive[local + segment.first_slot]
            docs.append(local[keep] + (segment.first_slot - older.first_slot))
            terms.append(segment.doc_terms[keep])
            frequencies.append(segment.doc_frequencies[keep])
        merged = _segment_from_pairs(
            older.first_slot,
            size,
            np.concatenate(docs),
            np.concatenate(terms),
            np.concatenate(frequencies),
            len(self._vocabulary),
        )
        # Dead slots keep their place, without postings, until the next full compaction; so the
        # merged segment needs no liveness filter until its next removal.
        return merged

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
        return self.search_tokens(
            query_tokens(query), limit, admission, extra=extra, exact_query=query
        )

    def search_tokens(
        self,
        tokens: Sequence[str],
        limit: int,
        admission: Admission,
        *,
        extra: Sequence[ToolDocument] = (),
        exact_query: str | None = None,
    ) -> list[SearchHit]:
        """Rank for already tokenized ``tokens``; ``exact_query`` is the raw text checked for
        the exact-name rule (``None``: no exact-name check)."""
        if limit <= 0:
            return []
        query_terms: dict[str, int] = {}
        for token in tokens:
            query_terms[token] = query_terms.get(token, 0) + 1

        extra_documents: list[ToolDocument] = []
        extra_postings: dict[str, tuple[SlotArray, FloatArray]] = {}
        extra_lengths = _NO_LENGTHS
        if extra:
            unique_extra = {document.name: document for document in extra}
            extra_documents = [d for d in unique_extra.values() if d.name not in self._slot_of]
            extra_postings, extra_lengths = self._extra_postings(extra_documents, query_terms)
        slot_count = len(self._documents)
        document_count = self._live + len(extra_documents)
        if document_count == 0:
            return []
        total_length = self._total_length + float(extra_lengths.sum())
        average_length = total_length / document_count if total_length else 1.0

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
        ranking = _Ranking(self, extra_postings, extra_lengths, average_length)
        if admission == "off":
            # Pruning pays for keyword queries; in a long request no few tokens outweigh the
            # rest, so it would only rescore growing candidate sets.
            prune = _PRUNE and len(known) <= _PRUNE_MAX_TOKENS
            score_off = ranking.score_top if prune else ranking.score_all
            candidates, scores, admitted, memberships = score_off(
                known, weights, exact, limit - len(exact)
            )
        else:
            required = required_tokens(admission, frequencies, document_count)
            if any(frequencies[token] == 0 for token in required):
                required = frozenset()  # a token no tool has: nothing but an exact name passes
            candidates, scores, admitted, memberships = ranking.score_holders(
                known, weights, required, coverage_floor(len(known), admission), exact
            )
        positions = _top(candidates, scores, admitted, limit - len(exact))
        if exact:
            exact_positions = candidates.searchsorted(np.asarray(exact, dtype=np.int32))
            positions = np.concatenate([exact_positions, positions])[:limit]
        found = memberships(positions)
        tokens = list(found)
        columns: list[list[bool]] = (
            np.array([found[token] for token in tokens]).T.tolist()
            if tokens
            else [[] for _ in range(len(positions))]
        )
        return [
            SearchHit(
                name=self._name_at(slot, extra_documents, slot_count),
                score=score,
                matched_tokens=tuple(compress(tokens, column)),
            )
            for slot, score, column in zip(
                candidates[positions].tolist(), scores[positions].tolist(), columns, strict=True
            )
        ]

    def _extra_postings(
        self, documents: Sequence[ToolDocument], query_terms: dict[str, int]
    ) -> tuple[dict[str, tuple[SlotArray, FloatArray]], FloatArray]:
        """Postings of the query's own tokens in the extra candidates, which take the slots
        after the index's; and the candidates' lengths. Nothing is added to the index."""
        first_slot = len(self._documents)
        token_lists = [document_tokens(document) for document in documents]
        lengths = np.array([len(tokens) for tokens in token_lists], dtype=np.float64)
        found: dict[str, tuple[list[int], list[float]]] = {}
        for local, tokens in enumerate(token_lists):
            counts: dict[str, int] = {}
            for token in tokens:
                if token in query_terms:
                    counts[token] = counts.get(token, 0) + 1
            for token, count in counts.items():
                slots, frequencies = found.setdefault(token, ([], []))
                slots.append(first_slot + local)
                frequencies.append(float(count))
        postings = {
            token: (np.asarray(slots, dtype=np.int32), np.asarray(tfs, dtype=np.float64))
            for token, (slots, tfs) in found.items()
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
            if key in exact_name_keys(document.name)
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
) -> IntArray:
    """Positions (into ``candidates``) of the ``limit`` best admitted candidates (``None``:
    all), best first; equal scores keep registry (slot) order."""
    positions = np.arange(len(candidates)) if admitted is None else admitted.nonzero()[0]
    if limit <= 0 or not len(positions):
        return positions[:0]
    if len(positions) > 4 * limit + 64:
        # Keep everything scoring at least the limit-th best, so ties at the cut keep registry
        # order after the stable sort below.
        chosen = scores[positions]
        cut = len(chosen) - limit
        positions = positions[chosen >= np.partition(chosen, cut)[cut]]
    order = np.lexsort((candidates[positions], -scores[positions]))[:limit]
    return positions[order]


MembershipLookup = Callable[[IntArray], dict[str, npt.NDArray[np.bool_]]]


class _Ranking:
    """One query's scoring pass over the index's segments plus the query's extra candidates."""

    def __init__(
        self,
        index: BM25Index,
        extra_postings: dict[str, tuple[SlotArray, FloatArray]],
        extra_lengths: FloatArray,
        average_length: float,
    ) -> None:
        self.index = index
        self.extra_postings = extra_postings
        self.extra_lengths = extra_lengths
        self.slot_count = len(index._documents)
        self.norm = K1 * B / average_length
        self.base = K1 * (1.0 - B)

    def postings(self, token: str) -> list[tuple[SlotArray, FloatArray]]:
        """The live postings of ``token`` (slot-sorted runs, one per segment)."""
        found: list[tuple[SlotArray, FloatArray]] = []
        index = self.index
        term = index._vocabulary.get(token)
        if term is not None:
            for segment in index._segments:
                run = segment.postings(term)
                if run is None:
                    continue
                slots, tf = run
                if segment.dead:
                    keep = index._alive[slots]
                    slots, tf = slots[keep], tf[keep]
                    if not len(slots):
                        continue
                found.append((slots, tf))
        extra = self.extra_postings.get(token)
        if extra is not None:
            found.append(extra)
        return found

    def lengths(self, slots: IntArray | SlotArray) -> FloatArray:
        """Document lengths of ``slots`` (index slots, then extra candidates)."""
        if not len(self.extra_lengths):
            return self.index._lengths[slots]
        lengths = np.empty(len(slots), dtype=np.float64)
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
            (token, slots, tf) for token in known for slots, tf in self.postings(token)
        ]
        if runs:
            slots = np.concatenate([run[1] for run in runs])
            tf = np.concatenate([run[2] for run in runs])
            weight = np.repeat([weights[run[0]] for run in runs], [len(run[1]) for run in runs])
            contributions = weight * (tf / (tf + (self.base + self.norm * self.lengths(slots))))
            scores = np.bincount(slots, weights=contributions, minlength=total).astype(
                np.float64, copy=False
            )
        else:
            scores = np.zeros(total, dtype=np.float64)
        # Every term score is positive (idf > 0, tf >= 1): a positive total means a shared token.
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
        postings: dict[str, list[tuple[SlotArray, FloatArray]]],
    ) -> tuple[FloatArray, IntArray, dict[str, npt.NDArray[np.bool_]]]:
        """Full BM25 scores of ``candidates`` (sorted slots), how many query tokens each holds,
        and per token which candidates hold it."""
        count = len(candidates)
        scores = np.zeros(count, dtype=np.float64)
        matched = np.zeros(count, dtype=np.int64)
        members: dict[str, npt.NDArray[np.bool_]] = {}
        # tf / (tf + k1 (1 - b + b dl / avgdl)): the length part once per query.
        length_part = self.base + self.norm * self.lengths(candidates) if count else _NO_LENGTHS
        for token in known:
            weight = weights[token]
            token_runs = postings[token] if count else []
            if len(token_runs) == 1 and token_runs[0][0] is candidates:
                # The candidates are this token's own postings: nothing to look up.
                tf = token_runs[0][1]
                scores += weight * (tf / (tf + length_part))
                member = np.ones(count, dtype=bool)
            else:
                member = np.zeros(count, dtype=bool)
                for slots, tf in token_runs:
                    found, positions = _member(slots, candidates)
                    hits = tf[positions]  # meaningless where not found: masked below
                    contribution = weight * (hits / (hits + length_part))
                    contribution *= found
                    # Documents add their term scores in query-token order, exactly as the
                    # dense pass does (adding 0.0 changes nothing).
                    scores += contribution
                    member |= found
            matched += member
            members[token] = member
        return scores, matched, members

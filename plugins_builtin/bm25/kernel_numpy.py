"""The query loop in numpy: the reference of the C kernel (``_kernel.c``), the same rule in
another form, used when the C kernel is not built. ``tests/test_bm25_kernel.py`` checks that
both return identical hits (slots, scores to the last bit, held tokens) over random catalogs.

One call ranks one query. A query is a list of *tokens*, each made of *parts*: a plain token
has one part, an expansion token one part per equivalent. A part's term score in a document is
its weight times the saturated pseudo-frequency ``x / (x + k1)`` of its term there (see
:mod:`.index`); a token's score is the sum of its parts' scores in part order, and a document's
score the sum of its tokens' scores in token order, so every path adds the same numbers in the
same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .build import sorted_postings as postings
from .build import word_ids, word_table

__all__ = [
    "IMPLEMENTATION",
    "SCRATCH_HEADER",
    "SCRATCH_SLOT",
    "postings",
    "saturations",
    "search",
    "word_ids",
    "word_table",
]

IMPLEMENTATION: Final = "numpy"
SCRATCH_HEADER: Final = 0
"""This implementation needs no scratch memory (the C kernel's constants have these names)."""
SCRATCH_SLOT: Final = 0
MAX_TOKENS: Final = 1 << 62
"""As many distinct tokens a query as anyone has (the C kernel's counts take 65,535)."""

_FIELDS = 5
Segment = tuple[int, int, Any, Any, Any, int, int, Any, Any]
"""A segment: its first slot, its size, its term offsets (int64, one more than its terms), its
postings' slots (int32, sorted within a term), their per-field counts (uint16, five a posting),
whether some of its slots are dead (then ``alive`` says which), which term id of a part it is
indexed by (its column: 0 the index's vocabulary, 1 the extra candidates' own, 2 the index's
merged expansion runs), and two arrays the C kernel keeps its postings' saturations in
(float64 a posting, uint32 a term), or ``None``. A segment without counts holds each posting's
saturation in the first array already (negated when the token is in the name), and no
second."""
Part = tuple[int, float, int, int, int]
"""A part: its token's position, its weight, and its term id in the segments of each column
(-1: none)."""
Hit = tuple[int, float, tuple[str, ...]]
"""A hit: its slot, its score (name coverage included) and the ``tokens`` it holds, in
order."""


def saturations(counts: Any, lengths: Any, params: tuple[float, ...]) -> Any:
    """``x / (x + k1)`` of each posting (``counts``: its per-field frequencies, ``lengths``: its
    document's field lengths; ``params`` as :func:`search` takes them), ``x`` its BM25F
    pseudo-frequency, the fields added in order as the C kernel adds them."""
    k1, one_minus_b, factors, weights = params[0], params[1], params[3:8], params[8:13]
    x = np.zeros(len(counts), dtype=np.float64)
    for column in range(_FIELDS):
        denominator = one_minus_b + lengths[:, column] * factors[column]
        x = x + counts[:, column] * (weights[column] / denominator)
    return x / (x + k1)


def search(
    segments: Sequence[Segment],
    slot_count: int,
    lengths: Any,
    alive: Any,
    name_sizes: Any,
    groups: Any,
    extra_lengths: Any,
    extra_name_sizes: Any,
    extra_groups: Any,
    scratch: Any,
    params: tuple[float, ...],
    parts: Sequence[Part],
    tokens: list[str],
    required: bytes | None,
    floor: int,
    exact: Sequence[int],
    named: Sequence[int],
    limit: int,
    version: int,
    bounds: Sequence[float] | None = None,
    prune_share: float = 1.0,
    hits: tuple[type, Sequence[Any], Sequence[Any]] | None = None,
    sift_slots: int = 0,
    dense_share: float = 1.0,
) -> list[Any]:
    """The hits of one query, best first: the ``exact`` slots (at most ``limit``), then the
    best of the others by (in a ``named`` group first, score, slot).

    Slots below ``slot_count`` are the index's (their field ``lengths``, ``alive`` flags, name
    sizes and group ids), the others the query's extra candidates (``extra_*``). ``params``:
    k1, 1 - b, the name boost, the five fields' ``b / average length`` and their five weights.
    ``required`` (one byte a token) is ``None`` for admission ``off``, where every document
    holding a token is ranked; otherwise only the holders of a required token are, and only
    those holding at least ``floor`` distinct tokens. ``scratch`` (working memory), a
    segment's cache arrays, ``version`` (which says whether a cache entry is current),
    ``bounds`` (each token's most a document can score with it, for pruning under ``off``),
    ``prune_share`` (the share of the documents its highest-bound token may be held by for a
    first round of pruning), ``sift_slots`` (the least number of slots for which it merges
    the postings of a required token's holders) and ``dense_share`` (the share of the slots
    from which, under ``off``, it sums the postings of the tokens it does not set aside in a
    column a slot) serve the C kernel only: this one scores every candidate, with the same
    result. With ``hits`` (a hit class, the index's documents, the
    extra candidates), each hit is ``kind(document name, score, tokens)`` instead of a
    :data:`Hit`.
    """
    del scratch, version, bounds, prune_share, sift_slots, dense_share
    token_count = len(tokens)
    boost = params[2]
    all_lengths = np.concatenate(
        [
            np.asarray(lengths, dtype=np.int32).reshape(-1, _FIELDS)[:slot_count],
            np.asarray(extra_lengths, dtype=np.int32).reshape(-1, _FIELDS),
        ]
    )
    live = np.asarray(alive, dtype=bool)
    sizes = np.concatenate(
        [np.asarray(name_sizes, dtype=np.int32)[:slot_count], np.asarray(extra_name_sizes)]
    )
    group_ids = np.concatenate(
        [np.asarray(groups, dtype=np.int32)[:slot_count], np.asarray(extra_groups)]
    )

    def saturation(counts: npt.NDArray[np.uint16], slots: npt.NDArray[np.int32]) -> Any:
        return saturations(counts, all_lengths[slots], params)

    # Per token: its holders (sorted slots), its score in each and whether it is in the name.
    holders: list[tuple[Any, Any, Any]] = []
    for token in range(token_count):
        found_slots, scores, in_name = [], [], []
        for part in (part for part in parts if part[0] == token):
            weight, term_ids = part[1], part[2:]
            for _first, _size, offsets, slots, counts, dead, column, values, _ in segments:
                term_id = term_ids[column]
                offsets = np.asarray(offsets, dtype=np.int64)
                if term_id < 0 or term_id >= len(offsets) - 1:
                    continue
                start, end = int(offsets[term_id]), int(offsets[term_id + 1])
                run = np.asarray(slots, dtype=np.int32)[start:end]
                if counts is None:  # saturations given, negated when in the name
                    given = np.asarray(values, dtype=np.float64)[start:end]
                    found_slots.append(run)
                    scores.append(weight * np.abs(given))
                    in_name.append(given < 0)
                    continue
                run_counts = np.asarray(counts, dtype=np.uint16).reshape(-1, _FIELDS)[start:end]
                if dead:
                    keep = np.ones(len(run), dtype=bool)
                    local = run < slot_count
                    keep[local] = live[run[local]]
                    run, run_counts = run[keep], run_counts[keep]
                found_slots.append(run)
                scores.append(weight * saturation(run_counts, run))
                in_name.append(run_counts[:, 0] > 0)
        if found_slots:
            every = np.concatenate(found_slots)
            merged, inverse = np.unique(every, return_inverse=True)
            total = np.bincount(inverse, weights=np.concatenate(scores), minlength=len(merged))
            names = np.bincount(inverse, weights=np.concatenate(in_name), minlength=len(merged))
            holders.append((merged, total, names > 0))
        else:
            empty = np.zeros(0, dtype=np.int32)
            holders.append((empty, np.zeros(0), np.zeros(0, dtype=bool)))

    def score(candidates: Any) -> tuple[Any, Any, Any, Any]:
        """Score, name hits, distinct tokens held and the held grid of ``candidates``."""
        total = np.zeros(len(candidates), dtype=np.float64)
        name_hits = np.zeros(len(candidates), dtype=np.int64)
        grid = np.zeros((token_count, len(candidates)), dtype=bool)
        for token, (slots, token_scores, names) in enumerate(holders):
            if not len(slots):
                continue
            positions = np.minimum(slots.searchsorted(candidates), len(slots) - 1)
            found = slots[positions] == candidates
            total = total + np.where(found, token_scores[positions], 0.0)
            name_hits += found & names[positions]
            grid[token] = found
        boosted = total * (1.0 + boost * (name_hits / sizes[candidates]))
        return boosted, name_hits, grid.sum(axis=0), grid

    exact_slots = np.asarray(exact, dtype=np.int64)
    if required is None:
        pool = [slots for slots, _, _ in holders]
    else:
        pool = [holders[token][0] for token in range(token_count) if required[token]]
    candidates = np.unique(np.concatenate([*(p.astype(np.int64) for p in pool), exact_slots]))
    boosted, _, matched, _ = score(candidates)
    admitted = ~np.isin(candidates, exact_slots)
    if required is not None:
        admitted &= matched >= floor
    positions = np.flatnonzero(admitted)
    first = np.isin(group_ids[candidates[positions]], np.asarray(named, dtype=np.int64))
    order = np.lexsort((candidates[positions], -boosted[positions], -first.astype(np.int64)))
    ranked = candidates[positions[order[: max(limit - len(exact_slots), 0)]]]

    shown = np.concatenate([exact_slots[: max(limit, 0)], ranked]).astype(np.int64)
    final, _, _, grid = score(shown)
    found = [
        (int(slot), float(value), tuple(compress(tokens, grid[:, column].tolist())))
        for column, (slot, value) in enumerate(zip(shown.tolist(), final.tolist(), strict=True))
    ]
    if hits is None:
        return found
    kind, documents, extra = hits
    return [
        kind((documents[slot] if slot < slot_count else extra[slot - slot_count]).name, value, held)
        for slot, value, held in found
    ]

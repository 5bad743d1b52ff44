"""The BM25 index: BM25F over compact postings, with incremental add and remove, ranked by one
kernel call a query, and persisted in the cache directory.

Scoring (BM25F, one normalization per field): a document's pseudo-frequency of token t is

    x(t, d) = Σ_f w_f · tf_f(t, d) / (1 - b + b · len_f(d) / avglen_f)

over the fields of :mod:`.fields` with their weights w_f, and its score for a query is
Σ_t idf(t) · (k1 + 1) · x / (k1 + x), with k1 = 1.5, b = 0.75 and
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (a token repeated in the query counts again). A long
description therefore weakens the description's matches only, never the name's. N, df and the
average field lengths are always those of the live documents (plus a query's ``extra``
candidates), exactly. Each document adds its term scores in query-token order whichever path
scores it, so scores are bit-identical across paths, across admission modes and across
incremental updates. With one field of weight 1 this is Okapi BM25.

Layout: every document gets a *slot*, increasing in insertion (registry) order, with its field
lengths (int32, a row of five), its name size, group id and liveness. Documents added together
form a *segment* of term-major postings: per term, the slots holding it (int32, sorted) and
its frequency in each field (uint16, a row of five); :mod:`.build` makes them. Removing marks
slots dead (and takes the documents' frequencies back out, tokenizing them again: the word
table makes that cheap); small trailing segments are merged as they accumulate, so a query
visits few segments, and the whole index is rebuilt once dead slots outnumber live ones.

A query is analyzed (:mod:`.analysis`), its tokens' weights computed here (each token's term
ids, frequency and idf looked up once per version, in a :class:`_Context`), and the kernel
(:mod:`.kernel`: C, or its numpy reference) ranks it in one call. The saturations of a term's
postings are computed on its first query after a change and kept; an expansion token's
equivalents are merged once per version into one run. Under ``strict`` and ``lenient`` the
kernel scores the holders of the required tokens, looking each up in the other tokens'
postings or scanning them, whichever is cheaper (a run every document holds is read by
offset). Under ``off``, a token held by half the documents or more is set aside: the others
are scored (when their postings are many, :data:`DENSE_SHARE`, in a dense column a document,
as bm25s scores, even with nothing set aside in a large index), and only the few documents
whose bound reaches the k-th best are scored again with every token; else it prunes exactly
(MaxScore) when the highest-weighted token is held by few documents (:data:`PRUNE_SHARE`) and
pruning is cheaper than scoring every posting; else it adds every posting into one
accumulator. Each is exact, and gives up before it could be wrong
(then the next one runs). A heap keeps the top ``limit`` (named groups first, then score, then
registry order).

Persistence (:mod:`.store`): with a ``cache_dir``, :meth:`BM25Index.build` of a catalog of at
least ``persist_min_documents`` documents saves its arrays there, keyed by a hash of the
documents and of the tokenizer, and a later build of the same documents maps them from the file
instead of indexing again. A file that is not exactly what was written is ignored with one
warning, and rebuilt.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from hermes_core.search import Admission, KeyedDocuments, SearchHit, ToolDocument

from . import kernel_numpy
from .admission import coverage_floor, exact_name_keys, required_tokens
from .analysis import QueryAnalysis, analyze_query, unmatched_in
from .build import (
    FIELD_COUNT,
    MAX_COUNT,
    MCP_PREFIX,
    DocumentSlots,
    Postings,
    Vocabulary,
    bare_names,
    index_batch,
)
from .equivalents import (
    EQUIVALENT_WEIGHT,
    EQUIVALENTS,
    Equivalents,
    equivalent_words,
    expansion_token,
)
from .fields import FIELD_WEIGHTS, FIELDS, extra_document_fields
from .kernel import DEFAULT, scratch_bytes
from .kernel_numpy import saturations
from .store import IndexStore, StoredIndex, content_key
from .tokenize import tokenize

__all__ = ["K1", "PERSIST_MIN_DOCUMENTS", "B", "BM25Index", "bm25_idf"]

logger = logging.getLogger(__name__)

K1 = 1.5
B = 0.75
NAME_BOOST = 0.3
"""Name coverage: a score is multiplied by ``1 + NAME_BOOST * c``, ``c`` the share of the tool's
distinct name tokens that the query holds (its words or their equivalents)."""
NAMED_GROUP_SHARE = 0.7
"""A query names a group (server) when it holds every token of the group's name and, for each,
at least this share of the tools holding it belong to the group."""
PRUNE_SHARE = 0.25
"""Admission off prunes (MaxScore) when the query's highest-bound token is held by at most
this share of the documents (it scores their holders first; the kernel decides, by postings)."""
PRUNE_REQUIRED = True
"""Strict and lenient with no coverage floor set aside the tokens half the tools hold, among
the required tokens' holders (the kernel's ``rank_aside``). The same hits either way;
``False`` only to measure against (``benchmarks/search_prune.py``)."""
SIFT_MIN_SLOTS = 65_536
"""From this many documents on, strict and lenient with one required token held by few sum its
holders' scores by merging postings (the kernel's ``sift_holders``) rather than in each
document's 16-byte cell: below, the cells fit in a core's 1 MB second-level cache, and adding
into them costs no more. Admission off with no token set aside takes its dense pass
(:data:`DENSE_SHARE`) only from this many documents on, for the same reason. The same hits
either way (tests set it to 0)."""
DENSE_SHARE = 0.0625
"""Admission off, its common tokens set aside, sums the other tokens' scores in a dense column a
document and reads every document once (the kernel's ``sift_dense``) when their postings number
at least this share of the documents; below, in the holders' cells. Measured per query at
33,000 and 330,000 tools (docs/performance.md): the dense pass costs about as much at 33,000
tools from a twentieth on, and less from there, and at 330,000 less at any share. The same
hits either way (tests set it to 0 and above 1)."""
PERSIST_MIN_DOCUMENTS: Final = 1000
"""The smallest catalog whose index is saved in the cache directory: below it, indexing takes
about as long as loading (docs/performance.md, "Search")."""

Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]
_NAME = 0
"""The column of the ``name`` field in :data:`~.fields.FIELDS`."""
_NO_ROWS: Int32Array = np.zeros((0, FIELD_COUNT), dtype=np.int32)
_NO_INTS: Int32Array = np.zeros(0, dtype=np.int32)


def bm25_idf(document_count: int, document_frequency: int) -> float:
    """The spec's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); always positive."""
    return math.log1p((document_count - document_frequency + 0.5) / (document_frequency + 0.5))


@dataclass
class _Segment:
    """Postings of the documents in slots ``first_slot .. first_slot + size - 1``: those of term
    t are ``slots[offsets[t]:offsets[t + 1]]`` (t < len(offsets) - 1), with ``counts`` (per
    posting, the term's frequency in each field, columns in FIELDS order)."""

    first_slot: int
    size: int
    offsets: Int64Array
    slots: Int32Array
    counts: npt.NDArray[np.uint16]
    dead: int = 0
    _cache: tuple[npt.NDArray[np.float64], npt.NDArray[np.uint32]] | None = None

    def as_kernel_segment(self, cached: bool = True) -> tuple[Any, ...]:
        """What the kernel takes for it (see :data:`.kernel_numpy.Segment`); ``cached``: with
        the arrays it keeps its postings' saturations in (valid while the index's version and
        so its average lengths stay the same)."""
        cache: tuple[Any, Any] = (None, None)
        if cached:
            if self._cache is None:
                # np.empty: pages that no query touches are never committed.
                self._cache = (
                    np.empty(len(self.slots), dtype=np.float64),
                    np.zeros(max(len(self.offsets) - 1, 0), dtype=np.uint32),
                )
            cache = self._cache
        dead = int(self.dead > 0)
        # Memoryviews: the kernel takes a view of each array a query, cheaper from these.
        arrays = [array.data for array in (self.offsets, self.slots, self.counts)]
        views = [None if array is None else array.data for array in cache]
        return (self.first_slot, self.size, *arrays, dead, 0, *views)

    def terms(self) -> Int32Array:
        """The term of each posting."""
        count = len(self.offsets) - 1
        found: Int32Array = np.repeat(np.arange(count, dtype=np.int32), np.diff(self.offsets))
        return found


class BM25Index:
    """BM25F search over tool documents; implements
    :class:`~hermes_core.search._backend.SearchBackend`.

    ``build`` indexes a catalog; ``add``/``remove`` change it incrementally (one server's tools)
    and leave every score exactly as a full rebuild would give it. ``field_weights`` maps each
    field of :data:`~.fields.FIELDS` to its weight (a field of weight 0 is not indexed);
    ``equivalents`` is the lexical equivalence table queries are expanded with; ``kernel`` the
    query loop (:data:`.kernel.KERNELS`; by default the C one when it was built). With a
    ``cache_dir``, a build of at least ``persist_min_documents`` documents is saved there and
    loaded next time (see the module docstring).
    """

    def __init__(
        self,
        documents: Sequence[ToolDocument] = (),
        *,
        compact_min_dead: int = 1024,
        field_weights: Mapping[str, float] = FIELD_WEIGHTS,
        equivalents: Equivalents = EQUIVALENTS,
        kernel: ModuleType = DEFAULT,
        cache_dir: Path | None = None,
        persist_min_documents: int = PERSIST_MIN_DOCUMENTS,
    ) -> None:
        # Dead slots cost memory and a filter per query; past this many (and more dead than
        # live) the index rebuilds itself from the live documents.
        self._compact_min_dead = compact_min_dead
        self._field_weights = {name: float(field_weights[name]) for name in FIELDS}
        self._weights = tuple(self._field_weights[name] for name in FIELDS)
        self._indexed = tuple(bool(weight) for weight in self._weights)
        self._equivalents = equivalents
        self._kernel = kernel
        self._store = IndexStore(cache_dir) if cache_dir is not None else None
        self._persist_min_documents = persist_min_documents
        self._scratch = bytearray()
        self._version = 0
        """Changes with every build, add and remove: the key of the cached query analysis and
        of the kernel's view of the segments."""
        self.loaded_from: Path | None = None
        """The cache file the last build was loaded from, ``None`` when it indexed."""
        self.build(documents)

    # -- building ------------------------------------------------------------------------------

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index with ``documents`` (a repeated name keeps its last copy),
        from the cache directory when it holds this catalog's index."""
        self.loaded_from = None
        store = self._store
        if store is None or len(documents) < self._persist_min_documents:
            self._rebuild(documents, Vocabulary(kernel=self._kernel))
            return
        key = content_key(documents, self._field_weights)
        stored = store.load(key)
        if stored is not None and self._install(stored, documents):
            self.loaded_from = stored.path
            return
        self._rebuild(documents, Vocabulary(kernel=self._kernel))
        if len(self._segments) <= 1:
            store.save(key, self._stored_arrays(), self._group_names)

    def _reset(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self._frequencies: Int32Array = np.zeros(len(vocabulary), dtype=np.int32)
        self._frequency: memoryview = self._frequencies.data
        self._lengths: Int32Array = _NO_ROWS
        self._total_lengths: Int64Array = np.zeros(FIELD_COUNT, dtype=np.int64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._name_sizes: Int32Array = _NO_INTS
        self._slot_groups: Int32Array = _NO_INTS
        self._documents: list[ToolDocument | None] | DocumentSlots = []
        self._slot_of: dict[str, int] = {}
        self._exact: dict[str, int | list[int]] = {}
        self._segments: list[_Segment] = []
        self._live = 0
        # Groups: an id per group name, each slot's group id, live members and name tokens, and
        # for each token the groups whose names hold it.
        self._group_ids: dict[str, int] = {}
        self._group_sizes: list[int] = []
        self._group_tokens: list[tuple[str, ...]] = []
        self._group_terms: list[Int32Array] = []
        self._group_names: list[str] = []
        self._groups_of_token: dict[str, list[int]] = {}
        self._last_analysis: tuple[tuple[object, ...], QueryAnalysis] | None = None
        self._view: _Context | None = None
        self._version += 1

    def _rebuild(self, documents: Sequence[ToolDocument], vocabulary: Vocabulary) -> None:
        self._reset(vocabulary)
        self.add(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index ``documents`` after the existing ones; a name already indexed is replaced (its
        new copy takes the new registry position)."""
        self._version += 1
        batch, names = _latest(documents)
        if not batch:
            return
        replaced = [name for name in names if name in self._slot_of]
        if replaced:
            self._remove_slots([self._slot_of.pop(name) for name in replaced])
        first_slot = len(self._documents)
        if isinstance(batch, KeyedDocuments):
            if not first_slot:
                # As an index loaded from the cache keeps them: each made when its slot is read.
                self._documents = DocumentSlots()
            group_names = list(batch.groups)
        else:
            group_names = [document.group for document in batch]
        distinct = list(dict.fromkeys(group_names))
        self._register_groups(distinct)
        group_of = {group: self._group_ids[group] for group in distinct}
        groups = np.fromiter(map(group_of.__getitem__, group_names), np.int32, len(batch))
        bare = bare_names(batch, names)
        postings = self._postings(batch, bare)
        self._count_frequencies(postings, 1)
        self._append_slots(batch, names, bare, postings.lengths, postings.name_sizes, groups)
        slots = postings.docs + np.int32(first_slot)
        self._segments.append(
            _Segment(first_slot, len(batch), postings.offsets, slots, postings.counts)
        )
        self._merge_small_segments()

    def _append_slots(
        self,
        batch: Sequence[ToolDocument],
        names: Sequence[str],
        bare: Sequence[str],
        lengths: Int32Array,
        name_sizes: Int32Array,
        groups: Int32Array,
    ) -> None:
        """Give ``batch`` (with its names and :func:`~.build.bare_names`) the next slots."""
        first_slot = len(self._documents)
        self._documents.extend(batch)
        self._lengths = np.concatenate([self._lengths, lengths]) if len(self._lengths) else lengths
        self._name_sizes = np.concatenate([self._name_sizes, name_sizes])
        self._alive = np.concatenate([self._alive, np.ones(len(batch), dtype=bool)])
        self._slot_groups = np.concatenate([self._slot_groups, groups.astype(np.int32)])
        slots = range(first_slot, first_slot + len(batch))
        self._slot_of.update(zip(names, slots, strict=True))
        # The keys of exact_name_keys but a tool's own name, which _slot_of finds: a catalog
        # of lowercase names without mcp__ prefixes needs none.
        joined = "\x00".join(names)
        spaced = joined.split(maxsplit=1) != [joined]  # str.split's whitespace is strip's
        if spaced or joined != joined.lower() or MCP_PREFIX in joined:
            for name, plain, slot in zip(names, bare, slots, strict=True):
                key = name.strip().lower()
                if key != name:
                    self._add_exact(key, slot)
                other = plain.strip().lower()
                if other != key and other != name:
                    self._add_exact(other, slot)
        counts = np.bincount(groups, minlength=len(self._group_sizes)).tolist()
        self._group_sizes = [
            size + added for size, added in zip(self._group_sizes, counts, strict=True)
        ]
        self._live += len(batch)
        self._total_lengths += lengths.sum(axis=0, dtype=np.int64)

    def _postings(self, batch: Sequence[ToolDocument], bare: Sequence[str]) -> Postings:
        """The postings of ``batch`` (with its :func:`~.build.bare_names`) in this index's
        vocabulary and fields."""
        return index_batch(
            batch,
            self._vocabulary,
            self._indexed,
            self._group_term_ids,
            self._kernel.postings,
            bare,
        )

    def _add_exact(self, key: str, slot: int) -> None:
        """Let ``key`` name ``slot`` exactly (a key most often names one tool: then it maps to
        its slot, else to the list of them)."""
        held = self._exact.get(key)
        if held is None:
            self._exact[key] = slot
        elif isinstance(held, int):
            self._exact[key] = [held, slot]
        else:
            held.append(slot)

    def _count_frequencies(self, postings: Postings, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) the document frequencies of ``postings``."""
        size = len(self._vocabulary)
        if len(self._frequencies) < size:
            grown = np.zeros(max(size, 2 * len(self._frequencies)), dtype=np.int32)
            grown[: len(self._frequencies)] = self._frequencies
            self._frequencies = grown
            self._frequency = grown.data
        added = postings.document_frequencies.astype(np.int32)
        if sign > 0:
            self._frequencies[: len(added)] += added
        else:
            self._frequencies[: len(added)] -= added

    def _group_id(self, group: str) -> int:
        found = self._group_ids.get(group)
        if found is None:
            self._register_groups([group])
            found = self._group_ids[group]
        return found

    def _register_groups(self, groups: Sequence[str]) -> None:
        """Give the new ones of ``groups`` ids, in order, with their names' tokens (tokenized
        together, through the word table)."""
        new = [group for group in dict.fromkeys(groups) if group not in self._group_ids]
        named = [group for group in new if group and group != ToolDocument.OTHER_GROUP]
        terms, of_group = self._vocabulary.text_terms(named)
        sizes = np.bincount(of_group, minlength=len(named)).tolist()
        runs = dict(
            zip(named, np.split(terms, np.cumsum(sizes)[:-1]), strict=True) if named else ()
        )
        vocabulary = self._vocabulary.terms
        for group in new:
            found = self._group_ids[group] = len(self._group_sizes)
            self._group_sizes.append(0)
            self._group_names.append(group)
            ids = runs.get(group, _NO_INTS).astype(np.int32)
            tokens = tuple(dict.fromkeys(vocabulary[term] for term in ids.tolist()))
            self._group_tokens.append(tokens)
            self._group_terms.append(ids)
            for token in tokens:
                self._groups_of_token.setdefault(token, []).append(found)

    def _group_term_ids(self, group: str) -> Int32Array:
        """The term ids of a group name's tokens (repeats kept; none for an unnamed group)."""
        return self._group_terms[self._group_id(group)]

    # -- removing ------------------------------------------------------------------------------

    def remove(self, names: Collection[str]) -> None:
        """Drop the documents named in ``names``; unknown names are ignored."""
        slots = [self._slot_of.pop(name) for name in set(names) if name in self._slot_of]
        self._version += 1
        if slots:
            self._remove_slots(slots)
            self._compact_if_sparse()

    def _remove_slots(self, slots: Sequence[int]) -> None:
        documents = [self._documents[slot] for slot in slots]
        batch = [document for document in documents if document is not None]
        # The documents' frequencies come out again as they went in: tokenized anew (each of
        # their words is in the word table already).
        postings = self._postings(batch, bare_names(batch))
        self._count_frequencies(postings, -1)
        firsts = [segment.first_slot for segment in self._segments]
        for slot, document in zip(slots, documents, strict=True):
            self._segments[bisect.bisect_right(firsts, slot) - 1].dead += 1
            self._alive[slot] = False
            self._live -= 1
            self._group_sizes[int(self._slot_groups[slot])] -= 1
            self._documents[slot] = None
            if document is not None:
                for key in exact_name_keys(document):
                    if key == document.name:
                        continue  # found through _slot_of
                    holders = self._exact[key]
                    if isinstance(holders, int):
                        del self._exact[key]
                    else:
                        holders.remove(slot)
                        if len(holders) == 1:
                            self._exact[key] = holders[0]
        self._total_lengths -= self._lengths[list(slots)].sum(axis=0, dtype=np.int64)

    def _compact_if_sparse(self) -> None:
        dead = len(self._documents) - self._live
        if dead >= self._compact_min_dead and dead > self._live:
            live = [document for document in self._documents if document is not None]
            self._rebuild(live, self._vocabulary)

    def _merge_small_segments(self) -> None:
        # Merge the last two segments while the newer is at least half the older: the count of
        # segments stays logarithmic, and adding one server to a large index stays cheap.
        segments = self._segments
        while len(segments) >= 2 and segments[-1].size * 2 >= segments[-2].size:
            newer = segments.pop()
            older = segments.pop()
            segments.append(self._merged(older, newer))

    def _merged(self, older: _Segment, newer: _Segment) -> _Segment:
        terms: list[Int32Array] = []
        slots: list[Int32Array] = []
        counts: list[npt.NDArray[np.uint16]] = []
        for segment in (older, newer):
            segment_terms = segment.terms()
            keep = self._alive[segment.slots] if segment.dead else slice(None)
            terms.append(segment_terms[keep])
            slots.append(segment.slots[keep])
            counts.append(segment.counts[keep])
        every_term = np.concatenate(terms)
        # Stable: a term's postings of the older segment, then the newer's, each in slot order.
        order = np.argsort(every_term, kind="stable")
        offsets = np.zeros(len(self._vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(every_term, minlength=len(self._vocabulary)), out=offsets[1:])
        # Dead slots keep their place, without postings, until the next full compaction; so the
        # merged segment needs no liveness filter until its next removal.
        return _Segment(
            older.first_slot,
            older.size + newer.size,
            offsets,
            np.concatenate(slots)[order],
            np.concatenate(counts)[order],
        )

    # -- persistence ---------------------------------------------------------------------------

    def _stored_arrays(self) -> dict[str, npt.NDArray[Any]]:
        segment = self._segments[0] if self._segments else None
        terms = "\n".join(self._vocabulary.terms).encode()  # UTF-8: any script makes terms
        return {
            "terms": np.frombuffer(terms, dtype=np.uint8),
            "lengths": self._lengths,
            "name_sizes": self._name_sizes,
            "groups": self._slot_groups,
            "offsets": segment.offsets if segment else np.zeros(1, dtype=np.int64),
            "slots": segment.slots if segment else _NO_INTS,
            "counts": segment.counts if segment else np.zeros((0, FIELD_COUNT), np.uint16),
        }

    def _install(self, stored: StoredIndex, documents: Sequence[ToolDocument]) -> bool:
        """Take the index of ``documents`` from ``stored``; ``False`` (with a warning) when its
        arrays do not describe them. Keyed documents are not made: their slots make each
        when it is read (:class:`~.build.DocumentSlots`)."""
        keyed = isinstance(documents, KeyedDocuments)
        batch: Sequence[ToolDocument]
        if isinstance(documents, KeyedDocuments):
            batch, names, groups = documents, list(documents.names), list(documents.groups)
        else:
            batch, names = _latest(documents)
            groups = [document.group for document in batch]
        arrays = stored.arrays
        problem = _check_layout(arrays)
        terms: list[str] = []
        if problem is None and len(arrays["terms"]):
            terms = bytes(arrays["terms"]).decode("utf-8", "replace").split("\n")
        if problem is None:
            problem = _check_stored(arrays, len(batch), len(terms), len(stored.groups))
        if problem is None and stored.groups != list(dict.fromkeys(groups)):
            problem = "its groups are not the catalog's"
        if problem is not None:
            logger.warning(
                "ignoring the bm25 index cache %s: %s; rebuilding it", stored.path, problem
            )
            return False
        self._reset(Vocabulary(terms, self._kernel))
        if keyed:
            self._documents = DocumentSlots()
        self._register_groups(stored.groups)  # the ids a build gives them, in the same order
        offsets = arrays["offsets"]
        self._count_frequencies(
            Postings(offsets, arrays["slots"], arrays["counts"], _NO_ROWS, _NO_INTS), 1
        )
        lengths, sizes, slot_groups = arrays["lengths"], arrays["name_sizes"], arrays["groups"]
        self._append_slots(batch, names, bare_names(batch, names), lengths, sizes, slot_groups)
        if batch:
            self._segments.append(
                _Segment(0, len(batch), offsets, arrays["slots"], arrays["counts"])
            )
        return True

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
        term = self._vocabulary.ids.get(token)
        return 0 if term is None else int(self._frequency[term])

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
        (:mod:`.analysis`); the last answer is kept, as ``tool_search`` asks for the hits and
        the unmatched words of each query."""
        key = (query, tuple([document.name for document in extra]) if extra else (), self._version)
        if self._last_analysis is not None and self._last_analysis[0] == key:
            return self._last_analysis[1]
        ids, frequency = self._vocabulary.ids, self._frequency
        known: Callable[[str], bool]
        if extra:
            extra_tokens: set[str] = set()
            for document in extra:
                for field_tokens in extra_document_fields(document):
                    extra_tokens.update(field_tokens)

            def known(token: str) -> bool:
                term = ids.get(token)
                return token in extra_tokens or (term is not None and frequency[term] > 0)
        else:
            known = self._context().holds.__getitem__

        analysis = analyze_query(query, known, self._equivalents)
        self._last_analysis = (key, analysis)
        return analysis

    def _context(self) -> _Context:
        """What ranking a query over the index alone needs, kept until the index changes."""
        context = self._view
        if context is None or context.version != self._version:
            context = self._view = _Context(
                self._version,
                self._live,
                [segment.as_kernel_segment() for segment in self._segments],
                _length_factors(self._total_lengths, max(self._live, 1)),
                self._weights,
                self._vocabulary.ids,
                self._frequency,
                self._equivalents,
            )
            context.slot_count = len(self._documents)
            context.scratch = scratch_bytes(self._kernel, len(self._documents))
            context.columns = tuple(
                array.data
                for array in (self._lengths, self._alive, self._name_sizes, self._slot_groups)
            )
        return context

    def _extra_context(
        self,
        extra: Sequence[ToolDocument],
        query_terms: Collection[str],
        expanded: Sequence[str],
    ) -> _Context:
        """What ranking a query over the index and the ``extra`` candidates needs: they change
        N and the average lengths, for this query only."""
        unique = {document.name: document for document in extra}
        documents = [d for d in unique.values() if d.name not in self._slot_of]
        wanted = {*query_terms}
        for token in expanded:
            wanted.update(equivalent_words(self._equivalents, token))
        slot_count = len(self._documents)
        segment, lengths, sizes, local_ids, frequencies = self._extra_segment(
            documents, wanted, slot_count
        )
        # The extra candidates change the average lengths: no cached saturations.
        segments = [segment.as_kernel_segment(False) for segment in self._segments]
        segments.append(segment)
        context = _Context(
            self._version,
            self._live + len(documents),
            segments,
            _length_factors(
                self._total_lengths + lengths.sum(axis=0, dtype=np.int64),
                self._live + len(documents),
            ),
            self._weights,
            self._vocabulary.ids,
            self._frequency,
            self._equivalents,
            local_ids,
            frequencies,
        )
        context.extra_documents = documents
        context.extra_lengths = lengths
        context.extra_sizes = sizes
        context.extra_groups = np.asarray(
            [self._group_ids.get(d.group, -1) for d in documents], dtype=np.int32
        )
        context.scratch = scratch_bytes(self._kernel, slot_count + len(documents))
        context.columns = (self._lengths, self._alive, self._name_sizes, self._slot_groups)
        return context

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
        query_terms = dict.fromkeys(tokens, 1.0)
        if len(query_terms) < len(tokens):  # a token repeated counts again
            query_terms = {}
            for token in tokens:
                query_terms[token] = query_terms.get(token, 0.0) + 1.0
        context = self._extra_context(extra, query_terms, expanded) if extra else self._context()
        if context.document_count == 0:
            return []
        slot_count = len(self._documents)
        extra_documents = context.extra_documents
        known: list[str] = []
        parts: list[tuple[int, float, int, int, int]] = []
        frequencies: dict[str, int] = {}
        # Per token, the most it adds to a score (a saturation is below 1): the kernel prunes
        # with them under admission off, and under strict and lenient with no coverage floor.
        bounds: list[float] = []
        looked_up = context.tokens
        for token, repeats in query_terms.items():
            term, local, frequency, idf = looked_up.get(token) or context.token(token)
            frequencies[token] = frequency
            if frequency:
                weight = repeats * idf * (K1 + 1.0)
                parts.append((len(known), weight, term, local, -1))
                known.append(token)
                bounds.append(weight)
        held = len(known)  # the distinct tokens some document holds
        # An expansion token's score is its equivalents' term scores, each at its own weight,
        # added in the order of the equivalence table: over the index alone, their run merged
        # once a version (one part); with extra candidates, one part an equivalent.
        segments = context.segments
        expansions, runs = context.expansions, context.merged
        for token in expanded:
            expansion = expansions.get(token)
            if expansion is None:
                expansion = context.expansion(token)
            merged = None
            if not extra and expansion:
                merged = runs.get(token, -2)
                if merged == -2:
                    merged = self._merged_expansion(context, token)
            if not expansion or (merged is None and not extra):
                continue
            position = len(known)
            known.append(expansion_token(token))
            if merged is None:
                bounds.append(sum(weight for _, _, weight in expansion))
                parts += [(position, weight, term, local, -1) for term, local, weight in expansion]
            else:
                bounds.append(context.merged_bounds[merged])  # its run's largest score
                parts.append((position, 1.0, -1, -1, merged))
                segments = context.segments_with_expansions
        exact = self._exact_slots(exact_query, extra_documents, slot_count)
        if extra_documents:
            named = self._named_groups(known, frequencies, extra_documents)
            named_ids = self._named_ids(named, extra_documents, context.extra_groups)
        else:
            named_ids = self._named_group_ids(context, known)
        required: bytes | None = None
        floor = 0
        if admission != "off":
            rarest = required_tokens(admission, frequencies, context.document_count)
            if held < len(frequencies) and not all(map(frequencies.__getitem__, rarest)):
                rarest = frozenset()  # a token no tool has: nothing but an exact name passes
            required = bytes(map(rarest.__contains__, known))
            floor = coverage_floor(held, admission)
        if len(self._scratch) < context.scratch:
            self._scratch = bytearray(context.scratch + context.scratch // 4)
        kernel = self._kernel if len(known) <= self._kernel.MAX_TOKENS else kernel_numpy
        # The kernel fills hits from a list of documents; an index loaded by its documents' key
        # makes them one slot at a time (DocumentSlots), so its hits are made here.
        plain = _PLAIN_HITS and type(self._documents) is list
        found = kernel.search(
            segments,
            slot_count,
            *context.columns,
            context.extra_lengths,
            context.extra_sizes,
            context.extra_groups,
            self._scratch,
            context.params,
            parts,
            known,
            required,
            floor,
            exact,
            named_ids,
            limit,
            self._version % 0xFFFFFFFF + 1,
            bounds
            if (required is None or (floor == 0 and PRUNE_REQUIRED)) and len(bounds) > 1
            else None,
            PRUNE_SHARE,
            (SearchHit, self._documents, extra_documents) if plain else None,
            SIFT_MIN_SLOTS,
            DENSE_SHARE,
        )
        if plain:
            return found  # type: ignore[no-any-return]
        documents = self._documents
        return [
            SearchHit(
                documents[slot].name
                if slot < slot_count
                else extra_documents[slot - slot_count].name,
                score,
                matched,
            )
            for slot, score, matched in found
        ]

    def _merged_expansion(self, context: _Context, token: str) -> int | None:
        """The id of ``token``'s merged expansion run in the context's expansion segment
        (merged on first use: per document, its equivalents' weighted saturations added in
        table order, as a part an equivalent would add them), or ``None`` when no document
        holds any equivalent."""
        merged = context.merged.get(token, -2)
        if merged != -2:
            return merged
        found: list[tuple[Int32Array, npt.NDArray[np.float64], npt.NDArray[np.bool_]]] = []
        params = context.params
        for term, _, weight in context.expansion(token):
            for segment in self._segments:
                if term >= len(segment.offsets) - 1:
                    continue
                start, end = int(segment.offsets[term]), int(segment.offsets[term + 1])
                slots, counts = segment.slots[start:end], segment.counts[start:end]
                if segment.dead:
                    keep = self._alive[slots]
                    slots, counts = slots[keep], counts[keep]
                values = saturations(counts, self._lengths[slots], params)
                found.append((slots, weight * values, counts[:, _NAME] > 0))
        if not found or not sum(len(slots) for slots, _, _ in found):
            context.merged[token] = None
            return None
        every = np.concatenate([slots for slots, _, _ in found])
        order = np.argsort(every, kind="stable")
        first = np.ones(len(every), dtype=bool)
        ordered = every[order]
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        inverse = np.empty(len(every), dtype=np.int64)
        inverse[order] = np.cumsum(first) - 1
        # bincount adds in input order: each document's parts in table order, from 0.0.
        totals = np.bincount(inverse, weights=np.concatenate([v for _, v, _ in found]))
        names = np.bincount(inverse, weights=np.concatenate([n for _, _, n in found])) > 0
        return context.add_merged(token, ordered[first], np.where(names, -totals, totals))

    def _named_group_ids(self, context: _Context, tokens: Sequence[str]) -> list[int]:
        """:meth:`_named_groups` over the index alone, as group ids, with each token's groups
        looked up once per version of the index (a query rarely holds one)."""
        naming = context.naming
        found: list[int] = []
        held: set[str] | None = None
        for token in tokens:  # distinct
            groups = naming.get(token)
            if groups is None:
                groups = naming[token] = (
                    self._naming_groups(token, context) if token in self._groups_of_token else []
                )
            for group_id, group_tokens in groups:
                if len(group_tokens) > 1:
                    held = set(tokens) if held is None else held
                    if not held.issuperset(group_tokens):
                        continue
                if group_id not in found:
                    found.append(group_id)
        return found

    def _naming_groups(self, token: str, context: _Context) -> list[tuple[int, tuple[str, ...]]]:
        """The live groups ``token`` may name, with their tokens: those that own at least
        :data:`NAMED_GROUP_SHARE` of each of their tokens' holders (document frequencies do not
        change with the query, so this holds for every query over this state of the index; the
        query names one of them when it holds all its tokens)."""
        largest = max(self._group_sizes, default=0) / NAMED_GROUP_SHARE
        if context.token(token)[2] > largest:
            return []
        found = []
        for group_id in self._groups_of_token.get(token, ()):
            size, group_tokens = self._group_sizes[group_id], self._group_tokens[group_id]
            if (
                size
                and group_tokens
                and all(size >= NAMED_GROUP_SHARE * context.token(t)[2] for t in group_tokens)
            ):
                found.append((group_id, group_tokens))
        return found

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
        group_sizes, group_names = self._group_sizes, self._group_names
        for token in self._groups_of_token.keys() & held:
            if frequencies.get(token, 0) > largest:
                continue
            for group_id in self._groups_of_token[token]:
                if group_sizes[group_id]:
                    group = group_names[group_id]
                    sizes[group] = group_sizes[group_id]
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

    def _named_ids(
        self, named: frozenset[str], extra: Sequence[ToolDocument], extra_groups: Int32Array
    ) -> list[int]:
        """The group ids of ``named``; a group only the extra candidates have gets an id of its
        own (written into ``extra_groups``)."""
        if not named:
            return []
        ids = [self._group_ids[group] for group in named if group in self._group_ids]
        next_id = len(self._group_names)
        for group in sorted(named - self._group_ids.keys()):
            for position, document in enumerate(extra):
                if document.group == group:
                    extra_groups[position] = next_id
            ids.append(next_id)
            next_id += 1
        return ids

    def _extra_segment(
        self, documents: Sequence[ToolDocument], wanted: Collection[str], first_slot: int
    ) -> tuple[Any, Int32Array, Int32Array, dict[str, int], dict[str, int]]:
        """A segment of the extra candidates' postings of the ``wanted`` tokens (numbered
        among themselves), in the slots after the index's; their field lengths and name sizes;
        the tokens' local ids; and each token's count of holders among them. Nothing is added
        to the index."""
        lengths = np.zeros((len(documents), FIELD_COUNT), dtype=np.int32)
        sizes = np.ones(len(documents), dtype=np.int32)
        found: dict[str, list[tuple[int, list[int]]]] = {}
        for local, document in enumerate(documents):
            fields = extra_document_fields(document)
            sizes[local] = max(len(set(fields[_NAME])), 1)
            counts: dict[str, list[int]] = {}
            for column, field_tokens in enumerate(fields):
                if not self._indexed[column]:
                    continue
                lengths[local, column] = len(field_tokens)
                for token in field_tokens:
                    if token in wanted:
                        counts.setdefault(token, [0] * FIELD_COUNT)[column] += 1
            for token, row in counts.items():
                found.setdefault(token, []).append((first_slot + local, row))
        local_ids = {token: position for position, token in enumerate(found)}
        offsets = np.zeros(len(found) + 1, dtype=np.int64)
        np.cumsum([len(rows) for rows in found.values()], out=offsets[1:])
        slots = np.asarray([slot for rows in found.values() for slot, _ in rows], dtype=np.int32)
        counts_array = np.minimum(
            np.asarray([row for rows in found.values() for _, row in rows], dtype=np.int64).reshape(
                -1, FIELD_COUNT
            ),
            MAX_COUNT,
        ).astype(np.uint16)
        segment = (first_slot, len(documents), offsets, slots, counts_array, 0, 1, None, None)
        frequencies = {token: len(rows) for token, rows in found.items()}
        return segment, lengths, sizes, local_ids, frequencies

    def _exact_slots(
        self, query: str | None, extra: Sequence[ToolDocument], slot_count: int
    ) -> list[int]:
        if query is None:
            return []
        key = query.strip().lower()
        held = self._exact.get(key)
        slots = [] if held is None else [held] if isinstance(held, int) else list(held)
        named = self._slot_of.get(key)  # a tool whose name is its own key
        if named is not None:
            slots.append(named)
        if len(slots) > 1:
            slots.sort()
        if extra:
            slots.extend(
                slot_count + index
                for index, document in enumerate(extra)
                if key in exact_name_keys(document)
            )
        return slots


def plain_hits(kind: type[SearchHit] = SearchHit) -> bool:
    """Whether the C kernel may make the hits itself: ``kind`` is a plain frozen dataclass of
    exactly ``name``, ``score`` and ``matched_tokens`` (no ``__slots__``, no ``__post_init__``,
    nothing but fields to set), so a new instance whose ``__dict__`` holds them is what its
    ``__init__`` makes. That ``__init__`` sets each field through ``object.__setattr__``
    (about 0.8 µs a hit against 0.1 µs): five hits were a fifth of a query over the
    5,468-tool catalog. Otherwise hits are made with the constructor."""
    names = ["name", "score", "matched_tokens"]
    return (
        dataclasses.is_dataclass(kind)
        # The declared fields, InitVar and ClassVar pseudo-fields included, are the three.
        and list(getattr(kind, "__dataclass_fields__", ())) == names
        and [field.name for field in dataclasses.fields(kind) if field.init] == names
        and "__slots__" not in vars(kind)
        and not hasattr(kind, "__post_init__")
        and kind.__new__ is object.__new__
    )


_PLAIN_HITS: Final = plain_hits()


def _latest(documents: Sequence[ToolDocument]) -> tuple[Sequence[ToolDocument], list[str]]:
    """``documents`` with each name once, its last copy, in the order of the last copies; and
    their names. Keyed documents come back as they are, none made (their names are unique)."""
    if isinstance(documents, KeyedDocuments):
        return documents, list(documents.names)
    names = [document.name for document in documents]
    if len(dict.fromkeys(names)) == len(names):
        return list(documents), names
    latest: dict[str, ToolDocument] = {}
    for document in documents:
        latest.pop(document.name, None)
        latest[document.name] = document
    return list(latest.values()), list(latest)


class _Holds(dict[str, bool]):
    """Whether any document holds a token, each token looked up once (a few bytes a distinct
    query token, for one version of the index; emptied past :data:`_MAX_HOLDS` of them)."""

    def __init__(self, ids: Mapping[str, int], frequency: memoryview) -> None:
        super().__init__()
        self._ids = ids
        self._frequency = frequency

    def __missing__(self, token: str) -> bool:
        if len(self) >= _MAX_HOLDS:
            self.clear()
        term = self._ids.get(token)
        found = self[token] = term is not None and self._frequency[term] > 0
        return found


_MAX_HOLDS = 100_000


class _Context:
    """What ranking queries over one state of the index needs: the kernel's view of the
    segments, the fields' ``b / average length``, N, and each token's term ids, document
    frequency and idf (and each expansion's parts), looked up once. With extra candidates it
    serves one query; over the index alone, every query until the index changes."""

    def __init__(
        self,
        version: int,
        document_count: int,
        segments: list[Any],
        factors: tuple[float, ...],
        weights: tuple[float, ...],
        ids: Mapping[str, int],
        frequency: memoryview,
        equivalents: Equivalents,
        local_ids: Mapping[str, int] | None = None,
        local_frequencies: Mapping[str, int] | None = None,
    ) -> None:
        self.version = version
        self.document_count = document_count
        self.segments = segments
        self.factors = factors
        self.params = (K1, 1.0 - B, NAME_BOOST, *factors, *weights)
        """What the kernel's ``params`` take: k1, 1 - b, the name boost, ``factors``, the
        fields' weights."""
        self._ids = ids
        self._frequency = frequency
        self._equivalents = equivalents
        self._local_ids = local_ids or {}
        self._local_frequencies = local_frequencies or {}
        self.tokens: dict[str, tuple[int, int, int, float]] = {}
        """What :meth:`token` found for each token so far."""
        self.expansions: dict[str, list[tuple[int, int, float]]] = {}
        """What :meth:`expansion` found for each token so far."""
        self.naming: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        """The groups each query token so far may name (see ``BM25Index._naming_groups``)."""
        self.merged: dict[str, int | None] = {}
        """Each expansion token's run in :attr:`segments_with_expansions`' last segment."""
        self._runs: list[tuple[Int32Array, npt.NDArray[np.float64]]] = []
        self.merged_bounds: list[float] = []
        """The largest score of each merged run."""
        self.segments_with_expansions: list[Any] = segments
        self.holds = _Holds(ids, frequency)
        self.scratch = 0
        self.slot_count = 0
        self.extra_documents: list[ToolDocument] = []
        self.extra_lengths: Int32Array = _NO_ROWS
        self.extra_sizes: Int32Array = _NO_INTS
        self.extra_groups: Int32Array = _NO_INTS
        self.columns: tuple[Any, ...] = ()
        """The index's field lengths, liveness, name sizes and group ids, as the kernel takes
        them."""

    def token(self, token: str) -> tuple[int, int, int, float]:
        """A token's term id in the index and among the extra candidates (-1: none), its
        document frequency, and its idf (0.0 when no document holds it)."""
        found = self.tokens.get(token)
        if found is None:
            term = self._ids.get(token, -1)
            frequency = 0 if term < 0 else self._frequency[term]
            frequency += self._local_frequencies.get(token, 0)
            idf = bm25_idf(self.document_count, frequency) if frequency else 0.0
            found = self.tokens[token] = (term, self._local_ids.get(token, -1), frequency, idf)
        return found

    def add_merged(self, token: str, slots: Int32Array, values: npt.NDArray[np.float64]) -> int:
        """Add a merged expansion run (its slots, and each one's saturation, negated when in
        the name) to the expansion segment, which spans every slot; returns its id there."""
        self._runs.append((slots.astype(np.int32), values))
        self.merged_bounds.append(float(np.abs(values).max()))
        self.merged[token] = len(self._runs) - 1
        offsets = np.zeros(len(self._runs) + 1, dtype=np.int64)
        np.cumsum([len(slots) for slots, _ in self._runs], out=offsets[1:])
        every = np.concatenate([slots for slots, _ in self._runs])
        values = np.concatenate([values for _, values in self._runs])
        expansions = (0, self.slot_count, offsets.data, every.data, None, 0, 2, values.data, None)
        self.segments_with_expansions = [*self.segments, expansions]
        return len(self._runs) - 1

    def expansion(self, token: str) -> list[tuple[int, int, float]]:
        """The parts of ``token``'s expansion token: each equivalent some document holds, with
        its term ids and its weight."""
        found = self.expansions.get(token)
        if found is None:
            found = []
            for word in equivalent_words(self._equivalents, token):
                term, local, frequency, idf = self.token(word)
                if frequency:
                    found.append((term, local, EQUIVALENT_WEIGHT * idf * (K1 + 1.0)))
            self.expansions[token] = found
        return found


def _length_factors(totals: Int64Array, document_count: int) -> tuple[float, ...]:
    """B / avglen_f per field, or 0 for a field no document has (nothing holds it either)."""
    averages = totals / document_count
    factors = np.divide(B, averages, out=np.zeros_like(averages), where=averages > 0)
    return tuple(factors.tolist())


_STORED_DTYPES: Final = {
    "terms": "uint8",
    "lengths": "int32",
    "name_sizes": "int32",
    "groups": "int32",
    "offsets": "int64",
    "slots": "int32",
    "counts": "uint16",
}


def _check_layout(arrays: Mapping[str, npt.NDArray[Any]]) -> str | None:
    """Why ``arrays`` are not the arrays :meth:`BM25Index._stored_arrays` writes, or ``None``."""
    if set(arrays) != _STORED_DTYPES.keys() or any(
        str(arrays[name].dtype) != dtype for name, dtype in _STORED_DTYPES.items()
    ):
        return "it does not hold the arrays of an index"
    return None


def _check_stored(
    arrays: Mapping[str, npt.NDArray[Any]], documents: int, terms: int, groups: int
) -> str | None:
    """Why ``arrays`` cannot be the index of ``documents`` documents over ``terms`` terms and
    ``groups`` groups, or ``None`` when they can (shapes, ranges and order of every array)."""
    offsets, slots, counts = arrays["offsets"], arrays["slots"], arrays["counts"]
    lengths, sizes, slot_groups = arrays["lengths"], arrays["name_sizes"], arrays["groups"]
    if offsets.shape != (terms + 1,) or counts.shape != (len(slots), FIELD_COUNT):
        return "its postings do not fit its vocabulary"
    if lengths.shape != (documents, FIELD_COUNT) or sizes.shape != (documents,):
        return "it was built for another number of documents"
    if slot_groups.shape != (documents,):
        return "it was built for another number of documents"
    if offsets[0] != 0 or offsets[-1] != len(slots) or (np.diff(offsets) < 0).any():
        return "its term offsets are out of order"
    if len(slots) and (slots.min() < 0 or slots.max() >= documents):
        return "a posting names no document"
    rising = slots[1:] > slots[:-1]
    starts = offsets[1:-1]
    rising[starts[(starts > 0) & (starts < len(slots))] - 1] = True
    if not rising.all():
        return "its postings are out of order"
    if documents and (lengths.min() < 0 or sizes.min() < 1):
        return "its field lengths are out of range"
    if documents and (slot_groups.min() < 0 or slot_groups.max() >= groups):
        return "a document has no group"
    return None

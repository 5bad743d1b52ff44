"""Indexing a batch of documents: their field lengths and their postings, built with numpy.

Each distinct word of the indexed text is tokenized once (the word table of
:class:`Vocabulary`): a batch's text is cut into raw words a chunk at a time, each raw word is
mapped to its id in one pass (by the C kernel's ``word_ids``, which makes no Python object a
word, or by its reference here, :class:`PyWordTable`), and the words seen for the first time
are split and stemmed together. Postings are then sorted out of int32 arrays, never out of a
Python list a token. The result is exactly what tokenizing each document's fields one by one
(:func:`~.fields.document_fields`) gives; ``tests/test_bm25_build.py`` beside it checks it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count, islice, pairwise
from types import ModuleType
from typing import Any, Final, overload

import numpy as np
import numpy.typing as npt

from hermes_core.search import KeyedDocuments, ToolDocument

from .fields import FIELDS
from .tokenize import TEXT_BREAK, raw_text, stem_words, word_pieces

__all__ = [
    "FIELD_COUNT",
    "MAX_COUNT",
    "DocumentSlots",
    "Postings",
    "PyWordTable",
    "Vocabulary",
    "bare_names",
    "index_batch",
    "sorted_postings",
    "word_ids",
    "word_table",
]

FIELD_COUNT: Final = len(FIELDS)
MAX_COUNT: Final = int(np.iinfo(np.uint16).max)
"""Term frequencies are kept per field as uint16; a larger one counts as this."""
CHUNK_CHARACTERS: Final = 1 << 18
"""Text is split into words this many characters at a time (a Python object a word, briefly)."""
KEYED_CHUNK: Final = 32_768
"""A :class:`~hermes_core.KeyedDocuments` batch larger than this is indexed a chunk of this many
documents at a time, each made once and let go (a catalog of 330,000 tools with real schemas
held 900 MB of documents made at once); the same postings, its terms numbered in another
order."""

Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]
_NAME, _GROUP, _DESCRIPTION, _PARAMETER_NAMES, _PARAMETER_DESCRIPTIONS = range(FIELD_COUNT)
_NO_DOCS: Int32Array = np.zeros(0, dtype=np.int32)
_NO_COUNTS: npt.NDArray[np.uint16] = np.zeros((0, FIELD_COUNT), dtype=np.uint16)


class _Growing:
    """A numpy array that grows at its end in amortized constant time."""

    def __init__(self, dtype: type[np.generic]) -> None:
        self._data: npt.NDArray[Any] = np.zeros(64, dtype=dtype)
        self.size = 0

    def extend(self, values: npt.ArrayLike) -> None:
        values = np.asarray(values, dtype=self._data.dtype)
        end = self.size + len(values)
        if end > len(self._data):
            grown = np.zeros(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : end] = values
        self.size = end

    @property
    def values(self) -> npt.NDArray[Any]:
        return self._data[: self.size]


class PyWordTable:
    """The word table in Python: each distinct raw word seen, numbered in order of first sight
    (the reference form of the C kernel's ``word_table``)."""

    def __init__(self) -> None:
        self.ids: defaultdict[bytes, int] = defaultdict(count().__next__)


def word_table() -> PyWordTable:
    """An empty :class:`PyWordTable`."""
    return PyWordTable()


def word_ids(table: PyWordTable, text: bytes) -> tuple[Int32Array, list[bytes]]:
    """The ids of the words of ``text`` (separated by spaces, as :func:`~.tokenize.raw_text`
    gives them) in ``table``, new words taking the next ids, and the new words in id order."""
    ids = table.ids
    known = len(ids)
    words = text.split()
    found = np.fromiter(map(ids.__getitem__, words), dtype=np.int32, count=len(words))
    new = list(islice(reversed(ids), len(ids) - known))
    new.reverse()
    return found, new


class Vocabulary:
    """The index's terms (stems), each with an id in order of first sight, and the word table:
    each distinct raw word of the indexed text, with the ids of the terms it gives (in order,
    repeats kept), tokenized once. ``kernel``: the module whose ``word_table`` and ``word_ids``
    number the words (the C kernel's, or by default this module's)."""

    def __init__(self, terms: Iterable[str] = (), kernel: ModuleType | None = None) -> None:
        self.terms: list[str] = list(terms)
        self.ids: dict[str, int] = dict(zip(self.terms, range(len(self.terms)), strict=True))
        self._word_ids: Callable[[Any, bytes], tuple[Any, list[bytes]]] = (
            kernel.word_ids if kernel is not None else word_ids
        )
        self._words: Any = kernel.word_table() if kernel is not None else word_table()
        self._word_ids(self._words, TEXT_BREAK)  # word 0: the break after each text, no terms
        self._word_starts = _Growing(np.int64)
        self._word_sizes = _Growing(np.int32)
        self._word_terms = _Growing(np.int32)
        self._word_starts.extend([0])
        self._word_sizes.extend([0])

    def __len__(self) -> int:
        return len(self.terms)

    def term_ids(self, stems: Sequence[str]) -> list[int]:
        """The ids of ``stems``, new terms taking the next ids."""
        ids = self.ids
        found: list[Any] = list(map(ids.get, stems))
        if None in found:
            missing = (stem for stem, term in zip(stems, found, strict=True) if term is None)
            new = list(dict.fromkeys(missing))
            ids.update(zip(new, range(len(self.terms), len(self.terms) + len(new)), strict=True))
            self.terms.extend(new)
            found = list(map(ids.__getitem__, stems))
        return found

    def item_terms(
        self, items: Sequence[str], item_documents: Int32Array
    ) -> tuple[Int32Array, Int32Array]:
        """As :meth:`text_terms` for ``items`` (texts of one field), giving for each token the
        document ``item_documents`` assigns its item to: each distinct item is tokenized once
        (parameter names and descriptions repeat across a catalog)."""
        distinct = dict.fromkeys(items)
        numbered = dict(zip(distinct, range(len(distinct)), strict=True))
        positions = np.fromiter(map(numbered.__getitem__, items), dtype=np.int32, count=len(items))
        terms, of_text = self.text_terms(list(numbered))
        sizes = np.bincount(of_text, minlength=len(distinct)).astype(np.int64)
        starts = np.cumsum(sizes) - sizes
        counts = sizes[positions]
        return terms[_runs(starts, counts, positions)], np.repeat(item_documents, counts)

    def text_terms(self, texts: Sequence[str]) -> tuple[Int32Array, Int32Array]:
        """The term ids of the tokens of ``texts``, in order, and for each the position of its
        text in ``texts``."""
        terms: list[Int32Array] = []
        positions: list[Int32Array] = []
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        cumulative = np.cumsum(lengths)
        total = int(cumulative[-1]) if len(cumulative) else 0
        cuts = np.searchsorted(cumulative, np.arange(CHUNK_CHARACTERS, total, CHUNK_CHARACTERS))
        bounds = sorted({0, *cuts.tolist(), len(texts)})
        for start, end in pairwise(bounds):
            chunk_terms, chunk_positions = self._chunk_terms(texts[start:end])
            terms.append(chunk_terms)
            chunk_positions += np.int32(start)
            positions.append(chunk_positions)
        if not terms:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        return np.concatenate(terms), np.concatenate(positions)

    def _chunk_terms(self, texts: Sequence[str]) -> tuple[Int32Array, Int32Array]:
        found, new_words = self._word_ids(self._words, raw_text(texts))
        word_ids: Int32Array = np.frombuffer(found, dtype=np.int32)
        if new_words:
            self._learn(new_words)
        breaks = word_ids == 0
        text_of_word = np.cumsum(breaks, dtype=np.int32)
        text_of_word -= breaks  # a break ends its own text
        keep = ~breaks
        word_ids, text_of_word = word_ids[keep], text_of_word[keep]
        sizes = self._word_sizes.values[word_ids]
        ends = np.cumsum(sizes, dtype=np.int64)
        total = int(ends[-1]) if len(ends) else 0
        # Each word's run of terms in the table, laid end to end.
        shift = np.repeat(self._word_starts.values[word_ids] - (ends - sizes), sizes)
        shift += np.arange(total, dtype=np.int64)
        return self._word_terms.values[shift], np.repeat(text_of_word, sizes)

    def _learn(self, new_words: list[bytes]) -> None:
        """Tokenize the words the table saw for the first time, in the order it saw them."""
        pieces: list[str] = []
        sizes: list[int] = []
        for word in map(bytes.decode, new_words):
            if word.isdigit() or (word.islower() and word.isalpha()):
                pieces.append(word)  # as word_pieces would, without the call
                sizes.append(1)
            else:
                found = word_pieces(word)
                pieces.extend(found)
                sizes.append(len(found))
        term_ids = self.term_ids(stem_words(pieces, cached=False))
        starts = np.cumsum([0, *sizes[:-1]], dtype=np.int64) + self._word_terms.size
        self._word_starts.extend(starts)
        self._word_sizes.extend(sizes)
        self._word_terms.extend(term_ids)


class DocumentSlots:
    """Each slot's document, ``None`` once removed: what a list of them holds, but the first
    slots may be :class:`~hermes_core.KeyedDocuments` (an index loaded from the cache for a
    large catalog), whose documents are made one at a time when a slot is read."""

    def __init__(self) -> None:
        self._keyed: Sequence[ToolDocument] = ()
        self._removed: set[int] = set()
        self._rest: list[ToolDocument | None] = []

    def __len__(self) -> int:
        return len(self._keyed) + len(self._rest)

    @overload
    def __getitem__(self, slot: int) -> ToolDocument | None: ...

    @overload
    def __getitem__(self, slot: slice) -> list[ToolDocument | None]: ...

    def __getitem__(self, slot: int | slice) -> ToolDocument | list[ToolDocument | None] | None:
        if isinstance(slot, slice):
            return [self[index] for index in range(*slot.indices(len(self)))]
        keyed = len(self._keyed)
        if slot >= keyed:
            return self._rest[slot - keyed]
        return None if slot in self._removed else self._keyed[slot]

    def __setitem__(self, slot: int, document: None) -> None:
        keyed = len(self._keyed)
        if slot >= keyed:
            self._rest[slot - keyed] = document
        else:
            self._removed.add(slot)

    def __iter__(self) -> Iterator[ToolDocument | None]:
        removed = self._removed
        for slot, document in enumerate(self._keyed):
            yield None if slot in removed else document
        yield from self._rest

    def extend(self, documents: Sequence[ToolDocument]) -> None:
        """Give ``documents`` the next slots (kept unmade when they are the first and keyed)."""
        if isinstance(documents, KeyedDocuments) and not len(self):
            self._keyed = documents
        else:
            self._rest.extend(documents)


@dataclass(frozen=True)
class Postings:
    """A batch's documents (numbered from 0) and their postings, term-major.

    The postings of term t are ``docs[offsets[t]:offsets[t + 1]]`` (sorted), with their
    per-field frequencies ``counts`` (a row each, columns in :data:`~.fields.FIELDS` order).
    """

    offsets: Int64Array
    docs: Int32Array
    counts: npt.NDArray[np.uint16]
    lengths: Int32Array
    """The documents' field lengths in tokens (a row each)."""
    name_sizes: Int32Array
    """How many distinct tokens each document's name has, at least 1."""

    @property
    def document_frequencies(self) -> Int64Array:
        """How many of the documents hold each term."""
        frequencies: Int64Array = np.diff(self.offsets)
        return frequencies


MCP_PREFIX: Final = "mcp__"


def bare_names(documents: Sequence[ToolDocument], names: Sequence[str] | None = None) -> list[str]:
    """The :attr:`~hermes_core.ToolDocument.bare_name` of each of ``documents``, asked only of
    the names it may change (those with an ``mcp__`` prefix): a catalog has many. ``names``:
    the documents' names, when known already (none with the prefix: they are the answer)."""
    if names is not None:
        if MCP_PREFIX not in "\x00".join(names):
            return list(names)
        # Only the documents of prefixed names are asked for (a keyed catalog makes each).
        return [
            documents[index].bare_name if name.startswith(MCP_PREFIX) else name
            for index, name in enumerate(names)
        ]
    return [
        document.bare_name if document.name.startswith(MCP_PREFIX) else document.name
        for document in documents
    ]


def _field_items(
    documents: Sequence[ToolDocument], column: int, bare: Sequence[str] | None
) -> tuple[list[str], Int32Array]:
    """The texts of one field (but the group's) of ``documents``, and each one's document."""
    size = len(documents)
    if column == _NAME:
        names = list(bare) if bare is not None else bare_names(documents)
        return names, np.arange(size, dtype=np.int32)
    if column == _DESCRIPTION:
        return [document.description for document in documents], np.arange(size, dtype=np.int32)
    lists = [
        document.parameter_names if column == _PARAMETER_NAMES else document.parameter_descriptions
        for document in documents
    ]
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=size)
    items = [item for group in lists for item in group]
    return items, np.repeat(np.arange(size, dtype=np.int32), counts)


def _field_tokens(
    documents: Sequence[ToolDocument],
    vocabulary: Vocabulary,
    indexed: Sequence[bool],
    bare: Sequence[str] | None,
) -> tuple[list[Int32Array], list[Int32Array]]:
    """Each field's tokens of ``documents`` (term ids, and each token's document); the group
    field's are left empty (:func:`_group_field` makes them from the names')."""
    terms: list[Int32Array] = []
    docs: list[Int32Array] = []
    for column in range(FIELD_COUNT):
        # The group field needs the names' tokens, indexed or not (document_fields' rule).
        needed = indexed[column] or (column == _NAME and indexed[_GROUP])
        if column == _GROUP or not needed:
            terms.append(np.zeros(0, dtype=np.int32))
            docs.append(np.zeros(0, dtype=np.int32))
            continue
        items, item_documents = _field_items(documents, column, bare)
        if column in (_NAME, _DESCRIPTION):  # a text a tool, rarely repeated
            field_terms, field_docs = vocabulary.text_terms(items)
        else:
            field_terms, field_docs = vocabulary.item_terms(items, item_documents)
        terms.append(field_terms)
        docs.append(field_docs)
    return terms, docs


def index_batch(
    documents: Sequence[ToolDocument],
    vocabulary: Vocabulary,
    indexed: Sequence[bool],
    group_terms: Callable[[str], Int32Array],
    postings: Callable[..., tuple[Any, Any, Any]],
    bare: Sequence[str] | None = None,
) -> Postings:
    """The postings of ``documents`` over the fields ``indexed`` says (one flag a field);
    ``group_terms(group)`` gives the term ids of a group name (none for an unnamed group);
    ``postings`` sorts the tokens into postings (the kernel's, or :func:`sorted_postings`);
    ``bare``: the documents' :func:`bare_names`, when known already."""
    size = len(documents)
    if isinstance(documents, KeyedDocuments) and size > KEYED_CHUNK:
        # Made and tokenized a chunk at a time: only a chunk's documents are held at once.
        chunks = []
        for start in range(0, size, KEYED_CHUNK):
            chunk = documents[start : start + KEYED_CHUNK]
            chunk_bare = None if bare is None else bare[start : start + KEYED_CHUNK]
            chunk_terms, chunk_docs = _field_tokens(chunk, vocabulary, indexed, chunk_bare)
            del chunk
            chunks.append((chunk_terms, [found + np.int32(start) for found in chunk_docs]))
        terms = [
            np.concatenate([part[0][column] for part in chunks]) for column in range(FIELD_COUNT)
        ]
        docs = [
            np.concatenate([part[1][column] for part in chunks]) for column in range(FIELD_COUNT)
        ]
        del chunks
    else:
        terms, docs = _field_tokens(documents, vocabulary, indexed, bare)
    if indexed[_GROUP]:
        groups = (
            documents.groups
            if isinstance(documents, KeyedDocuments)
            else [document.group for document in documents]
        )
        terms[_GROUP], docs[_GROUP] = _group_field(
            groups, terms[_NAME], docs[_NAME], vocabulary, group_terms
        )
    if not indexed[_NAME]:
        terms[_NAME], docs[_NAME] = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    lengths = np.zeros((size, FIELD_COUNT), dtype=np.int32)
    for column in range(FIELD_COUNT):
        lengths[:, column] = np.bincount(docs[column], minlength=size)
    offsets, slots, counts = postings(terms, docs, size, len(vocabulary))
    del terms, docs
    offsets = np.frombuffer(offsets, dtype=np.int64)
    slots = np.frombuffer(slots, dtype=np.int32)
    counts = np.frombuffer(counts, dtype=np.uint16).reshape(-1, FIELD_COUNT)
    in_name = counts[:, _NAME] > 0
    name_sizes = np.maximum(np.bincount(slots[in_name], minlength=size), 1).astype(np.int32)
    return Postings(offsets, slots, counts, lengths, name_sizes)


def _group_field(
    groups: Sequence[str],
    name_terms: Int32Array,
    name_docs: Int32Array,
    vocabulary: Vocabulary,
    group_terms: Callable[[str], Int32Array],
) -> tuple[Int32Array, Int32Array]:
    """The group field: a document's group name tokens, unless its name holds all of them."""
    group_index: dict[str, int] = {}
    of_document = np.fromiter(
        (group_index.setdefault(group, len(group_index)) for group in groups),
        dtype=np.int32,
        count=len(groups),
    )
    tables = [group_terms(group) for group in group_index]
    sizes = np.asarray([len(table) for table in tables], dtype=np.int64)
    if not sizes.any():
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    vocabulary_size = len(vocabulary)  # after group_terms, which may add terms
    distinct = [np.asarray(sorted(set(table.tolist())), dtype=np.int64) for table in tables]
    distinct_sizes = np.asarray([len(table) for table in distinct], dtype=np.int64)
    # Which documents' names hold every distinct token of their group's name.
    per_document = distinct_sizes[of_document]
    holders = np.repeat(np.arange(len(groups), dtype=np.int64), per_document)
    wanted = np.concatenate([*distinct, np.zeros(0, dtype=np.int64)])[
        _runs(np.cumsum(distinct_sizes) - distinct_sizes, per_document, of_document)
    ]
    named = np.sort(name_docs.astype(np.int64) * vocabulary_size + name_terms)
    keys = holders * vocabulary_size + wanted
    found = np.minimum(np.searchsorted(named, keys), max(len(named) - 1, 0))
    held = named[found] == keys if len(named) else np.zeros(len(keys), dtype=bool)
    missing = np.bincount(holders[~held], minlength=len(groups))
    needs = np.flatnonzero(missing > 0)
    # Their group field: the group name's tokens, repeats kept.
    counts = sizes[of_document[needs]]
    every = np.concatenate([*tables, np.zeros(0, dtype=np.int32)])
    field_terms = every[_runs(np.cumsum(sizes) - sizes, counts, of_document[needs])]
    return field_terms.astype(np.int32), np.repeat(needs, counts).astype(np.int32)


def _runs(starts: Int64Array, sizes: Int64Array, which: Int32Array) -> Int64Array:
    """The positions of runs ``starts[which[i]] .. + sizes[i]``, laid end to end."""
    ends = np.cumsum(sizes)
    positions: Int64Array = np.repeat(starts[which] - (ends - sizes), sizes)
    positions += np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
    return positions


def sorted_postings(
    terms: Sequence[Int32Array], docs: Sequence[Int32Array], size: int, vocabulary_size: int
) -> tuple[Int64Array, Int32Array, npt.NDArray[np.uint16]]:
    """Term-major postings from each field's (term, document) tokens, by sorting a key of term,
    document and field: the numpy form of the C kernel's ``postings`` (the same result)."""
    key_type = np.int32 if vocabulary_size * max(size, 1) * 8 < 2**31 else np.int64
    keys: npt.NDArray[np.signedinteger[Any]] = np.empty(sum(len(t) for t in terms), dtype=key_type)
    start = 0
    for column, (field_terms, field_docs) in enumerate(zip(terms, docs, strict=True)):
        end = start + len(field_terms)
        part = keys[start:end]
        part[:] = field_terms
        part *= size
        part += field_docs
        part *= 8
        part += column
        start = end
    if not len(keys):
        return np.zeros(vocabulary_size + 1, dtype=np.int64), _NO_DOCS, _NO_COUNTS
    keys.sort()
    # Runs of equal keys: one (term, document, field) each, its length the frequency.
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    frequencies = np.diff(np.append(starts, len(keys)))
    keys = keys[starts]
    del starts
    fields = keys & 7
    keys >>= 3
    first = np.concatenate([[True], keys[1:] != keys[:-1]])
    pair = np.cumsum(first, dtype=np.int64)
    pair -= 1
    pairs = int(pair[-1]) + 1 if len(pair) else 0
    packed = np.zeros((pairs, FIELD_COUNT), dtype=np.uint16)
    packed[pair, fields] = np.minimum(frequencies, MAX_COUNT)
    del pair, fields, frequencies
    keys = keys[first]
    pair_terms = keys // size if size else keys
    pair_docs = (keys - pair_terms * size).astype(np.int32)
    offsets = np.zeros(vocabulary_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_terms, minlength=vocabulary_size), out=offsets[1:])
    return offsets, pair_docs, packed

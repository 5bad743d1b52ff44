"""Indexing many documents at once (``build.py``: the word table, the kernel's postings) gives
exactly what tokenizing each document's fields one by one (``document_fields``) gives, with the
C kernel's word table and postings as with their references in Python."""

from __future__ import annotations

import dataclasses
import gc
import random
import weakref
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from bm25_modules import (
    KERNEL_NAMES,
    STRENGTH,
    build,
    fields,
    index,
    kernel,
    needs_c_kernel,
    tokenize,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.search import KeyedDocuments, ToolDocument

FIELD_COUNT = len(fields.FIELDS)
# Words of every shape the tokenizer splits: camelCase, acronyms and their plurals, versions,
# digits, non-ASCII letters, the break byte raw_text puts between texts, punctuation.
pieces = st.sampled_from(
    [
        "create", "Issue", "createIssue", "URLs", "IDs", "HTTPServer", "getV2Zones", "s3Bucket",
        "YouTube", "IMDb", "zones2", "base64", "42", "état", "naïve", "\x01", "the", "ISSUE",
        "pull-request", "a.b:c", "A", "Ab", "URLS", "x", "_", " ",
    ]
)  # fmt: skip
texts = st.lists(pieces, max_size=6).map(" ".join)
documents = st.builds(
    ToolDocument,
    name=st.builds(
        lambda prefix, text: prefix + text.replace(" ", "_"),
        st.sampled_from(["", "mcp__github__", "mcp__x__", "box__"]),
        texts,
    ),
    description=texts,
    group=st.sampled_from(["github", "other", "", "box", "createIssue", "Jira Cloud"]),
    parameter_names=st.lists(texts, max_size=3).map(tuple),
    parameter_descriptions=st.lists(texts, max_size=3).map(tuple),
)
indexed = st.lists(st.booleans(), min_size=FIELD_COUNT, max_size=FIELD_COUNT)


def _index(
    batch: list[ToolDocument], flags: list[bool], postings: object, numbering: object = None
) -> tuple[build.Postings, list[str]]:
    vocabulary = build.Vocabulary(kernel=numbering)  # type: ignore[arg-type]
    groups: dict[str, np.ndarray] = {}  # type: ignore[type-arg]

    def group_terms(group: str) -> np.ndarray:  # type: ignore[type-arg]
        if group not in groups:
            named = group and group != ToolDocument.OTHER_GROUP
            stems = tokenize.tokenize(group) if named else []
            groups[group] = np.asarray(vocabulary.term_ids(stems), dtype=np.int32)
        return groups[group]

    found = build.index_batch(batch, vocabulary, flags, group_terms, postings)  # type: ignore[arg-type]
    return found, vocabulary.terms


def _expected(batch: list[ToolDocument], flags: list[bool]) -> tuple[list[list[int]], dict]:  # type: ignore[type-arg]
    """Field lengths, and per (term, document) the field counts, one document at a time."""
    lengths = []
    counts: dict[tuple[str, int], list[int]] = {}
    for position, document in enumerate(batch):
        row = []
        for column, tokens in enumerate(fields.document_fields(document)):
            tokens = tokens if flags[column] else ()
            row.append(len(tokens))
            for token, count in Counter(tokens).items():
                counts.setdefault((token, position), [0] * FIELD_COUNT)[column] = count
        lengths.append(row)
    return lengths, counts


def _postings_builders() -> list[tuple[object, object]]:
    """Each way to build postings here, with the word numbering it goes with: the C kernel's
    when the install built it (KERNEL_NAMES), and the sorted reference."""
    builders: list[tuple[object, object]] = [(build.sorted_postings, None)]
    if "c" in KERNEL_NAMES:
        c = kernel.KERNELS["c"]
        builders.insert(0, (c.postings, c))
    return builders


@pytest.mark.parametrize("strength", STRENGTH)
def test_batch_indexing_gives_each_documents_fields_tokens(strength: int) -> None:
    @settings(max_examples=60 * strength, deadline=None)
    @given(batch=st.lists(documents, max_size=12), flags=indexed)
    def check(batch: list[ToolDocument], flags: list[bool]) -> None:
        _batch_indexing_gives_each_documents_fields_tokens(batch, flags)

    check()


def _batch_indexing_gives_each_documents_fields_tokens(
    batch: list[ToolDocument], flags: list[bool]
) -> None:
    lengths, counts = _expected(batch, flags)
    for postings, numbering in _postings_builders():
        found, terms = _index(batch, flags, postings, numbering)
        assert found.lengths.tolist() == (lengths or [])
        got = {}
        offsets = found.offsets.tolist()
        for term, (start, end) in enumerate(pairwise(offsets)):
            slots = found.docs[start:end].tolist()
            assert slots == sorted(slots)
            for slot, row in zip(slots, found.counts[start:end].tolist(), strict=True):
                got[(terms[term], slot)] = row
        assert got == counts
        names = [
            max(1, sum(1 for (_, slot), row in counts.items() if slot == position and row[0]))
            for position in range(len(batch))
        ]
        assert found.name_sizes.tolist() == names


@needs_c_kernel
@pytest.mark.parametrize("strength", STRENGTH)
def test_c_postings_equal_the_sorted_reference(strength: int) -> None:
    @settings(max_examples=40 * strength, deadline=None)
    @given(
        terms=st.lists(st.lists(st.integers(0, 30), max_size=40), min_size=5, max_size=5),
        documents=st.integers(1, 12),
        data=st.data(),
    )
    def check(terms: list[list[int]], documents: int, data: st.DataObject) -> None:
        _c_postings_equal_the_sorted_reference(terms, documents, data)

    check()


def _c_postings_equal_the_sorted_reference(
    terms: list[list[int]], documents: int, data: st.DataObject
) -> None:
    field_terms = [np.asarray(t, dtype=np.int32) for t in terms]
    field_docs = [
        np.sort(
            np.asarray(
                data.draw(
                    st.lists(st.integers(0, documents - 1), min_size=len(t), max_size=len(t))
                ),
                dtype=np.int32,
            )
        )
        for t in terms
    ]
    c = kernel.KERNELS["c"].postings(field_terms, field_docs, documents, 31)
    reference = build.sorted_postings(field_terms, field_docs, documents, 31)
    assert np.frombuffer(c[0], dtype=np.int64).tolist() == reference[0].tolist()
    assert np.frombuffer(c[1], dtype=np.int32).tolist() == reference[1].tolist()
    assert np.frombuffer(c[2], dtype=np.uint16).tolist() == reference[2].ravel().tolist()


words = st.text(alphabet="abAB01\x01", min_size=1, max_size=4)


@needs_c_kernel
@pytest.mark.parametrize("strength", STRENGTH)
def test_c_word_ids_number_words_as_the_python_table_does(strength: int) -> None:
    @settings(max_examples=40 * strength, deadline=None)
    @given(calls=st.lists(st.lists(words, max_size=30), min_size=1, max_size=6), spaces=st.data())
    def check(calls: list[list[str]], spaces: st.DataObject) -> None:
        _c_word_ids_number_words_as_the_python_table_does(calls, spaces)

    check()


def _c_word_ids_number_words_as_the_python_table_does(
    calls: list[list[str]], spaces: st.DataObject
) -> None:
    c = kernel.KERNELS["c"]
    c_table, py_table = c.word_table(), build.word_table()
    for call in calls:
        gaps = spaces.draw(
            st.lists(st.integers(1, 3), min_size=len(call) + 1, max_size=len(call) + 1)
        )
        spaced = "".join(" " * gap + word for gap, word in zip(gaps, [*call, ""], strict=True))
        text = spaced.encode()
        c_ids, c_new = c.word_ids(c_table, text)
        py_ids, py_new = build.word_ids(py_table, text)
        assert np.frombuffer(c_ids, dtype=np.int32).tolist() == py_ids.tolist()
        assert c_new == py_new


@needs_c_kernel
def test_the_c_word_table_keeps_every_word_apart_past_its_first_sizes() -> None:
    c = kernel.KERNELS["c"]
    table = c.word_table()
    words = [f"w{number}".encode() for number in range(50_000)]  # past 1,024 slots, 4 KB text
    ids, new = c.word_ids(table, b" ".join(words))
    assert np.frombuffer(ids, dtype=np.int32).tolist() == list(range(50_000))
    assert new == words
    again, none = c.word_ids(table, b" ".join(reversed(words)))
    assert np.frombuffer(again, dtype=np.int32).tolist() == list(reversed(range(50_000)))
    assert none == []


def test_a_term_frequency_past_uint16_counts_as_its_largest_value() -> None:
    many = np.zeros(70_000, dtype=np.int32)
    empty = np.zeros(0, dtype=np.int32)
    for postings, _ in _postings_builders():
        _, _, counts = postings(
            [empty, empty, many, empty, empty], [empty, empty, many, empty, empty], 1, 1
        )
        assert np.frombuffer(counts, dtype=np.uint16).tolist() == [0, 0, 65535, 0, 0]


def _pieces_by_the_expression(word: str) -> list[str]:
    """Rules 2-5 of the tokenizer by its regular expression alone (no shortcut)."""
    found = tokenize._PIECES.findall(word)
    result = [
        piece[:-1] if len(piece) > 2 and piece[-1] == "s" and piece[:-1].isupper() else piece
        for piece in found
    ]
    if len(found) > 1 and word.isalpha() and not word.isupper():
        result.append(word)
    return [piece.lower() for piece in result]


@pytest.mark.parametrize("strength", STRENGTH)
def test_word_pieces_shortcuts_split_as_the_expression_does(strength: int) -> None:
    @settings(max_examples=100 * strength, deadline=None)
    @given(word=st.text(alphabet="abcsXYZS019", min_size=1, max_size=10))
    def check(word: str) -> None:
        assert tokenize.word_pieces(word) == _pieces_by_the_expression(word)

    check()


def test_a_large_keyed_catalog_is_indexed_a_chunk_at_a_time_and_ranks_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A keyed catalog (the host's KeyedDocuments, made a document at a time) larger than a
    # chunk is made and tokenized a chunk at a time, each document once, and the index keeps
    # none of them made (as an index loaded from the cache): at 330,000 tools with real schemas
    # the documents made at once were 900 MB of the cold search's peak. Its hits are those of
    # the same documents indexed at once, in every mode.
    monkeypatch.setattr(build, "KEYED_CHUNK", 64)
    rng = random.Random(5)
    words = ["create", "issue", "list", "file", "user", "send", "message", "repo", "get", "zone"]
    catalog = [
        ToolDocument(
            f"{'mcp__' if n % 7 == 0 else ''}svc{n // 30}__{'_'.join(rng.sample(words, 2))}_{n}",
            " ".join(rng.choices(words, k=rng.randint(2, 14))),
            f"svc{n // 30}" if n % 11 else "github",
            tuple(rng.sample(words, rng.randint(0, 3))),
            tuple(" ".join(rng.choices(words, k=3)) for _ in range(rng.randint(0, 2))),
        )
        for n in range(500)
    ]
    alive: list[int] = [0, 0]  # made and not yet collected, the most at once

    def make(position: int) -> ToolDocument:
        document = dataclasses.replace(catalog[position])
        alive[0] += 1
        alive[1] = max(alive[1], alive[0])
        weakref.finalize(document, lambda: alive.__setitem__(0, alive[0] - 1))
        return document

    keyed = KeyedDocuments(
        [d.name for d in catalog], [d.group for d in catalog], [(0, make)], key="test"
    )
    chunked, whole = index.BM25Index(keyed), index.BM25Index(list(catalog))
    gc.collect()
    assert alive[0] == 0  # none kept made
    assert alive[1] <= 64 + 1
    queries = [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(40)]
    queries += ["github create issue", "svc3 list", "mcp__svc0__create_issue_0"]
    for query in queries:
        for admission in ("strict", "lenient", "off"):
            assert chunked.search(query, 8, admission) == whole.search(query, 8, admission)

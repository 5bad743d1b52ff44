"""The persisted index: a build saves its arrays in the cache directory, the next build of the
same documents maps them instead of indexing, and a bad file is ignored with one warning and
rebuilt, never trusted."""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

import pytest
from bm25_modules import STRENGTH, BM25Index, store
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Environment
from hermes_core.search import ToolDocument
from hermes_core.search._backend import Admission
from hermes_core.testing import make_search_backend

ADMISSIONS: tuple[Admission, ...] = ("strict", "lenient", "off")
WORDS = ["create", "add", "issue", "ticket", "list", "all", "file", "user", "github", "zone"]
words = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
documents = st.builds(
    ToolDocument,
    name=st.builds(lambda w, n: f"mcp__box__{w}_{n}", st.sampled_from(WORDS), st.integers(0, 30)),
    description=words,
    group=st.sampled_from(["github", "box", "other"]),
    parameter_names=st.lists(st.sampled_from(WORDS), max_size=2).map(tuple),
    parameter_descriptions=st.lists(words, max_size=2).map(tuple),
)
QUERIES = ["create issue", "github list all", "file", "absent words", "mcp__box__file_3", "zone"]


def _catalog(size: int = 60) -> list[ToolDocument]:
    return [
        ToolDocument(
            f"mcp__svc{n // 10}__{WORDS[n % 10]}_{n}",
            f"{WORDS[n % 7]} {WORDS[(n * 3) % 10]} item {n}",
            f"svc{n // 10}",
            (WORDS[n % 4],),
            (f"the {WORDS[n % 5]}",),
        )
        for n in range(size)
    ]


def _persisting(cache: Path, catalog: list[ToolDocument]) -> BM25Index:
    return BM25Index(catalog, cache_dir=cache, persist_min_documents=1)


def _answers(index: BM25Index) -> list[object]:
    return [index.search(q, 10, a) for q in QUERIES for a in ADMISSIONS]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "bm25 index cache" in r.getMessage()
    ]


@pytest.mark.parametrize("strength", STRENGTH)
def test_index_loaded_from_the_cache_answers_exactly_as_the_freshly_built_one(
    tmp_path_factory: pytest.TempPathFactory, strength: int
) -> None:
    @settings(max_examples=12 * strength, deadline=None)
    @given(
        catalog=st.lists(documents, min_size=1, max_size=30),
        query=st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=4).map(" ".join),
        added=st.lists(documents, max_size=5),
        removed=st.lists(documents.map(lambda d: d.name), max_size=5),
    )
    def check(
        catalog: list[ToolDocument], query: str, added: list[ToolDocument], removed: list[str]
    ) -> None:
        _loaded_answers_as_fresh(tmp_path_factory, catalog, query, added, removed)

    check()


def _loaded_answers_as_fresh(
    tmp_path_factory: pytest.TempPathFactory,
    catalog: list[ToolDocument],
    query: str,
    added: list[ToolDocument],
    removed: list[str],
) -> None:
    cache = tmp_path_factory.mktemp("cache")
    fresh = BM25Index(catalog)
    _persisting(cache, catalog)  # builds and saves
    loaded = _persisting(cache, catalog)
    assert loaded.loaded_from is not None
    assert loaded.names == fresh.names
    for admission in ADMISSIONS:
        assert loaded.search(query, 10, admission) == fresh.search(query, 10, admission)
    # Incremental updates work on the mapped arrays as on built ones.
    for index in (fresh, loaded):
        index.add(added)
        index.remove(removed)
    assert loaded.names == fresh.names
    for admission in ADMISSIONS:
        assert loaded.search(query, 10, admission) == fresh.search(query, 10, admission)
        assert loaded.unmatched_words(query, loaded.search(query, 10, admission)) == (
            fresh.unmatched_words(query, fresh.search(query, 10, admission))
        )


def _saved(tmp_path: Path) -> tuple[Path, list[ToolDocument], list[object]]:
    catalog = _catalog()
    cache = tmp_path / "cache"
    index = _persisting(cache, catalog)
    assert index.loaded_from is None
    assert len(list(cache.glob("*.bm25"))) == 1
    return cache, catalog, _answers(BM25Index(catalog))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_payload_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-7] ^= 0x5A  # in the arrays
    path.write_bytes(bytes(data))


def _flip_magic(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF
    path.write_bytes(bytes(data))


def _other_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, store.FORMAT_VERSION + 1)
    path.write_bytes(bytes(data))


def _other_catalog(path: Path) -> None:
    # A whole, valid file, but another catalog's index, under this catalog's name.
    other = path.parent / "other"
    _persisting(other, _catalog(40))
    (written,) = other.glob("*.bm25")
    os.replace(written, path)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_truncate, "truncated"),
        (_flip_payload_byte, "checksum"),
        (_flip_magic, "not a bm25 index file"),
        (_other_version, "format version"),
        (_other_catalog, "another catalog"),
    ],
)
def test_a_bad_cache_file_is_ignored_with_one_warning_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: object, reason: str
) -> None:
    cache, catalog, expected = _saved(tmp_path)
    (path,) = cache.glob("*.bm25")
    damage(path)  # type: ignore[operator]
    caplog.set_level(logging.WARNING)
    rebuilt = _persisting(cache, catalog)
    (warning,) = _warnings(caplog)
    assert reason in warning
    assert str(path) in warning
    assert rebuilt.loaded_from is None
    assert _answers(rebuilt) == expected
    # Rebuilt and written again: the next start maps it, without a warning.
    caplog.clear()
    again = _persisting(cache, catalog)
    assert again.loaded_from == path
    assert _warnings(caplog) == []
    assert _answers(again) == expected


def test_loaded_index_maps_its_file_instead_of_reading_it(tmp_path: Path) -> None:
    cache, catalog, _ = _saved(tmp_path)
    loaded = _persisting(cache, catalog)
    assert loaded.loaded_from is not None
    mapped = Path("/proc/self/maps").read_text(encoding="utf-8")
    assert str(loaded.loaded_from) in mapped


def test_a_changed_catalog_is_not_answered_from_the_old_file(tmp_path: Path) -> None:
    cache, catalog, _ = _saved(tmp_path)
    changed = [*catalog[:-1], ToolDocument(catalog[-1].name, "something else entirely", "svc5")]
    index = _persisting(cache, changed)
    assert index.loaded_from is None
    assert [h.name for h in index.search("something else", 3, "strict")] == [catalog[-1].name]
    assert len(list(cache.glob("*.bm25"))) == 2


def test_small_catalogs_are_not_saved(tmp_path: Path) -> None:
    BM25Index(_catalog(10), cache_dir=tmp_path / "cache", persist_min_documents=11)
    assert not (tmp_path / "cache").exists()


def test_saving_leaves_no_temporary_file_and_keeps_the_most_recent_files(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for size in range(20, 20 + store.KEEP_FILES + 3):
        _persisting(cache, _catalog(size))
    files = sorted(p.name for p in cache.iterdir())
    assert len(files) == store.KEEP_FILES
    assert all(name.endswith(".bm25") for name in files)
    # The newest is among them.
    assert _persisting(cache, _catalog(20 + store.KEEP_FILES + 2)).loaded_from is not None


def test_an_unwritable_cache_directory_warns_and_searches_all_the_same(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the directory should be", encoding="utf-8")
    caplog.set_level(logging.WARNING)
    index = _persisting(blocked / "cache", _catalog())
    # Not "cannot save the bm25 index cache ... File exists": the one warning names the file.
    assert _warnings(caplog) == []
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"{blocked} is not a directory, so hermes keeps no cache files")
    assert "nothing is lost" in warning
    assert blocked.read_text(encoding="utf-8") == "a file where the directory should be"
    assert _answers(index) == _answers(BM25Index(_catalog()))


def test_the_bm25_backend_keeps_its_index_in_the_environments_cache_dir(tmp_path: Path) -> None:
    env = Environment(
        home=tmp_path / "home",
        cwd=tmp_path,
        variables={"HERMES_CACHE_DIR": str(tmp_path / "cache")},
    )
    catalog = _catalog(1500)  # the backend saves catalogs of 1,000 tools and more
    first = make_search_backend("bm25", env=env)
    first.build(catalog)
    (path,) = (tmp_path / "cache" / "bm25-index").glob("*.bm25")
    second = make_search_backend("bm25", env=env)
    second.build(catalog)
    assert getattr(second, "loaded_from", None) == path
    assert second.search("create issue", 5, "off") == first.search("create issue", 5, "off")

"""The catalog cache: a catalog read once is registered from the cache directory at the next
start, its tools made only when asked for; the answers are the first reading's, a changed
catalog is read again, and a bad cache file is ignored with one warning and replaced."""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from engine import BM25Index
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Config, Environment, Host, Tool
from hermes_core._errors import ConfigError
from hermes_core._tool_blocks import BlockRun, ToolSequence, runs_of
from hermes_core.search import ToolDocument
from hermes_core.search import _catalog_cache as catalog_cache
from hermes_core.search._backend import ADMISSION_MODES
from hermes_core.search._catalog import CATALOG_ONLY, CatalogBlock, load_catalog, read_catalog
from hermes_core.search._indexing import deferred_documents, tool_document

WORDS = [
    "create",
    "list",
    "delete",
    "update",
    "issue",
    "ticket",
    "file",
    "folder",
    "user",
    "team",
    "invoice",
    "payment",
    "refund",
    "meeting",
    "calendar",
    "event",
    "message",
    "channel",
    "repo",
    "branch",
    "commit",
    "deploy",
    "build",
    "alert",
    "zone",
    "record",
]
QUERIES = [
    "create issue",
    "list files in folder",
    "refund a payment",
    "svc3 meeting",
    "svc7__op_0042",
    "deploy branch alert",
    "words nobody has",
]


def generated_entries(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` catalog entries with words drawn at random (servers of 40 tools)."""
    chance = random.Random(seed)
    entries = []
    for index in range(count):
        server = f"svc{index // 40}"
        words = chance.sample(WORDS, 3)
        entries.append(
            {
                "name": f"{server}__op_{index:04d}" if index % 5 else f"{'_'.join(words)}_{index}",
                "server": server,
                "description": " ".join(chance.choices(WORDS, k=chance.randint(3, 12))) + ".",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        word: {"type": "string", "description": f"the {word}"}
                        for word in chance.sample(WORDS, chance.randint(0, 3))
                    },
                },
            }
        )
    return entries


def write_catalog(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def catalog_config(path: Path) -> Config:
    return Config.model_validate({"tools": {"catalogs": [{"path": str(path)}]}})


def cache_file(env: Environment, catalog: Path) -> Path:
    return catalog_cache.cache_path(env.cache_dir, catalog, None)


def the_block(host: Host) -> CatalogBlock:
    (block,) = host.registry.blocks
    assert isinstance(block, CatalogBlock)
    return block


def searched(host: Host, queries: list[str] = QUERIES) -> dict[str, Any]:
    async def search() -> dict[str, Any]:
        result = await host.dispatch("tool_search", {"queries": queries}, host.new_session())
        assert not result.is_error, result.text_content
        answer: dict[str, Any] = result.structured
        return answer

    return anyio.run(search)


def hits(host: Host) -> list[list[tuple[str, float]]]:
    """Every query's hits (names and scores) in every admission mode, from the host's index."""
    backend = host.tool_search.backend
    return [
        [(hit.name, hit.score) for hit in backend.search(query, 10, admission)]
        for query in QUERIES
        for admission in ADMISSION_MODES
    ]


def cache_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno == logging.WARNING and "catalog cache" in record.getMessage()
    ]


def catalog_tools(answer: dict[str, Any]) -> int:
    """How many of the tools a search answer describes come from the catalog (the host's own
    deferred tools, ``cronjob`` say, may rank among them)."""
    return sum(1 for tool in answer["tools"].values() if tool["source"] == "catalog")


CATALOG_TOOLS = 1_200
"""The ``catalog`` fixture's size: past the 1,000 documents from which the bm25 index is kept in
the cache directory too (``PERSIST_MIN_DOCUMENTS``), so that a warm host loads both."""


@functools.cache
def catalog_text() -> str:
    """The ``catalog`` fixture's file, made once a process (the entries are drawn at random)."""
    return json.dumps(generated_entries(CATALOG_TOOLS))


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.json"
    path.write_text(catalog_text(), encoding="utf-8")
    return path


def test_a_warm_host_makes_only_the_catalog_tools_it_is_asked_about(
    hermes_host: Callable[..., Host], hermes_env: Environment, catalog: Path
) -> None:
    cold = hermes_host(config=catalog_config(catalog))
    searched(cold)
    assert cache_file(hermes_env, catalog).is_file()

    warm = hermes_host(config=catalog_config(catalog))
    block = the_block(warm)
    assert block.made_count == 0
    answer = searched(warm)
    assert warm.tool_search.backend.loaded_from is not None  # the index came from its file
    assert answer["total_available"] == searched(cold)["total_available"]
    assert block.made_count == catalog_tools(answer)  # only the tools the answer describes

    async def describe_and_call() -> tuple[Any, Any]:
        session = warm.new_session()
        described = await warm.dispatch("tool_describe", {"names": ["svc9__op_0361"]}, session)
        called = await warm.dispatch("tool_call", {"name": "svc9__op_0361"}, session)
        return described.structured, called

    described, called = anyio.run(describe_and_call)
    entry = json.loads(catalog_text())[361]
    assert described["tools"]["svc9__op_0361"] == {
        "description": entry["description"],
        "parameters": entry["input_schema"],
    }
    assert called.is_error
    assert called.error_code == CATALOG_ONLY
    assert block.made_count == catalog_tools(answer) + 1


def test_search_from_the_cached_catalog_answers_as_the_first_reading(
    hermes_host: Callable[..., Host], catalog: Path
) -> None:
    cold = hermes_host(config=catalog_config(catalog))
    cold_answer, cold_hits = searched(cold), hits(cold)
    warm = hermes_host(config=catalog_config(catalog))
    assert searched(warm) == cold_answer
    assert hits(warm) == cold_hits
    # ... and as an index of the tools read the way every catalog was read before the cache
    documents: list[ToolDocument] = []
    for run in runs_of(cold.tool_search.view().deferred):
        tools = load_catalog(catalog) if isinstance(run, BlockRun) else run
        documents += [tool_document(tool) for tool in tools]
    eager = BM25Index(documents)
    assert [
        [(hit.name, hit.score) for hit in eager.search(query, 10, admission)]
        for query in QUERIES
        for admission in ADMISSION_MODES
    ] == cold_hits
    assert any(cold_hits)
    assert not all(cold_hits)


def test_a_catalog_tool_from_the_cache_is_the_tool_the_file_gives(
    tmp_path: Path, catalog: Path
) -> None:
    # Issue 28: tools.catalogs[].server no longer overrides an entry naming another server.
    entries = json.loads(catalog.read_text(encoding="utf-8"))
    catalog.write_text(json.dumps([{**e, "server": "billing"} for e in entries]), encoding="utf-8")
    cache = tmp_path / "cache"
    read_catalog(catalog, "billing", owner="catalog", cache_dir=cache)
    block = read_catalog(catalog, "billing", owner="catalog", cache_dir=cache)
    assert block.made_count == 0
    expected = load_catalog(catalog, "billing")
    made = [block.tool(position) for position in range(len(block))]
    assert [(t.name, t.description, t.parameters, t.toolset, t.source_name) for t in made] == [
        (t.name, t.description, t.parameters, t.toolset, t.source_name) for t in expected
    ]
    assert made[5].handler is not None
    assert made[5].handler().error_code == CATALOG_ONLY
    assert block.tool(5) is made[5]  # made once


def test_a_catalog_changed_in_place_with_its_size_and_mtime_kept_is_read_again(
    hermes_host: Callable[..., Host], catalog: Path
) -> None:
    cold = hermes_host(config=catalog_config(catalog))
    assert searched(cold, ["zebra"])["results"][0]["matches"] == []
    before = catalog.stat()
    text = catalog.read_text(encoding="utf-8")
    changed = text.replace("calendar", "zebra___", 1)  # same length
    assert len(changed) == len(text)
    assert changed != text
    catalog.write_text(changed, encoding="utf-8")
    os.utime(catalog, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (catalog.stat().st_size, catalog.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )

    warm = hermes_host(config=catalog_config(catalog))
    assert searched(warm, ["zebra"])["results"][0]["matches"] != []


def test_a_cache_made_right_after_the_catalog_changed_is_checked_by_hash(
    tmp_path: Path, catalog: Path
) -> None:
    cache = tmp_path / "cache"
    status = catalog.stat()  # the catalog was just written: within RACY_NS of its reading
    read_catalog(catalog, None, owner="catalog", cache_dir=cache)
    assert catalog_cache.load_cached(cache, catalog, None, status) is not None
    # A second write in the same timestamp tick would leave stat as it was: the hash tells.
    text = catalog.read_text(encoding="utf-8")
    catalog.write_text(text.replace("refund", "zebras", 1), encoding="utf-8")
    assert catalog_cache.load_cached(cache, catalog, None, status) is None


def test_a_cache_checked_late_enough_is_not_hashed_again(
    tmp_path: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    read_catalog(catalog, None, owner="catalog", cache_dir=cache)  # flagged: just written
    hashed: list[Path] = []
    really = catalog_cache.content_hash

    def counting(path: Path) -> str:
        hashed.append(path)
        return really(path)

    monkeypatch.setattr(catalog_cache, "content_hash", counting)
    assert catalog_cache.load_cached(cache, catalog, None, catalog.stat()) is not None
    assert len(hashed) == 1
    # Once the last change is RACY_NS old, a passed check clears the flag.
    monkeypatch.setattr(catalog_cache, "RACY_NS", 0)
    assert catalog_cache.load_cached(cache, catalog, None, catalog.stat()) is not None
    assert catalog_cache.load_cached(cache, catalog, None, catalog.stat()) is not None
    assert len(hashed) == 2


def test_a_catalog_read_soon_after_a_change_but_cached_late_is_checked_once_at_saving(
    tmp_path: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[Path] = []
    really = catalog_cache.content_hash

    def counting(path: Path) -> str:
        hashed.append(path)
        return really(path)

    class Later:
        """The clock of a save that ends well after the catalog's last change."""

        @staticmethod
        def time_ns() -> int:
            return time.time_ns() + 10 * catalog_cache.RACY_NS

    monkeypatch.setattr(catalog_cache, "content_hash", counting)
    monkeypatch.setattr(catalog_cache, "time", Later)
    cache = tmp_path / "cache"
    read_catalog(catalog, None, owner="catalog", cache_dir=cache)  # read right after writing
    assert len(hashed) == 1  # checked when its cache was saved...
    assert catalog_cache.load_cached(cache, catalog, None, catalog.stat()) is not None
    assert len(hashed) == 1  # ... so the next start does not hash it


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))


def _other_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, catalog_cache.FORMAT_VERSION + 1)
    path.write_bytes(bytes(data))


def _a_group_id_out_of_range(path: Path) -> None:
    # Whole by its checksum (recomputed), but one tool's group is not one of its groups.
    data = bytearray(path.read_bytes())
    start = catalog_cache.CACHE_FRAME_SIZE + 4
    (header_length,) = struct.unpack_from("<I", data, 12)
    header = json.loads(bytes(data[start : start + header_length]))
    at = start + header_length + header["sections"]["group_ids"][0] + 4
    struct.pack_into("<i", data, at, len(header["groups"]))
    struct.pack_into("<I", data, catalog_cache.CACHE_FRAME_SIZE - 4, zlib.crc32(data[start:]))
    path.write_bytes(bytes(data))


def _not_a_cache_file(path: Path) -> None:
    path.write_bytes(b"this is not a catalog cache, only text that is long enough " * 4)


def _too_short(path: Path) -> None:
    path.write_bytes(b"HRMS")


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_truncate, "truncated"),
        (_flip_a_byte, "checksum"),
        (_other_version, "format version"),
        (_a_group_id_out_of_range, "group ids are out of range"),
        (_not_a_cache_file, "not a catalog cache"),
        (_too_short, "truncated"),
    ],
)
def test_a_bad_catalog_cache_is_ignored_with_one_warning_and_rewritten(
    hermes_host: Callable[..., Host],
    hermes_env: Environment,
    catalog: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[Path], None],
    reason: str,
) -> None:
    cold = hermes_host(config=catalog_config(catalog))
    expected = searched(cold)
    damage(cache_file(hermes_env, catalog))

    with caplog.at_level(logging.WARNING):
        damaged = hermes_host(config=catalog_config(catalog))
        assert searched(damaged) == expected
    (warning,) = cache_warnings(caplog)
    assert reason in warning
    assert str(catalog) in warning

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = hermes_host(config=catalog_config(catalog))
        assert searched(again) == expected
    assert cache_warnings(caplog) == []  # rewritten whole by the run that ignored it
    assert the_block(again).made_count == catalog_tools(expected)


def test_a_catalog_without_a_writable_cache_directory_still_loads(
    tmp_path: Path, catalog: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache directory should be", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        block = read_catalog(catalog, None, owner="catalog", cache_dir=blocked)
    assert len(block) == CATALOG_TOOLS
    assert block.tool(0).name == json.loads(catalog_text())[0]["name"]
    # Not "cannot save the catalog cache ... File exists": the one warning names the file.
    assert cache_warnings(caplog) == []
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"{blocked} is not a directory, so hermes keeps no cache files")


def test_the_keyed_documents_of_a_catalog_are_its_tools_documents(catalog: Path) -> None:
    block = read_catalog(catalog, None, owner="catalog", cache_dir=None)
    documents = deferred_documents(ToolSequence([BlockRun(block)]))
    expected = [tool_document(tool) for tool in load_catalog(catalog)]
    assert list(documents) == expected
    assert all(isinstance(document, ToolDocument) for document in documents)
    assert list(documents.names) == [document.name for document in expected]
    assert block.made_count == 0  # documents are made from the entries, not from tools


def test_a_server_added_and_removed_beside_a_cached_catalog_is_indexed_as_a_fresh_build(
    hermes_host: Callable[..., Host], catalog: Path
) -> None:
    cold = hermes_host(config=catalog_config(catalog))
    searched(cold)
    before = hits(cold)
    warm = hermes_host(config=catalog_config(catalog))
    searched(warm)
    assert hits(warm) == before
    late = [
        Tool(
            name=f"mcp__late__create_issue_{index}",
            description="Create an issue ticket in the late tracker.",
            source="mcp",
            toolset="mcp-late",
            source_name="late",
        )
        for index in range(3)
    ]
    warm.registry.register_all(late, owner="mcp:late")
    searched(warm)  # the index follows the registry at the next search
    fresh = BM25Index([tool_document(tool) for tool in warm.tool_search.view().deferred])
    assert hits(warm) == [
        [(hit.name, hit.score) for hit in fresh.search(query, 10, admission)]
        for query in QUERIES
        for admission in ADMISSION_MODES
    ]
    assert hits(warm)[0][0][0].startswith("mcp__late__")  # "create issue" finds them first
    warm.registry.unregister_owner("mcp:late")
    searched(warm)
    assert hits(warm) == before


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(),  # any code point: written ASCII-escaped, as json.dumps does
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(entry=st.tuples(st.text(), st.dictionaries(st.text(), json_values, max_size=5)))
def test_the_cache_encodes_an_entry_as_json_dumps_does(entry: tuple[str, dict[str, Any]]) -> None:
    encoded = catalog_cache.entry_encoder()(entry)
    assert encoded == json.dumps(entry, separators=(",", ":"))
    assert encoded.isascii()


def test_the_cache_encoder_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        catalog_cache.entry_encoder()(("a tool", {"default": {1, 2}}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"name": "a"} {"name": "b"}]', r":1: not valid JSON: Expecting ',' delimiter"),
        ('[{"name": "a"},\n {"name": "b"}]\n]', r":3: not valid JSON: Extra data"),
        ('[{"name": "a"},\n]', r":2: not valid JSON: Expecting value"),
        ('[{"name": "a"}', r":1: not valid JSON: Expecting ',' delimiter"),
        ("", r":1: not valid JSON: Expecting value"),
        ('{"name": "a"}', r"must be a JSON array of tools, not dict"),
        ('"tools"', r"must be a JSON array of tools, not str"),
        ('[{"name": "a"}, 7]', r"entry 1: must be an object, not int"),
    ],
)
def test_a_malformed_catalog_file_is_refused_whole_with_where(
    tmp_path: Path, text: str, message: str
) -> None:
    # The file is parsed an entry at a time (never held parsed whole), with the errors a
    # whole parse gives: the file, the line, the reason; no tool and no cache file comes of it.
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError, match=message) as raised:
        read_catalog(path, None, owner="catalog", cache_dir=cache)
    assert str(path) in str(raised.value)
    assert not (cache / catalog_cache.CACHE_FOLDER).exists() or not any(
        (cache / catalog_cache.CACHE_FOLDER).iterdir()
    )


def test_an_empty_catalog_array_reads_as_no_tools(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(" [ \n ] \n", encoding="utf-8")
    block = read_catalog(path, None, owner="catalog", cache_dir=tmp_path / "cache")
    assert list(block.names) == []


def test_a_cached_catalog_counts_its_groups_as_the_first_reading_does(
    tmp_path: Path, catalog: Path
) -> None:
    cache = tmp_path / "cache"
    first = read_catalog(catalog, None, owner="catalog", cache_dir=cache)
    cached = read_catalog(catalog, None, owner="catalog", cache_dir=cache)
    assert cached is not first
    assert cached.group_sizes() == first.group_sizes()
    assert sum(cached.group_sizes()) == len(cached)
    assert cached.group_positions() == first.group_positions()


def test_a_catalog_tool_whose_schema_is_3_mb_is_skipped_with_one_warning(
    hermes_host: Callable[..., Host],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    properties = {
        f"field_{i}": {"type": "string", "description": "d" * 1_000} for i in range(3_000)
    }
    huge = {"type": "object", "properties": properties}
    size = len(json.dumps(huge, separators=(",", ":"), ensure_ascii=False))
    path = write_catalog(
        tmp_path / "catalog.json",
        [
            {"name": "huge_tool", "description": "Create an issue.", "input_schema": huge},
            {"name": "small_tool", "description": "Create a ticket."},
        ],
    )
    caplog.set_level(logging.WARNING)
    cold = hermes_host(config=catalog_config(path))
    warm = hermes_host(config=catalog_config(path))

    async def describe(host: Host) -> Any:
        names = {"names": ["huge_tool", "small_tool"]}
        return (await host.dispatch("tool_describe", names, host.new_session())).structured

    for host in (cold, warm):
        answer = anyio.run(describe, host)
        assert list(answer["tools"]) == ["small_tool"]
        assert answer["not_found"] == ["huge_tool"]
    warned = [r.getMessage() for r in caplog.records if "huge_tool" in r.getMessage()]
    assert len(warned) == 1, warned
    assert str(path) in warned[0]
    assert f"{size:,}" in warned[0]
    assert "131,072" in warned[0]


def test_a_catalog_tool_described_in_3_mb_is_shortened_between_letters_with_one_warning(
    hermes_host: Callable[..., Host],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    long = "e\u0301" * 1_500_000  # no word to cut at: each letter carries its accent
    path = write_catalog(
        tmp_path / "catalog.json",
        [
            {"name": "wordy_tool", "description": long},
            {"name": "small_tool", "description": "Create a ticket."},
        ],
    )
    caplog.set_level(logging.WARNING)
    cold = hermes_host(config=catalog_config(path))
    warm = hermes_host(config=catalog_config(path))

    async def describe(host: Host) -> Any:
        names = {"names": ["wordy_tool", "small_tool"]}
        return (await host.dispatch("tool_describe", names, host.new_session())).structured

    for host in (cold, warm):
        described = anyio.run(describe, host)["tools"]["wordy_tool"]["description"]
        assert 16_000 < len(described) <= 16_384
        body, _, note = described.rpartition("...")
        assert body.endswith("e\u0301")
        assert long.startswith(body)
        assert "description cut at 16,384 characters" in note
    warned = [r.getMessage() for r in caplog.records if "wordy_tool" in r.getMessage()]
    assert len(warned) == 1, warned
    assert str(path) in warned[0]
    assert f"{len(long):,}" in warned[0]
    assert "16,384" in warned[0]

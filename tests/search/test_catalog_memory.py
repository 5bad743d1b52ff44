"""A catalog tool costs about what its JSON did: the tools read from a catalog file hold little
more memory than the parsed JSON of their entries (a host may load hundreds of thousands)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from hermes_core.search import _catalog_cache as catalog_cache
from hermes_core.search._catalog import load_catalog, read_catalog

TOOLS = 1_000
"""Enough that the per-tool costs dwarf the fixed ones: the ratio below is 0.99 at 1,000 tools
as at 5,000."""


def small_entries() -> list[dict[str, object]]:
    """Entries as small as large catalogs have them (a few words, a few parameters), where the
    cost of each tool beside its JSON shows most."""
    return [
        {
            "name": f"svc{index // 50}__op_{index}",
            "server": f"svc{index // 50}",
            "description": f"Operation {index} of the service: list, create or change records.",
            "input_schema": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "limit": {"type": "integer"}},
            },
        }
        for index in range(TOOLS)
    ]


ALLOWED = 1.15
"""The tools may hold at most this much more than the parsed entries."""


def set_aside_the_heap() -> None:
    """Freeze what the process holds, as collection's objects are frozen (conftest.py): the
    collections that follow look at the measured step's objects only, not at the whole heap of a
    worker late in a run (0.3 s or more each there). Only new allocations are traced, so the
    objects set aside do not count either way."""
    gc.freeze()


def traced_bytes(action: object) -> tuple[object, int]:
    """What ``action()`` returns, and the bytes still allocated by it afterwards."""
    set_aside_the_heap()
    tracemalloc.start()
    try:
        result = action()  # type: ignore[operator]
        gc.collect()
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, size


def test_a_catalog_tool_costs_about_what_its_json_did(tmp_path: Path) -> None:
    text = json.dumps(small_entries())
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    entries, parsed = traced_bytes(lambda: json.loads(text))
    tools, loaded = traced_bytes(lambda: load_catalog(path))
    assert isinstance(entries, list)
    assert isinstance(tools, list)
    assert len(tools) == len(entries)
    assert len(tools) == TOOLS
    assert loaded <= ALLOWED * parsed, f"{loaded / parsed:.2f}x the parsed JSON"


def schema_entries(count: int) -> list[dict[str, object]]:
    """Entries whose input schemas are most of their JSON, as in real catalogs."""
    return [
        {
            "name": f"svc{index // 50}__op_{index}",
            "server": f"svc{index // 50}",
            "description": f"Operation {index}: list, create or change records.",
            "input_schema": {
                "type": "object",
                "required": ["field_0"],
                "properties": {
                    f"field_{k}": {
                        "type": "string",
                        "description": f"Field {k} of the record",
                        "enum": ["a", "b", "c"],
                    }
                    for k in range(12)
                },
            },
        }
        for index in range(count)
    ]


def test_reading_a_catalog_never_holds_its_schemas_parsed_whole(tmp_path: Path) -> None:
    # A catalog file is parsed an entry at a time and each entry kept as its JSON, decoded
    # again when its tool is made or indexed: at 330,000 tools with real schemas, the file
    # parsed whole and its schemas kept parsed peaked at 2.6 GB (issue 32). Here the read's
    # peak stays under 3/4 of the parsed entries and what it keeps under 1/3 (they were
    # 1.58x and 0.97x), and the block answers each tool's schema as the file has it. Both
    # ratios are the same at 300 entries as at 1,000 (0.45x and 0.22x, uncached).
    entries = schema_entries(300)
    text = json.dumps(entries)
    path = tmp_path / "catalog.json"
    path.write_text(text, encoding="utf-8")
    _, parsed = traced_bytes(lambda: json.loads(text))
    for cache in (tmp_path / "cache", None):
        set_aside_the_heap()
        tracemalloc.start()
        try:
            block = read_catalog(path, None, owner="catalog", cache_dir=cache)
            gc.collect()
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 0.75 * parsed, f"{peak / parsed:.2f}x the parsed entries at the peak"
        # Cached, the entries are read back from the cache file: only the names are kept.
        allowed = 0.33 if cache is None else 0.08
        assert kept < allowed * parsed, f"{kept / parsed:.2f}x the parsed entries kept"
        for position in (0, 167, 299):
            name, description, group, schema = block.fields(position)
            entry = entries[position]
            assert (name, description, group) == (
                entry["name"],
                entry["description"],
                entry["server"],
            )
            assert schema == entry["input_schema"]


def test_the_catalog_cache_is_written_without_a_second_copy_of_its_entries(
    tmp_path: Path,
) -> None:
    # The entries' JSON goes to the cache file one entry at a time: encoded all at once (a
    # joined string, or a list of their bytes) it was the whole section again, 400 MB at
    # 330,000 tools with real schemas, on top of the entries kept for the block.
    catalog = tmp_path / "catalog.json"
    catalog.write_text("[]", encoding="utf-8")
    encode = catalog_cache.entry_encoder()
    plain = schema_entries(300)
    entries = [encode((entry["description"], entry["input_schema"])) for entry in plain]
    names = [f"tool_{index}" for index in range(len(entries))]
    size = sum(map(len, entries))
    sha256 = catalog_cache.content_hash(catalog)
    set_aside_the_heap()
    tracemalloc.start()
    try:
        saved = catalog_cache.save_cached(
            tmp_path / "cache", catalog, None, catalog.stat(), 0, sha256, names,
            [0] * len(names), ["svc"], entries,
        )  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert saved is not None
    assert peak < 0.25 * size, f"{peak / size:.2f}x the entries at the peak"
    cached = catalog_cache.load_cached(tmp_path / "cache", catalog, None, catalog.stat())
    assert cached is not None
    assert cached.entry(299) == (plain[299]["description"], plain[299]["input_schema"])


def test_a_cache_file_replaced_after_a_cold_read_changes_nothing_the_block_serves(
    tmp_path: Path,
) -> None:
    # The block reads its entries back from the cache file it wrote, through the descriptor it
    # opened then: another process (or account sharing HERMES_CACHE_DIR) replacing that file
    # afterwards must not change the schemas this host serves.
    entries = small_entries()[:50]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    cache = tmp_path / "cache"
    block = read_catalog(path, None, owner="catalog", cache_dir=cache)
    (written,) = [file for file in cache.rglob("*") if file.is_file()]
    hostile = written.with_name("replacement")
    hostile.write_bytes(written.read_bytes().replace(b"Operation", b"Exfiltrat"))
    hostile.replace(written)

    for position in (0, 49):
        _, description, _, schema = block.fields(position)
        assert description == entries[position]["description"]
        assert schema == entries[position]["input_schema"]

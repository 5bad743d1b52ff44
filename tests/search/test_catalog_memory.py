"""A catalog tool costs about what its JSON did: the tools read from a catalog file hold little
more memory than the parsed JSON of their entries (a host may load hundreds of thousands)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from hermes_core.search._catalog import load_catalog

TOOLS = 5_000


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


def traced_bytes(action: object) -> tuple[object, int]:
    """What ``action()`` returns, and the bytes still allocated by it afterwards."""
    gc.collect()
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

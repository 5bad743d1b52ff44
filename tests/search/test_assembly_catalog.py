"""Catalog toolsets: files in the eval format loaded as deferred, search-only tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge_fixtures import (
    SAAS_CATALOG,
    catalog_entries,
    core_tool,
    real_host,
    registry_of,
    session,
    tool_search,
)

from hermes_core._config import CatalogEntry
from hermes_core._errors import ConfigError
from hermes_core.search._catalog import CATALOG_ONLY, catalog_tools, load_catalog


def _write(path: Path, entries: Any) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_catalog_tools_are_deferred_with_source_catalog(tmp_path: Path) -> None:
    tools = load_catalog(_write(tmp_path / "c.json", catalog_entries(3, "billing")))
    assert [tool.source for tool in tools] == ["catalog"] * 3
    assert {tool.source_name for tool in tools} == {"billing"}
    registry = registry_of([core_tool("read_file"), *tools])
    assembly = tool_search(registry).assemble(200_000)
    assert assembly.deferred_count == 3
    assert "billing tools (3):" in assembly.listing


def test_configured_server_is_the_server_of_entries_naming_none(tmp_path: Path) -> None:
    # Issue 28: it no longer overrides an entry naming another server (an error instead,
    # tests/test_first_day_smalls.py).
    entries = [{k: v for k, v in e.items() if k != "server"} for e in catalog_entries(2)]
    _write(tmp_path / "c.json", entries)
    tools = catalog_tools([CatalogEntry(path="c.json", server="payments")], tmp_path)
    assert {tool.source_name for tool in tools} == {"payments"}


def test_calling_a_catalog_tool_returns_a_catalog_only_error(tmp_path: Path) -> None:
    tools = load_catalog(_write(tmp_path / "c.json", catalog_entries(1, "billing")))
    host = real_host(tmp_path, tools)
    payload = {"calls": [{"name": "billing__op_0000", "arguments": {"id": "7"}}]}
    result = anyio.run(host.dispatch, "tool_call", payload, session())
    host.close()
    assert result.is_error
    assert result.error_code == CATALOG_ONLY
    assert "catalog-only tool" in result.text_content


def test_saas_catalog_loads_every_operation() -> None:
    tools = load_catalog(SAAS_CATALOG)
    assert len(tools) == 5468
    assert len({tool.source_name for tool in tools}) == 22


@pytest.mark.parametrize(
    ("entries", "where"),
    [
        ({"name": "x"}, "a catalog must be a JSON array"),
        ([{"name": "ok_tool"}, "text"], "entry 1: must be an object"),
        ([{"name": "ok_tool"}, {"name": "bad name!"}], "entry 1: name:"),
        ([{"description": "no name"}], "entry 0: name:"),
        ([{"name": "a", "description": 5}], "entry 0: description: must be a string"),
        ([{"name": "a", "input_schema": []}], "entry 0: input_schema: must be a JSON Schema"),
        ([{"name": "a", "server": 3}], "entry 0: server: must be a string"),
        ([{"name": "a"}, {"name": "a"}], "entry 1: name: 'a' repeats entry 0"),
        ([{"name": "tool_call"}], "entry 0: name: 'tool_call' is reserved"),
    ],
)
def test_bad_catalog_entry_is_named_by_index_and_field(
    tmp_path: Path, entries: Any, where: str
) -> None:
    path = _write(tmp_path / "bad.json", entries)
    with pytest.raises(ConfigError) as caught:
        load_catalog(path)
    assert str(path) in str(caught.value)
    assert where in str(caught.value)


def test_catalog_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n{"name": "a"},\n{oops}\n]', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_catalog(path)
    assert f"{path}:3:" in str(caught.value)


def test_missing_catalog_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.json: cannot read catalog"):
        catalog_tools([CatalogEntry(path="missing.json")], tmp_path)

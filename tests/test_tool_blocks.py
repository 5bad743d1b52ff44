"""Blocks of tools in the registry: registered whole, made on first use, handed on whole, and
turned into ordinary tools (same order, same rules) as soon as one of their names changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core._config import ToolsConfig, ToolSearchConfig
from hermes_core._errors import RegistrationError
from hermes_core._registry import Registry
from hermes_core._tool_blocks import SCANS_BEFORE_INDEX, BlockRun, ToolSequence
from hermes_core._tools import Tool, ToolResult
from hermes_core.search._assembly import split_tools
from hermes_core.search._catalog import CatalogBlock, read_catalog


def catalog_block(tmp_path: Path, names: list[str], servers: list[str]) -> CatalogBlock:
    entries = [
        {"name": name, "server": server, "description": f"does {name}"}
        for name, server in zip(names, servers, strict=True)
    ]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return read_catalog(path, None, owner="catalog", cache_dir=None)


def plain(name: str, **fields: object) -> Tool:
    return Tool(name=name, description=f"plain {name}", **fields)  # type: ignore[arg-type]


@pytest.fixture
def block(tmp_path: Path) -> CatalogBlock:
    return catalog_block(tmp_path, ["b1", "b2", "b3", "c1"], ["bee", "bee", "bee", "sea"])


def test_a_registered_block_is_listed_in_order_and_made_only_when_asked(
    block: CatalogBlock,
) -> None:
    registry = Registry()
    registry.register(plain("a"), owner="plugin")
    assert registry.register_block(block, owner="catalog")
    registry.register(plain("z"), owner="plugin")
    assert registry.names() == ["a", "b1", "b2", "b3", "c1", "z"]
    assert len(registry) == 6
    assert "b2" in registry
    assert "nothing" not in registry
    assert block.made_count == 0
    found = registry.get("b2")
    assert found is not None
    assert (found.name, found.source, found.toolset, found.source_name) == (
        "b2",
        "catalog",
        "catalog-bee",
        "bee",
    )
    assert registry.get("b2") is found
    assert block.made_count == 1
    assert [tool.name for tool in registry] == registry.names()  # iterating makes them all


def test_enabled_hands_a_block_on_whole_without_its_disabled_toolsets(
    block: CatalogBlock,
) -> None:
    registry = Registry()
    registry.register(plain("a"), owner="plugin")
    registry.register_block(block, owner="catalog")
    enabled = registry.enabled(ToolsConfig(disabled_toolsets=["catalog-sea"]))
    assert isinstance(enabled, ToolSequence)
    assert enabled.names() == ["a", "b1", "b2", "b3"]
    assert block.made_count == 0
    assert [tool.name for tool in enabled] == ["a", "b1", "b2", "b3"]


def test_a_block_tool_replaced_by_a_higher_precedence_tool_keeps_its_place(
    block: CatalogBlock,
) -> None:
    registry = Registry()
    registry.register(plain("a"), owner="plugin")
    registry.register_block(block, owner="catalog")
    registry.register(plain("z"), owner="plugin")
    winner = plain("b2")
    assert registry.register(winner, owner="project-plugin", precedence=2)
    assert registry.names() == ["a", "b1", "b2", "b3", "c1", "z"]
    assert registry.get("b2") is winner
    assert [(s.tool.name, s.owner, s.shadowed_by) for s in registry.shadowed] == [
        ("b2", "catalog", "project-plugin")
    ]
    assert registry.blocks == ()  # its other tools are ordinary tools now
    assert registry.get("b1") is block.tool(0)


def test_a_lower_precedence_tool_loses_to_a_block_tool_without_unblocking_it(
    block: CatalogBlock,
) -> None:
    registry = Registry()
    registry.register_block(block, owner="catalog", precedence=1)
    assert not registry.register(plain("b3"), owner="bundled", precedence=0)
    assert registry.blocks == (block,)
    assert [s.shadowed_by for s in registry.shadowed] == ["catalog"]


def test_a_block_whose_name_is_taken_follows_the_ordinary_rules(
    tmp_path: Path, block: CatalogBlock
) -> None:
    registry = Registry()
    registry.register(plain("b2"), owner="plugin")
    with pytest.raises(RegistrationError, match=r"'b2' is registered by both 'plugin' and"):
        registry.register_block(block, owner="catalog")
    assert registry.names() == ["b2"]  # nothing of the block was registered
    other = catalog_block(tmp_path, ["c1", "d1"], ["sea", "dee"])
    fresh = Registry()
    fresh.register_block(block, owner="catalog")
    with pytest.raises(RegistrationError, match="'c1' is registered by both"):
        fresh.register_block(other, owner="catalog")
    assert fresh.names() == ["b1", "b2", "b3", "c1"]


def test_unregistering_a_block_owner_removes_every_tool_of_the_block(
    block: CatalogBlock,
) -> None:
    registry = Registry()
    registry.register(plain("a"), owner="plugin")
    registry.register_block(block, owner="catalog")
    generation = registry.generation
    removed = registry.unregister_owner("catalog")
    assert [tool.name for tool in removed] == ["b1", "b2", "b3", "c1"]
    assert registry.names() == ["a"]
    assert registry.generation > generation


@pytest.mark.parametrize(
    "config",
    [
        ToolSearchConfig(),
        ToolSearchConfig(always_visible=["b*"]),
        ToolSearchConfig(always_visible=["c1"], defer=["b1"]),
        ToolSearchConfig(enabled="off"),
    ],
)
def test_a_block_is_split_as_its_tools_one_by_one_would_be(
    block: CatalogBlock, config: ToolSearchConfig
) -> None:
    tools = ToolSequence([(plain("a", source="builtin"),), BlockRun(block), (plain("z"),)])
    whole = split_tools(tools, config, 1)
    made = block.made_count
    one_by_one = split_tools(list(tools), config, 1)
    assert [tool.name for tool in whole.visible] == [tool.name for tool in one_by_one.visible]
    assert [tool.name for tool in whole.deferred] == [tool.name for tool in one_by_one.deferred]
    assert whole.grant(None).sources == one_by_one.grant(None).sources
    assert set(whole.deferred_by_name) == set(one_by_one.deferred_by_name)
    # Only the block tools that are visible were made to split it.
    assert made == sum(1 for tool in whole.visible if tool.source == "catalog")


def test_did_you_mean_over_a_block_names_its_close_tools_without_making_them(
    block: CatalogBlock, tmp_path: Path
) -> None:
    from hermes_core._availability import Availability
    from hermes_core._session import Session

    registry = Registry()
    registry.register(plain("alpha"), owner="plugin")
    registry.register_block(block, owner="catalog")
    availability = Availability(registry, ToolsConfig(disabled_toolsets=["catalog-sea"]))
    refused = availability.check("b22", Session(cwd=tmp_path))
    assert isinstance(refused, ToolResult)
    assert refused.error_message == "There is no tool named 'b22'. Did you mean: b2?"
    hidden = availability.check("c11", Session(cwd=tmp_path))
    assert isinstance(hidden, ToolResult)
    assert hidden.error_message == "There is no tool named 'c11'."  # c1's toolset is disabled
    assert block.made_count == 0


@pytest.mark.parametrize(
    ("budget", "form"), [(600, "full"), (300, "names"), (100, "mixed"), (1, "none")]
)
def test_a_block_is_listed_as_its_tools_one_by_one_would_be_without_making_them(
    tmp_path: Path, budget: int, form: str
) -> None:
    from hermes_core.search._listing import build_listing

    names = [f"operation_number_{index:02d}" for index in range(43)]
    block = catalog_block(tmp_path, names, ["bee"] * 40 + ["sea"] * 3)
    tools = ToolSequence([(plain("a", source_name="aye"),), BlockRun(block)])
    whole = build_listing(tools, budget)
    assert whole.form == form
    assert block.made_count == 0  # listing makes no tool of a block
    assert whole == build_listing(list(tools), budget)


def test_no_name_finds_a_block_itself(block: CatalogBlock) -> None:
    registry = Registry()
    registry.register_block(block, owner="catalog")
    for name in (str(block), repr(block), f"\x00block:{id(block)}", ""):
        assert registry.get(name) is None
        assert name not in registry


def test_a_block_finds_each_name_the_same_before_and_after_it_indexes_its_names(
    block: CatalogBlock,
) -> None:
    # The first lookups scan the names (a start registers a few tools after a catalog); later
    # ones use the index built then: the same positions either way, and no tool made.
    asked = ["c1", "nothing", "b1", "b3", "b2", "B1", "b"] * (SCANS_BEFORE_INDEX // 7 + 2)
    found = [block.position(name) for name in asked]
    assert found == [{"b1": 0, "b2": 1, "b3": 2, "c1": 3}.get(name) for name in asked]
    assert block.name_positions() == {"b1": 0, "b2": 1, "b3": 2, "c1": 3}
    assert block.made_count == 0
    registry = Registry()
    registry.register_block(block, owner="catalog")
    with pytest.raises(RegistrationError, match="'b2' is registered by both"):
        registry.register(plain("b2"), owner="plugin")

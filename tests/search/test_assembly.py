"""Assembly: tiers, the budget, statistics, the cache, grants and real catalogs."""

from __future__ import annotations

import json

import pytest
from bridge_fixtures import (
    LIVEMCP_TOOLS,
    SAAS_CATALOG,
    core_tool,
    mcp_tool,
    plugin_tool,
    registry_of,
    session,
    tool_search,
)

from hermes_core._config import ToolSearchConfig
from hermes_core._registry import Registry
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool
from hermes_core.search._catalog import load_catalog
from hermes_core.search._listing import build_listing, short_description
from hermes_core.search._render import compact_json, estimate_tokens, render_tool, tool_tokens

BRIDGE = ["tool_search", "tool_describe", "tool_call"]


def _small() -> Registry:
    return registry_of(
        [
            core_tool("read_file", "Read a file."),
            core_tool("terminal", "Run a shell command."),
            mcp_tool("github", "create_issue", "Create an issue."),
            mcp_tool("github", "list_issues", "List issues."),
            plugin_tool("weather", "forecast", "Weather forecast."),
        ]
    )


def _names(tools: tuple[Tool, ...] | list[Tool]) -> list[str]:
    return [tool.name for tool in tools]


@pytest.mark.subprocess
def test_tier_0_when_nothing_is_deferrable() -> None:
    registry = registry_of([core_tool("read_file"), core_tool("terminal")])
    assembly = tool_search(registry).assemble(200_000)
    assert assembly.tier == 0
    assert _names(assembly.tools) == ["read_file", "terminal"]
    assert assembly.listing_form == "none"
    assert assembly.deferred_count == 0


@pytest.mark.subprocess
def test_tier_0_when_tool_search_is_off() -> None:
    config = ToolSearchConfig(enabled="off")
    assembly = tool_search(_small(), config=config).assemble(200_000)
    assert assembly.tier == 0
    assert _names(assembly.tools) == [
        "read_file",
        "terminal",
        "mcp__github__create_issue",
        "mcp__github__list_issues",
        "forecast",
    ]
    assert assembly.tokens_saved == 0


@pytest.mark.subprocess
def test_tier_1_sends_core_tools_and_the_bridge_with_the_listing() -> None:
    assembly = tool_search(_small()).assemble(200_000)
    assert assembly.tier == 1
    assert assembly.listing_form == "full"
    assert _names(assembly.tools) == ["read_file", "terminal", *BRIDGE]
    search = assembly.tools[2]
    assert search.description.endswith(assembly.listing)
    assert "- mcp__github__create_issue: Create an issue." in search.description
    assert (assembly.visible_count, assembly.deferred_count) == (2, 3)


@pytest.mark.subprocess
def test_listing_lives_in_the_tool_search_description_only() -> None:
    assembly = tool_search(_small()).assemble(200_000)
    holders = [
        tool.name for tool in assembly.tools if "mcp__github__list_issues" in tool.description
    ]
    assert holders == ["tool_search"]


@pytest.mark.subprocess
def test_tier_2_with_listing_off() -> None:
    config = ToolSearchConfig(listing="off")
    assembly = tool_search(_small(), config=config).assemble(200_000)
    assert assembly.tier == 2
    assert assembly.listing_form == "none"
    assert assembly.budget_tokens == 0
    assert "mcp__github" not in assembly.tools[2].description


@pytest.mark.subprocess
def test_tier_2_with_a_zero_budget() -> None:
    config = ToolSearchConfig(threshold_pct=0)
    assembly = tool_search(_small(), config=config).assemble(200_000)
    assert (assembly.tier, assembly.budget_tokens, assembly.listing_tokens) == (2, 0, 0)


@pytest.mark.subprocess
def test_budget_is_threshold_share_of_context_capped() -> None:
    config = ToolSearchConfig(threshold_pct=5, listing_max_tokens=4000)
    search = tool_search(_small(), config=config)
    assert search.assemble(20_000).budget_tokens == 1000
    assert search.assemble(20_019).budget_tokens == 1000  # floor
    assert search.assemble(1_000_000).budget_tokens == 4000


@pytest.mark.subprocess
def test_budget_with_unknown_context_is_capped_at_10000() -> None:
    assert tool_search(_small()).assemble(None).budget_tokens == 4000
    config = ToolSearchConfig(listing_max_tokens=60000)
    assert tool_search(_small(), config=config).assemble(None).budget_tokens == 10000


@pytest.mark.subprocess
def test_statistics_have_the_documented_keys() -> None:
    stats = tool_search(_small()).assemble(200_000).statistics()
    assert list(stats) == [
        "tier",
        "listing_form",
        "budget_tokens",
        "listing_tokens",
        "visible_count",
        "deferred_count",
        "tokens_saved",
        "bridge_tokens",
    ]
    assert json.loads(json.dumps(stats)) == stats


@pytest.mark.subprocess
def test_tokens_saved_compares_with_sending_everything() -> None:
    registry = _catalog_registry(_livemcp_slice(50))
    assembly = tool_search(registry).assemble(200_000)

    def tokens(tool: Tool) -> int:
        return estimate_tokens(compact_json(render_tool(tool)))

    everything = sum(tokens(tool) for tool in registry)
    sent = sum(tokens(tool) for tool in assembly.tools)
    assert everything > sent
    assert assembly.tokens_saved == everything - sent


@pytest.mark.subprocess
def test_an_assembly_renders_no_deferred_schema_until_tokens_saved_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import hermes_core.search._toolsearch as toolsearch

    rendered: list[str] = []

    def counting_render(tool: Tool) -> int:
        rendered.append(tool.name)
        return tool_tokens(tool)

    # The tool search renders a schema only to count its tokens.
    monkeypatch.setattr(toolsearch, "tool_tokens", counting_render)
    registry = _catalog_registry(_livemcp_slice(50))
    assembly = tool_search(registry).assemble(200_000)
    sent = set(_names(assembly.tools))
    assert assembly.deferred_count == 50
    assert set(rendered) <= sent, "deferred schemas were rendered to assemble"
    assert assembly.tokens_saved > 0
    assert {tool.name for tool in registry} <= set(rendered)


def _bridge_tokens(tools: tuple[Tool, ...]) -> int:
    return sum(
        estimate_tokens(compact_json(render_tool(tool)))
        for tool in tools
        if tool.name in BRIDGE_TOOL_NAMES
    )


def test_tokens_saved_is_zero_not_negative_when_the_bridge_costs_more_than_it_saves() -> None:
    # A fresh install: two small deferred tools, and three bridge tools that cost more.
    registry = registry_of(
        [core_tool("read_file", "Read a file."), plugin_tool("todo", "todo_list", "Todos.")]
    )
    assembly = tool_search(registry).assemble(200_000)
    assert assembly.tier == 1
    assert assembly.tokens_saved == 0
    assert assembly.statistics()["tokens_saved"] == 0


@pytest.mark.subprocess
def test_bridge_tokens_are_the_schema_tokens_of_the_three_bridge_tools_as_sent() -> None:
    assembly = tool_search(_small()).assemble(200_000)
    assert assembly.bridge_tokens == _bridge_tokens(assembly.tools)
    # The listing is part of tool_search's description, so part of what the bridge costs.
    assert assembly.bridge_tokens > assembly.listing_tokens > 0
    assert assembly.statistics()["bridge_tokens"] == assembly.bridge_tokens


@pytest.mark.subprocess
def test_bridge_tokens_are_zero_at_tier_0() -> None:
    config = ToolSearchConfig(enabled="off")
    assembly = tool_search(_small(), config=config).assemble(200_000)
    assert (assembly.tier, assembly.bridge_tokens) == (0, 0)


@pytest.mark.subprocess
def test_assembly_is_idempotent_bridge_tools_in_the_input_are_stripped() -> None:
    registry = _small()
    search = tool_search(registry)
    first = search.assemble(200_000)
    bridge = [tool for tool in first.tools if tool.name in BRIDGE_TOOL_NAMES]
    again = search.assemble(200_000, tools_in=[*bridge, *registry])
    assert _names(again.tools) == _names(first.tools)
    assert again.statistics() == first.statistics()
    assert again.listing == first.listing


@pytest.mark.subprocess
def test_unchanged_registry_returns_the_cached_assembly() -> None:
    search = tool_search(_small())
    assert search.assemble(200_000) is search.assemble(200_000)


@pytest.mark.subprocess
def test_registry_change_rebuilds_the_assembly() -> None:
    registry = _small()
    search = tool_search(registry)
    before = search.assemble(200_000)
    registry.register(mcp_tool("slack", "post_message"), owner="slack")
    after = search.assemble(200_000)
    assert after is not before
    assert after.deferred_count == before.deferred_count + 1
    assert "mcp__slack__post_message" in after.listing


def test_server_added_mid_session_moves_the_session_from_tier_1_to_tier_2() -> None:
    # The budget is exactly alpha's full listing: after gamma connects, alpha's names beside
    # gamma's summary line no longer fit, only summaries do, so the session falls to tier 2.
    alpha = [mcp_tool("alpha", f"tool_{index:02d}", "x") for index in range(6)]
    registry = registry_of([core_tool("read_file"), *alpha])
    budget = build_listing(alpha, 10**6).tokens
    config = ToolSearchConfig(threshold_pct=100, listing_max_tokens=max(budget, 200))
    conversation = session()
    search = tool_search(registry, config=config)
    before = search.assemble(budget, conversation)
    assert (before.tier, before.listing_form, before.budget_tokens) == (1, "full", budget)
    gamma = [mcp_tool("gamma_server_with_a_long_name", f"t{index}") for index in range(40)]
    registry.register_all(gamma, owner="gamma_server_with_a_long_name")
    after = search.assemble(budget, conversation)
    assert after.tier == 2
    assert after.listing_form == "summary"
    assert "gamma_server_with_a_long_name (40 tools" in after.listing
    assert "alpha (6 tools, names not listed" in after.listing


@pytest.mark.subprocess
def test_grant_restricts_visible_and_deferred_tools() -> None:
    conversation = session(granted_toolsets=frozenset({"core", "mcp-github"}))
    assembly = tool_search(_small()).assemble(200_000, conversation)
    assert "forecast" not in assembly.listing
    assert "mcp__github__create_issue" in assembly.listing
    assert assembly.deferred_count == 2


@pytest.mark.subprocess
def test_grant_without_deferred_tools_is_tier_0() -> None:
    conversation = session(granted_toolsets=frozenset({"core"}))
    assembly = tool_search(_small()).assemble(200_000, conversation)
    assert assembly.tier == 0
    assert _names(assembly.tools) == ["read_file", "terminal"]


@pytest.mark.subprocess
def test_unavailable_servers_appear_in_the_listing() -> None:
    search = tool_search(_small(), unavailable=lambda: {"jira": (4, "not reachable")})
    assert "jira (4 tools unavailable: not reachable)" in search.assemble(200_000).listing


def test_an_unavailable_server_keeps_the_bridge_up_when_nothing_else_is_deferred() -> None:
    only_core = registry_of([core_tool("read_file", "Read a file.")])
    down = tool_search(only_core, unavailable=lambda: {"jira": (4, "not reachable")})
    assembly = down.assemble(200_000)
    assert assembly.tier == 2
    assert "jira (4 tools unavailable: not reachable)" in assembly.listing
    assert tool_search(only_core).assemble(200_000).tier == 0


@pytest.mark.subprocess
def test_the_assembly_carries_the_listing_and_the_registered_bridge_tools_none() -> None:
    # The listing depends on the session's grant and budget: it is rendered into each assembly,
    # and the bridge tools the dispatcher runs (what hooks see) carry no session's listing.
    search = tool_search(_small())
    assembly = search.assemble(200_000)
    assert _names(search.bridge_tools()) == BRIDGE
    assert "Deferred tools by source" in assembly.tools[2].description
    assert "Deferred tools by source" not in search.bridge_tools()[0].description


@pytest.mark.subprocess
def test_assemble_renders_each_provider_format() -> None:
    assembly = tool_search(_small()).assemble(200_000)
    neutral, openai, anthropic = (assembly.render(s) for s in ("neutral", "openai", "anthropic"))
    assert neutral[0] == {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {}},
    }
    assert openai[0] == {"type": "function", "function": neutral[0]}
    assert anthropic[0] == {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert assembly.as_dict()["tools"] == neutral
    with pytest.raises(ValueError, match="unknown tool format"):
        assembly.render("gemini")  # type: ignore[arg-type]


# Real catalogs ----------------------------------------------------------------------------------


def _catalog_registry(tools: list[Tool]) -> Registry:
    registry = registry_of([core_tool("read_file"), core_tool("terminal")])
    for tool in tools:
        registry.register(tool, owner=tool.source_name or "catalog")
    return registry


@pytest.fixture(scope="module")
def saas_tools() -> list[Tool]:
    return load_catalog(SAAS_CATALOG)


@pytest.mark.subprocess
def test_saas_catalog_at_200k_context_is_tier_2_within_the_4000_token_cap(
    saas_tools: list[Tool],
) -> None:
    registry = _catalog_registry(saas_tools)
    assembly = tool_search(registry).assemble(200_000)
    assert assembly.tier == 2
    assert assembly.deferred_count == 5468
    assert assembly.budget_tokens == 4000
    assert 0 < assembly.listing_tokens <= 4000
    # The ladder keeps names of the small servers and collapses the large ones.
    assert assembly.listing_form == "mixed"
    assert "github (" in assembly.listing
    assert "names not listed" in assembly.listing
    assert assembly.tokens_saved > 1_000_000


@pytest.mark.subprocess
def test_saas_catalog_at_small_context_is_tier_2(saas_tools: list[Tool]) -> None:
    registry = _catalog_registry(saas_tools)
    assembly = tool_search(registry).assemble(10_000)
    assert assembly.tier == 2
    assert assembly.listing_form == "summary"
    assert assembly.listing_tokens <= assembly.budget_tokens == 500
    assert "github (1223 tools, names not listed; find them with tool_search)" in assembly.listing


def _livemcp_slice(count: int) -> list[Tool]:
    servers = json.loads(LIVEMCP_TOOLS.read_text(encoding="utf-8"))
    tools: list[Tool] = []
    for server in servers:
        for group in server["tools"].values():
            name = group["server_name"]
            for tool in group["tools"]:
                short = tool["name"]
                full = f"mcp__{name}__{short}"
                if len(tools) < count and len(full) <= 64 and full not in {t.name for t in tools}:
                    schema = tool.get("inputSchema") or {"type": "object"}
                    tools.append(mcp_tool(name, short, tool.get("description") or "", schema))
    return tools


@pytest.mark.subprocess
def test_fifty_tool_catalog_is_tier_1_with_the_full_listing() -> None:
    tools = _livemcp_slice(50)
    assert len(tools) == 50
    assembly = tool_search(_catalog_registry(tools)).assemble(200_000)
    assert assembly.tier == 1
    assert assembly.listing_form == "full"
    for tool in tools:
        assert f"- {tool.name}: {short_description(tool.description)}" in assembly.listing


@pytest.mark.subprocess
def test_bridge_names_are_reserved_in_assembly_output() -> None:
    assembly = tool_search(_small()).assemble(200_000)
    assert [t.name for t in assembly.tools if t.name in BRIDGE_TOOL_NAMES] == BRIDGE

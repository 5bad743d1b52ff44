"""The catalog listing: short descriptions, block forms, stable bytes, the degradation ladder."""

from __future__ import annotations

import random

from bridge_fixtures import mcp_tool, plugin_tool

from hermes_core._tools import Tool
from hermes_core.search._listing import (
    LISTING_HEADER,
    build_listing,
    group_of,
    short_description,
)
from hermes_core.search._render import estimate_tokens


def _tools() -> list[Tool]:
    return [
        mcp_tool("github", "create_issue", "Create an issue in a repository. Needs a title."),
        mcp_tool("github", "list_issues", "List the issues of a repository."),
        mcp_tool("github", "get_repo", "Get one repository."),
        mcp_tool("slack", "post_message", "Post a message to a channel."),
        plugin_tool("weather", "forecast", "Weather forecast for a city."),
        Tool(name="loose_tool", description="Something without an owner.", source="plugin"),
    ]


def test_short_description_is_the_first_sentence() -> None:
    assert short_description("Create an issue. Needs a title.") == "Create an issue."
    assert short_description("GitHub API Root\n\nGet links") == "GitHub API Root"


def test_short_description_reads_html_as_text() -> None:
    # OpenAPI catalogs (AWS's among them) write descriptions in HTML: the listing showed
    # "<p>Deletes the bucket" and "&amp;".
    assert short_description("<p>Deletes the bucket.</p> <p>All objects go.</p>") == (
        "Deletes the bucket."
    )
    assert short_description("<p>Returns the <code>ACL</code> &amp; owner</p>") == (
        "Returns the ACL & owner"
    )
    # Angle brackets that are not HTML are kept.
    assert short_description("Rename <name> to <new-name>.") == "Rename <name> to <new-name>."


def test_short_description_cuts_at_a_word_boundary_to_60_characters() -> None:
    text = "Retrieve the complete list of every repository owned by the authenticated user"
    short = short_description(text)
    assert short.endswith("…")
    assert len(short) <= 61
    assert text.startswith(short[:-1])
    assert text[len(short) - 1] == " "


def test_group_is_server_plugin_or_other() -> None:
    tools = _tools()
    assert [group_of(tool) for tool in tools] == [
        "github",
        "github",
        "github",
        "slack",
        "weather",
        "other",
    ]


def test_full_listing_names_every_tool_with_its_short_description() -> None:
    listing = build_listing(_tools(), 4000)
    assert listing.form == "full"
    assert listing.named_count == 6
    assert listing.text.splitlines() == [
        LISTING_HEADER,
        "github tools (3):",
        "- mcp__github__create_issue: Create an issue in a repository.",
        "- mcp__github__get_repo: Get one repository.",
        "- mcp__github__list_issues: List the issues of a repository.",
        "other tools (1):",
        "- loose_tool: Something without an owner.",
        "slack tools (1):",
        "- mcp__slack__post_message: Post a message to a channel.",
        "weather tools (1):",
        "- forecast: Weather forecast for a city.",
    ]


def test_listing_tokens_are_a_quarter_of_the_characters_rounded_up() -> None:
    listing = build_listing(_tools(), 4000)
    assert listing.tokens == -(-len(listing.text) // 4) == estimate_tokens(listing.text)


def test_listing_bytes_identical_across_runs_and_registration_orders() -> None:
    tools = _tools()
    first = build_listing(tools, 4000).text
    for seed in range(5):
        shuffled = list(tools)
        random.Random(seed).shuffle(shuffled)
        assert build_listing(shuffled, 4000).text.encode() == first.encode()


def test_names_form_when_full_does_not_fit() -> None:
    tools = _tools()
    full = build_listing(tools, 4000)
    listing = build_listing(tools, full.tokens - 1)
    assert listing.form == "names"
    assert "github tools (3):\nmcp__github__create_issue, mcp__github__get_repo, " in listing.text
    assert listing.named_count == 6


def _servers() -> list[Tool]:
    sizes = {"big": 30, "mid": 12, "tie_a": 5, "tie_b": 5}
    return [
        mcp_tool(server, f"operation_number_{index}")
        for server, size in sizes.items()
        for index in range(size)
    ]


def _summary_groups(text: str) -> list[str]:
    return [line.split(" (")[0] for line in text.splitlines() if "names not listed" in line]


def test_degradation_collapses_the_largest_group_first() -> None:
    tools = _servers()
    full = build_listing(tools, 100000)
    assert full.form == "full"
    collapsed_one: list[str] = []
    for budget in range(full.tokens, 0, -1):
        listing = build_listing(tools, budget)
        if listing.form == "mixed":
            collapsed_one = _summary_groups(listing.text)
            break
    assert collapsed_one == ["big"]


def test_degradation_collapses_ties_by_name() -> None:
    tools = _servers()
    seen: list[list[str]] = []
    for budget in range(2000, 0, -1):
        listing = build_listing(tools, budget)
        summary = _summary_groups(listing.text)
        if summary and summary not in seen:
            seen.append(summary)
    assert seen[:4] == [
        ["big"],
        ["big", "mid"],
        ["big", "mid", "tie_a"],
        ["big", "mid", "tie_a", "tie_b"],
    ]


def test_all_summary_listing_names_no_tool() -> None:
    tools = _servers()
    smallest = min(
        (build_listing(tools, budget) for budget in range(1, 400)),
        key=lambda listing: (listing.form == "none", listing.tokens),
    )
    assert smallest.form == "summary"
    assert smallest.named_count == 0
    assert "big (30 tools, names not listed; find them with tool_search)" in smallest.text


def test_no_listing_when_even_summaries_do_not_fit() -> None:
    listing = build_listing(_servers(), 20)
    assert listing.form == "none"
    assert listing.text == ""
    assert listing.tokens == 0


def test_no_listing_with_a_zero_budget() -> None:
    assert build_listing(_tools(), 0).form == "none"


def test_unavailable_servers_are_listed_with_their_reason() -> None:
    listing = build_listing(_tools(), 4000, {"jira": (12, "connection refused")})
    lines = listing.text.splitlines()
    assert "jira (12 tools unavailable: connection refused)" in lines
    # Sorted among the groups by name: after github's block, before "other".
    assert lines.index("jira (12 tools unavailable: connection refused)") == 5


def test_unavailable_servers_stay_in_a_summary_listing() -> None:
    tools = _servers()
    for budget in range(1, 500):
        listing = build_listing(tools, budget, {"down": (3, "timed out")})
        if listing.form != "none":
            break
    assert listing.form == "summary"
    assert "down (3 tools unavailable: timed out)" in listing.text

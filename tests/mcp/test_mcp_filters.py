"""``include`` then ``exclude``: which tools of a server are kept."""

from __future__ import annotations

from hermes_core._mcp.filters import ToolFilter

NAMES = ["get_time", "get_zone", "set_zone", "zone_delete_all"]


def test_no_patterns_keep_everything() -> None:
    assert ToolFilter().apply(NAMES).kept == tuple(NAMES)


def test_include_keeps_only_matches() -> None:
    outcome = ToolFilter(include=("get_*",)).apply(NAMES)
    assert outcome.kept == ("get_time", "get_zone")
    assert outcome.filtered == ("set_zone", "zone_delete_all")


def test_exclude_applies_after_include() -> None:
    outcome = ToolFilter(include=("*zone*",), exclude=("*_delete_*", "get_*")).apply(NAMES)
    assert outcome.kept == ("set_zone",)


def test_exclude_alone_removes_matches() -> None:
    assert ToolFilter(exclude=("*_delete_*",)).apply(NAMES).filtered == ("zone_delete_all",)


def test_globs_are_case_sensitive() -> None:
    assert ToolFilter(include=("GET_*",)).apply(NAMES).kept == ()


def test_pattern_matching_nothing_is_reported() -> None:
    outcome = ToolFilter(include=("get_*", "nope_*"), exclude=("gone",)).apply(NAMES)
    assert outcome.unmatched_patterns == ("nope_*", "gone")


def test_refusal_names_the_rule_and_the_server() -> None:
    rule = ToolFilter(include=("get_*",), exclude=("get_zone",))
    assert "exclude pattern 'get_zone'" in rule.describe_refusal("clock", "get_zone")
    message = rule.describe_refusal("clock", "set_zone")
    assert "include" in message
    assert "mcp_servers.clock" in message
    assert "'set_zone'" in message

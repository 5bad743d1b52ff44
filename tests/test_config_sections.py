"""The configuration's sections from Python, as an agent that embeds the host builds them: every
way in (a mapping, keyword arguments, an assignment, a copy) is checked as the file is, and a
refused value leaves the section as it was."""

from __future__ import annotations

import pytest

from hermes_core._config import (
    ApprovalsConfig,
    Config,
    InvalidConfig,
    McpServerConfig,
    ToolSearchConfig,
)


def test_every_problem_of_a_mapping_is_reported_with_its_location() -> None:
    data = {
        "mcp_servers": {"time": {"command": "uvx", "timeout": -1}},
        "approvals": {"non_interactive": "maybe"},
    }

    with pytest.raises(InvalidConfig) as caught:
        Config.model_validate(data)

    where = {problem.loc for problem in caught.value.problems}
    assert where == {("mcp_servers", "time", "timeout"), ("approvals", "non_interactive")}


def test_keyword_construction_is_checked_like_the_file() -> None:
    with pytest.raises(InvalidConfig, match="timeout"):
        McpServerConfig(command="uvx", timeout="soon")


def test_a_refused_assignment_raises_and_keeps_the_old_value() -> None:
    approvals = ApprovalsConfig(policy="manual")

    with pytest.raises(InvalidConfig, match="non_interactive"):
        approvals.non_interactive = "maybe"  # type: ignore[assignment]

    assert approvals.non_interactive == "deny"


def test_an_assignment_that_breaks_a_rule_across_keys_is_refused() -> None:
    # A server is started by a command or reached at a url, never both.
    server = McpServerConfig(command="uvx")

    with pytest.raises(InvalidConfig):
        server.url = "http://127.0.0.1:9/mcp"

    assert server.url is None
    assert server.command == "uvx"


def test_a_copy_with_changes_is_checked_and_the_original_is_untouched() -> None:
    search = ToolSearchConfig()

    with pytest.raises(InvalidConfig, match="max_search_limit"):
        search.model_copy(update={"max_search_limit": 0})
    changed = search.model_copy(update={"admission": "strict"})

    assert changed.admission == "strict"
    assert search.admission == "off"


@pytest.mark.subprocess
def test_mutable_defaults_are_not_shared_between_sections() -> None:
    first, second = ToolSearchConfig(), ToolSearchConfig()

    first.always_visible.append("terminal")

    assert second.always_visible == []


def test_a_boolean_written_as_a_word_is_read_and_anything_else_refused() -> None:
    server = McpServerConfig.model_validate({"command": "uvx", "enabled": "no"})

    assert server.enabled is False
    with pytest.raises(InvalidConfig, match="enabled"):
        McpServerConfig.model_validate({"command": "uvx", "enabled": "perhaps"})


def test_a_dump_validates_back_to_an_equal_configuration() -> None:
    config = Config.model_validate(
        {"mcp_servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}
    )

    assert Config.model_validate(config.model_dump()) == config


def test_null_where_a_list_or_mapping_is_expected_reads_as_empty() -> None:
    """``defer:`` with every ``- name`` deleted is an empty list (not its default); the same
    for a mapping, a list inside a section of a mapping, and an assignment of ``None``."""
    config = Config.model_validate(
        {
            "tools": {"tool_search": {"defer": None}, "enabled_toolsets": None},
            "plugins": {"disabled": None, "entries": None},
            "mcp_servers": {"time": {"command": "uvx", "args": None, "env": None}},
        }
    )
    assert config.tools.tool_search.defer == []
    assert config.tools.enabled_toolsets is None  # optional: null still means "not set"
    assert config.plugins.disabled == []
    assert config.plugins.entries == {}
    assert config.mcp_servers["time"].args == []
    assert config.mcp_servers["time"].env == {}
    search = ToolSearchConfig()
    search.always_visible = None  # type: ignore[assignment]
    assert search.always_visible == []


def test_a_list_key_holding_text_or_a_mapping_is_still_refused() -> None:
    with pytest.raises(InvalidConfig) as caught:
        Config.model_validate({"plugins": {"disabled": {"a": 1}, "enabled": "files"}})
    messages = {problem.loc: problem.message for problem in caught.value.problems}
    assert messages[("plugins", "disabled")] == "expected a list, got a mapping"
    assert messages[("plugins", "enabled")].startswith("expected a list of names, got 'files'")

"""Safe tool names: ``mcp__<server>__<tool>``, at most 64 characters of ``[A-Za-z0-9_-]``."""

from __future__ import annotations

import pytest

from hermes_core._config import InvalidConfig
from hermes_core._mcp.names import mcp_tool_name, mcp_toolset
from hermes_core._tools import TOOL_NAME_PATTERN


def test_legal_name_is_prefixed_with_server() -> None:
    assert mcp_tool_name("time", "get_current_time") == "mcp__time__get_current_time"


def test_toolset_is_named_after_server() -> None:
    assert mcp_toolset("git") == "mcp-git"


@pytest.mark.parametrize(
    ("server", "tool"),
    [
        ("srv", "x" * 80),
        ("srv", "files.read"),
        ("my server", "ping"),
        ("srv", "résumé"),
        ("a" * 70, "b"),
    ],
    ids=["too-long", "dot", "space-in-server", "non-ascii", "long-server"],
)
def test_illegal_or_long_names_are_shortened_to_the_rule(server: str, tool: str) -> None:
    name = mcp_tool_name(server, tool)
    assert TOOL_NAME_PATTERN.fullmatch(name)
    assert len(name) <= 64


def test_shortening_is_deterministic() -> None:
    assert mcp_tool_name("srv", "files.read") == mcp_tool_name("srv", "files.read")


def test_names_that_sanitize_alike_stay_distinct() -> None:
    # "files.read" and "files_read" sanitize to the same text; the hash keeps them apart.
    assert mcp_tool_name("srv", "files.read") != mcp_tool_name("srv", "files_read")
    assert mcp_tool_name("srv", "y" * 70 + "a") != mcp_tool_name("srv", "y" * 70 + "b")


def test_shortened_name_keeps_a_readable_prefix() -> None:
    assert mcp_tool_name("srv", "files.read").startswith("mcp__srv__files_read_")


@pytest.mark.parametrize("name", ["my.box", "git__x", "_lead", "trail_", "two words", ""])
def test_config_refuses_server_names_that_cannot_be_part_of_tool_names(name: str) -> None:
    from hermes_core._config import Config

    with pytest.raises(InvalidConfig, match="letters, digits, '-' and single '_'"):
        Config.model_validate({"mcp_servers": {name: {"command": "x"}}})


@pytest.mark.parametrize("name", ["time", "git-2", "my_box", "A1"])
def test_config_accepts_server_names_of_letters_digits_dash_and_single_underscore(
    name: str,
) -> None:
    from hermes_core._config import Config

    assert name in Config.model_validate({"mcp_servers": {name: {"command": "x"}}}).mcp_servers

"""The registry: the name rule, reserved bridge names, duplicates and precedence, toolsets."""

from __future__ import annotations

import pytest

from hermes_core._config import ToolsConfig
from hermes_core._errors import RegistrationError
from hermes_core._registry import Registry
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool, check_tool_name, toolset_enabled


def _tool(name: str, toolset: str = "default") -> Tool:
    return Tool(name, f"The {name} tool.", toolset=toolset)


@pytest.mark.parametrize("name", ["read_file", "a", "x" * 64, "mcp-time_get-now", "ABC123"])
def test_valid_tool_names_follow_the_name_rule(name: str) -> None:
    assert check_tool_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "dots.no", "slash/no", "émoji", 7])
def test_invalid_tool_names_are_refused_naming_the_owner(name: object) -> None:
    registry = Registry()

    with pytest.raises(RegistrationError, match="my-plugin: tool name"):
        registry.register(Tool(name, "bad"), owner="my-plugin")  # type: ignore[arg-type]
    assert len(registry) == 0
    assert registry.generation == 0


@pytest.mark.parametrize("name", sorted(BRIDGE_TOOL_NAMES))
def test_bridge_names_are_reserved(name: str) -> None:
    registry = Registry()

    with pytest.raises(RegistrationError, match="reserved for the tool search bridge") as caught:
        registry.register(_tool(name), owner="sneaky")
    assert str(caught.value).endswith(": give the tool another name")  # what the author does
    assert registry.register(_tool(name), owner="tool-search", bridge=True)


def test_duplicate_name_is_an_error_naming_both_owners() -> None:
    registry = Registry()
    first = _tool("deploy")
    registry.register(first, owner="alpha")

    with pytest.raises(
        RegistrationError, match="'deploy' is registered by both 'alpha' and 'beta'"
    ):
        registry.register(_tool("deploy"), owner="beta")
    assert registry.get("deploy") is first


def test_higher_precedence_overrides_and_the_loser_is_recorded_as_shadowed() -> None:
    registry = Registry()
    bundled, user = _tool("read_file"), _tool("read_file")
    registry.register(bundled, owner="files", precedence=0)

    assert registry.register(user, owner="my-files", precedence=1)
    assert not registry.register(_tool("read_file"), owner="old-files", precedence=0)
    assert registry.get("read_file") is user
    assert [(s.owner, s.shadowed_by) for s in registry.shadowed] == [
        ("files", "my-files"),
        ("old-files", "my-files"),
    ]


def test_register_all_is_all_or_nothing() -> None:
    registry = Registry()
    registry.register(_tool("taken"), owner="first")
    generation = registry.generation

    with pytest.raises(RegistrationError):
        registry.register_all([_tool("fresh"), _tool("taken")], owner="second")
    assert "fresh" not in registry
    assert registry.generation == generation


def test_register_all_names_the_owner_on_tools_without_a_source() -> None:
    registry = Registry()

    (tool,) = registry.register_all([_tool("ping")], owner="netkit")

    assert tool.source_name == "netkit"
    assert registry.get("ping") is tool


def test_every_change_advances_the_generation() -> None:
    registry = Registry()
    registry.register(_tool("a"), owner="p")
    registry.register(_tool("b"), owner="q")
    after_register = registry.generation

    registry.unregister("a")
    removed = registry.unregister_owner("q")

    assert after_register == 2
    assert registry.generation == 4
    assert [t.name for t in removed] == ["b"]
    assert len(registry) == 0


@pytest.mark.subprocess
def test_disabled_toolset_wins_over_enabled() -> None:
    assert not toolset_enabled("terminal", ["terminal", "files"], ["terminal"])
    assert toolset_enabled("files", ["terminal", "files"], ["terminal"])
    assert not toolset_enabled("todo", ["files"], [])
    assert toolset_enabled("todo", None, [])


@pytest.mark.subprocess
def test_enabled_tools_follow_the_toolsets_config() -> None:
    registry = Registry()
    for name, toolset in (("read_file", "files"), ("terminal", "terminal"), ("todo_list", "todo")):
        registry.register(_tool(name, toolset), owner="builtin")

    only_files = registry.enabled(
        ToolsConfig(enabled_toolsets=["files", "todo"], disabled_toolsets=["todo"])
    )

    assert [t.name for t in only_files] == ["read_file"]


def test_listeners_hear_of_each_change_once_and_of_a_batch_once() -> None:
    registry = Registry()
    heard: list[int] = []
    unsubscribe = registry.subscribe(lambda: heard.append(registry.generation))

    registry.register(_tool("one"), owner="a")
    registry.register_all([_tool("two"), _tool("three")], owner="b")
    registry.unregister_owner("b")
    with registry.batch():
        registry.register(_tool("four"), owner="c")
        registry.unregister("one")
    with registry.batch():
        pass  # no change: nothing to hear of
    unsubscribe()
    registry.register(_tool("five"), owner="d")

    assert heard == [1, 3, 5, 7]


def test_a_refused_register_all_is_not_announced() -> None:
    registry = Registry()
    registry.register(_tool("taken"), owner="a")
    heard: list[int] = []
    registry.subscribe(lambda: heard.append(registry.generation))

    with pytest.raises(RegistrationError):
        registry.register_all([_tool("fresh"), _tool("taken")], owner="b")

    assert heard == []
    assert "fresh" not in registry


def test_a_failing_listener_does_not_stop_the_change_or_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = Registry()
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("listener bug")

    registry.subscribe(broken)
    registry.subscribe(lambda: heard.append("second"))

    assert registry.register(_tool("one"), owner="a")

    assert "one" in registry
    assert heard == ["second"]
    assert "a registry listener failed" in caplog.text

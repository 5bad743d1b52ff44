"""Property: whatever JSON the model sends to whichever tool, dispatch returns a ToolResult."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import build_harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.tools import ToolResult

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
SHELL_TOOLS = {"terminal", "process_manage"}


def test_arbitrary_json_to_every_registered_tool_returns_a_result(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, config={"approvals": {"policy": "annotations"}})
    (harness.env.cwd / "seed.txt").write_text("some text\n")
    session = harness.session()
    tools = sorted(harness.registry, key=lambda t: t.name)
    assert {t.name for t in tools} >= SHELL_TOOLS | {"read_file", "patch", "todo_list"}

    def arguments_for(name: str) -> st.SearchStrategy[Any]:
        tool = harness.registry.get(name)
        assert tool is not None
        keys = st.sampled_from(sorted(tool.parameters.get("properties", {}))) | st.text(max_size=8)
        return st.one_of(JSON, st.dictionaries(keys, JSON, max_size=4))

    calls = st.sampled_from([t.name for t in tools]).flatmap(
        lambda name: st.tuples(st.just(name), arguments_for(name))
    )

    @settings(
        max_examples=250,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(call=calls)
    def check(call: tuple[str, Any]) -> None:
        name, arguments = call
        result = harness.call(name, arguments, session)
        assert isinstance(result, ToolResult)
        assert isinstance(result.content, list)
        if name in SHELL_TOOLS:
            # The non-interactive annotations policy denies before any command could run.
            assert result.error_code in {"DENIED", "INVALID_ARGUMENTS"}, result.text_content

    @settings(max_examples=60, deadline=None)
    @given(command=st.text(min_size=1, max_size=30).filter(str.strip))
    def shell_commands_are_denied(command: str) -> None:
        result = harness.call("terminal", {"command": command}, session)
        assert result.error_code == "DENIED"

    try:
        check()
        shell_commands_are_denied()
    finally:
        harness.close()
    assert {p.name for p in harness.env.cwd.iterdir()} == {"seed.txt"}
    assert not (tmp_path / "cache" / "processes").exists()

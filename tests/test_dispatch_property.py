"""Property: whatever JSON the model sends to whichever tool, dispatch returns a ToolResult."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import build_harness, make_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strength import STRENGTH

from hermes_core._tools import ToolResult

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
SHELL_TOOLS = {"terminal", "process_manage", "execute_code"}
"""Tools that run commands or code: never run on arbitrary arguments in this session."""


@pytest.mark.subprocess
@pytest.mark.parametrize("strength", STRENGTH)
def test_arbitrary_json_to_every_registered_tool_returns_a_result(
    tmp_path: Path, strength: int
) -> None:
    harness = build_harness(tmp_path, config={"approvals": {"policy": "annotations"}})
    (harness.env.cwd / "seed.txt").write_text("some text\n")
    session = harness.session()
    tools = sorted(harness.registry, key=lambda t: t.name)
    assert {t.name for t in tools} >= SHELL_TOOLS | {"read_file", "patch", "todo_list"}

    def arguments_for(name: str) -> st.SearchStrategy[Any]:
        tool = harness.registry.get(name)
        assert tool is not None
        names = sorted(tool.parameters.get("properties", {}))
        keys = st.text(max_size=8)
        if names:  # a tool without parameters (skills_list) has no names to draw from
            keys = st.sampled_from(names) | keys
        return st.one_of(JSON, st.dictionaries(keys, JSON, max_size=4))

    calls = st.sampled_from([t.name for t in tools]).flatmap(
        lambda name: st.tuples(st.just(name), arguments_for(name))
    )

    @settings(
        max_examples=50 * strength,
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

    @settings(max_examples=12 * strength, deadline=None)
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


def _nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


# What the fuzzing of tool_call found: JSON strings nested deeper than Python parses, values no
# JSON encoder takes (in-process callers can send anything), lone surrogates, huge integers.
DEEP_JSON_TEXT = st.integers(1, 60_000).flatmap(
    lambda n: st.sampled_from(["[" * n + "]" * n, '{"a":' * n + "1" + "}" * n])
)
NOT_JSON = st.sampled_from(
    [{1, 2}, frozenset({"x"}), b"bytes", (1, "tuple"), object(), float("nan"), 10**5000, "a\ud800"]
)
ODD = st.one_of(JSON, NOT_JSON, DEEP_JSON_TEXT, st.integers(1, 5_000).map(_nested_list))
NAMES = st.sampled_from(
    [
        "todo_list",
        "read_file",
        "tool_call",
        "tool_search",
        "mcp__github__create_issue",
        "connectors__gmail__SEND_EMAIL",
        "nosuch",
    ]
) | st.text(max_size=10)
ENTRY = st.fixed_dictionaries({"name": NAMES}, optional={"arguments": ODD}) | ODD
PAYLOAD = (
    st.fixed_dictionaries(
        {},
        optional={
            "calls": st.lists(ENTRY, max_size=12) | DEEP_JSON_TEXT | ODD,
            "name": NAMES | ODD,
            "arguments": ODD,
        },
    )
    | ODD
)


@pytest.mark.parametrize("strength", STRENGTH)
def test_arbitrary_payloads_to_tool_call_through_the_host_return_a_result(
    tmp_path: Path, strength: int
) -> None:
    import json

    import anyio.from_thread

    from hermes_core._config import Config
    from hermes_core._host import Host

    env = make_env(tmp_path)
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Host(Config(), env)) as host,
    ):
        session = host.new_session()

        @settings(
            max_examples=60 * strength,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(payload=PAYLOAD)
        def check(payload: Any) -> None:
            result = portal.call(host.dispatch, "tool_call", payload, session)
            assert isinstance(result, ToolResult)
            assert isinstance(result.content, list)

        check()
        host.dispatcher.activity_log.flush()
    log = env.log_dir / "activity.jsonl"
    if log.exists():  # every event that was written is one whole JSON line
        for line in log.read_text(encoding="utf-8").splitlines():
            json.loads(line)

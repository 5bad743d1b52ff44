"""The one call path: hooks see the real tool once each way, directives, failures, activity."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import Harness, build_harness, make_env

from hermes_core._approvals.prompt import Answer, ApprovalRequest
from hermes_core._hookspecs import hookimpl
from hermes_core._session import Session
from hermes_core._specs import ActivityEvent, PreCallDirective, ToolCall
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.connectors._signin import TOKEN_VARIABLE
from hermes_core.testing._devgateway import DevGateway
from hermes_core.testing._gateway_fixtures import parse_fixtures

READ_ONLY = ToolAnnotations(read_only=True, destructive=False)


class SampleTools:
    """A plugin with tools whose handlers record what they received."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []

    def _record(self, name: str) -> Callable[..., Any]:
        def handler(**arguments: Any) -> str:
            self.received.append((name, arguments))
            return f"{name} ok"

        return handler

    @hookimpl
    def hermes_tools(self, config: Any, env: Any) -> list[Tool]:
        def hang(seconds: float = 1.0) -> str:
            self.received.append(("hang", {}))
            time.sleep(seconds)
            return "woke up"

        async def hang_async() -> str:
            await anyio.sleep(30)
            return "woke up"

        def explode() -> str:
            raise RuntimeError("the disk is on fire")

        def wrong_type() -> object:
            return object()

        schema = {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "text": {"type": "string"}},
            "additionalProperties": False,
        }
        common: dict[str, Any] = {"toolset": "sample", "annotations": READ_ONLY}
        return [
            Tool("echo", "Echo.", schema, handler=self._record("echo"), **common),
            Tool("hang", "Hangs.", handler=hang, timeout=0.3, **common),
            Tool("hang_async", "Hangs.", handler=hang_async, timeout=0.3, **common),
            Tool("explode", "Raises.", handler=explode, **common),
            Tool("wrong_type", "Bad return.", handler=wrong_type, **common),
            Tool("other", "Other set.", handler=self._record("other"), toolset="extra"),
        ]


class Recorder:
    """Records every pre and post hook call it sees."""

    def __init__(self) -> None:
        self.pre: list[tuple[str, dict[str, Any]]] = []
        self.post: list[tuple[str, bool]] = []
        self.events: list[ActivityEvent] = []

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.pre.append((call.name, dict(call.arguments)))

    @hookimpl
    def hermes_post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        self.post.append((call.name, result.is_error))

    @hookimpl
    def hermes_tool_activity(self, event: ActivityEvent) -> None:
        self.events.append(event)


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(*plugins: tuple[str, object], **options: Any) -> Harness:
        harness = build_harness(tmp_path / f"h{len(made)}", plugins=plugins, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


def direct_call(
    harness: Harness, name: str, arguments: Any, session: Session
) -> tuple[list[ToolResult], list[str]]:
    """The agent hands the call to the dispatcher itself."""
    return [harness.call(name, arguments, session)], [name]


def through_tool_call(
    harness: Harness, name: str, arguments: Any, session: Session
) -> tuple[list[ToolResult], list[str]]:
    """The model calls a deferred tool through the bridge's tool_call, which the dispatcher
    routes to the real tool (the host registered the bridge tools)."""
    payload = {"calls": [{"name": name, "arguments": arguments}]}
    return [harness.call("tool_call", payload, session)], [name]


def through_execute_code(
    harness: Harness, name: str, arguments: Any, session: Session
) -> tuple[list[ToolResult], list[str]]:
    """A script run by execute_code calls the tool over its RPC (the user allowed
    execute_code itself); the script prints the tool's text."""
    harness.dispatcher.allow_rules.add("execute_code")
    code = f"import hermes_tools\nprint(hermes_tools.call({name!r}, **{arguments!r}), end='')\n"
    ran = harness.call("execute_code", {"code": code}, session)
    output = ran.structured["output"] if isinstance(ran.structured, dict) else ""
    return [ToolResult.text(output) if not ran.is_error else ran], [name]


class ApproveEveryCall:
    """A person who approves every prompt once."""

    interactive = True

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer:
        return "once"


@contextmanager
def signed_in_to_gateway(tmp_path: Path, name: str) -> Iterator[dict[str, Any]]:
    """The reference gateway (a real HTTP server on 127.0.0.1) serving ``SAMPLE_<name>`` of app
    ``sample``, which answers ``"<name> ok"``; yields the options of a harness whose host is
    configured for it and signed in."""
    tool = {"slug": f"SAMPLE_{name}", "result": f"{name} ok"}
    app = {"slug": "sample", "connected": True, "tools": [tool]}
    with DevGateway(parse_fixtures({"connectors": [app]})) as gateway:
        yield {
            "config": {"tools": {"connectors": {"url": gateway.url}}},
            "env": make_env(tmp_path, **{TOKEN_VARIABLE: "a-token"}),
        }


def through_connector_batch(
    harness: Harness, name: str, arguments: Any, session: Session
) -> tuple[list[ToolResult], list[str]]:
    """The model calls a hosted connector tool twice in one tool_call batch: each entry is a
    call of its own under its real name ``connectors__sample__<name>``, sent by the bundled http
    gateway to the reference gateway."""
    real = f"connectors__sample__{name}"
    payload = {"calls": [{"name": real, "arguments": arguments}] * 2}
    harness.dispatcher.approvals.attach(session, ApproveEveryCall())

    async def batch() -> ToolResult:
        try:
            return await harness.dispatcher.dispatch("tool_call", payload, session)
        finally:
            await harness.host.connectors.aclose()

    answer = anyio.run(batch)
    assert not answer.is_error, answer.text_content
    entries = [
        ToolResult.text(item["response"]) if "response" in item else ToolResult.error("", str(item))
        for item in answer.structured["results"]
    ]
    return entries, [real, real]


@dataclass(frozen=True)
class CallPath:
    """One way a call reaches the dispatcher; ``setup(tmp_path, name)`` gives what the harness
    needs for it (a gateway serving the tool, say) while it runs."""

    run: Callable[[Harness, str, Any, Session], tuple[list[ToolResult], list[str]]]
    setup: Callable[[Path, str], AbstractContextManager[dict[str, Any]]] = field(
        default=lambda tmp_path, name: nullcontext({})
    )


CALL_PATHS = [
    pytest.param(CallPath(direct_call), id="direct"),
    pytest.param(CallPath(through_tool_call), id="tool_call"),
    pytest.param(CallPath(through_execute_code), id="execute_code"),
    pytest.param(CallPath(through_connector_batch, signed_in_to_gateway), id="connector_batch"),
]
"""Every way a call reaches the dispatcher."""

CARRIERS = frozenset({"execute_code"})
"""Tools that carry the call of another (their own hooks see them, not the carried call)."""


@pytest.mark.parametrize("call_path", CALL_PATHS)
def test_one_pre_and_one_post_hook_per_call_under_the_real_name(
    harnesses: Callable[..., Harness], tmp_path: Path, call_path: CallPath
) -> None:
    recorder, tools = Recorder(), SampleTools()
    with call_path.setup(tmp_path / "setup", "echo") as options:
        harness = harnesses(("sample", tools), ("recorder", recorder), **options)
        session = harness.session()
        results, called = call_path.run(harness, "echo", {"text": "hi"}, session)

    assert [(r.is_error, r.text_content) for r in results] == [(False, "echo ok")] * len(called)
    assert [seen for seen in recorder.pre if seen[0] not in CARRIERS] == [
        (name, {"text": "hi"}) for name in called
    ]
    assert [seen for seen in recorder.post if seen[0] not in CARRIERS] == [
        (name, False) for name in called
    ]
    events = [(e.name, e.status) for e in recorder.events if e.name not in CARRIERS]
    assert events == [(name, "ok") for name in called]


class RaisingHook:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> None:
        raise ValueError("policy file unreadable")


class SleepingHook:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> None:
        time.sleep(1.0)


class AsyncSleepingHook:
    @hookimpl
    async def hermes_pre_tool_call(self, call: ToolCall) -> None:
        await anyio.sleep(30)


class BlockingHook:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> PreCallDirective:
        return PreCallDirective.block("echo is not allowed on Fridays")


@pytest.mark.parametrize(
    ("hook", "expected"),
    [
        pytest.param(RaisingHook(), "policy file unreadable", id="raises"),
        pytest.param(SleepingHook(), "did not answer within 0.2 s", id="times-out"),
        pytest.param(AsyncSleepingHook(), "did not answer within 0.2 s", id="times-out-async"),
        pytest.param(BlockingHook(), "echo is not allowed on Fridays", id="blocks"),
    ],
)
def test_failing_or_blocking_pre_hook_stops_the_call_and_names_the_plugin(
    harnesses: Callable[..., Harness], hook: object, expected: str
) -> None:
    tools = SampleTools()
    harness = harnesses(
        ("sample", tools), ("gatekeeper", hook), config={"plugins": {"hook_timeout": 0.2}}
    )

    result = harness.call("echo", {"text": "x"})

    assert result.is_error
    assert result.error_code == "BLOCKED"
    assert "'gatekeeper'" in result.text_content
    assert expected in result.text_content
    assert tools.received == []
    assert harness.activity()[-1]["status"] == "blocked"


class Rewriter:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> PreCallDirective:
        return PreCallDirective.modify({**call.arguments, "text": "rewritten", "count": "7"})


def test_modify_directive_changes_what_the_handler_and_later_hooks_see(
    harnesses: Callable[..., Harness],
) -> None:
    tools, later = SampleTools(), Recorder()
    # pluggy calls the last registered first: the rewriter runs before the recorder.
    harness = harnesses(("sample", tools), ("later", later), ("rewriter", Rewriter()))

    result = harness.call("echo", {"text": "original"})

    assert not result.is_error, result.text_content
    assert later.pre == [("echo", {"text": "rewritten", "count": 7})]
    assert tools.received == [("echo", {"text": "rewritten", "count": 7})]


def test_modify_directive_with_invalid_arguments_is_refused_naming_the_plugin(
    harnesses: Callable[..., Harness],
) -> None:
    class BadRewriter:
        @hookimpl
        def hermes_pre_tool_call(self, call: ToolCall) -> PreCallDirective:
            return PreCallDirective.modify({"count": "many"})

    tools = SampleTools()
    harness = harnesses(("sample", tools), ("bad-rewriter", BadRewriter()))

    result = harness.call("echo", {"count": 1})

    assert result.error_code == "INVALID_ARGUMENTS"
    assert "'bad-rewriter'" in result.text_content
    assert isinstance(result.structured, dict)
    hint = result.structured["hint"]
    assert "were not yours: plugin 'bad-rewriter' replaced them" in hint
    assert "Fix the arguments" not in hint  # the model cannot fix what a hook wrote
    assert tools.received == []


@pytest.mark.parametrize(
    ("tool", "code", "words"),
    [
        pytest.param("explode", "TOOL_ERROR", "the disk is on fire", id="raises"),
        pytest.param("hang", "TIMEOUT", "did not finish within 0.3 s", id="hangs"),
        pytest.param("hang_async", "TIMEOUT", "did not finish within 0.3 s", id="hangs-async"),
        pytest.param("wrong_type", "TOOL_ERROR", "returned object", id="wrong-type"),
    ],
)
def test_failing_handler_is_an_error_result_and_the_next_call_is_served(
    harnesses: Callable[..., Harness], tool: str, code: str, words: str
) -> None:
    tools = SampleTools()
    harness = harnesses(("sample", tools))
    session = harness.session()

    failed = harness.call(tool, {}, session)
    after = harness.call("echo", {"text": "still here"}, session)

    assert failed.is_error
    assert failed.error_code == code
    assert words in failed.text_content
    assert not after.is_error
    assert after.text_content == "echo ok"


class AlmostJson:
    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        def nan() -> object:
            return {"ratio": float("nan")}

        def a_set() -> object:
            return {"tags": {"a"}}

        def deep() -> object:
            nested: list[Any] = []
            for _ in range(100_000):
                nested = [nested]
            return {"tree": nested}

        def odd() -> object:
            return {"thing": type("X" * 100_000, (), {})()}

        hints = ToolAnnotations(read_only=True, destructive=False)
        return [
            Tool("ratio", "NaN inside.", handler=nan, toolset="almost", annotations=hints),
            Tool("tags", "A set inside.", handler=a_set, toolset="almost", annotations=hints),
            Tool("deep", "Deep inside.", handler=deep, toolset="almost", annotations=hints),
            Tool("odd", "A long name.", handler=odd, toolset="almost", annotations=hints),
        ]


@pytest.mark.parametrize(
    ("tool", "words"),
    [
        pytest.param(
            "ratio",
            "ratio returned a dict that is not JSON data: it holds NaN or Infinity, which JSON "
            "cannot write",
            id="nan",
        ),
        pytest.param(
            "tags",
            "tags returned a dict that is not JSON data: Object of type set is not JSON "
            "serializable",
            id="set",
        ),
        pytest.param(
            "deep",
            "deep returned a dict that is not JSON data: it is nested too deeply to write as JSON",
            id="nested-too-deep",  # was an INTERNAL_ERROR, hermes-core's failure
        ),
        pytest.param(
            "odd",
            "odd returned a dict that is not JSON data: Object of type XXX",
            id="long-type-name",
        ),
    ],
)
def test_a_result_holding_what_json_cannot_write_says_what_inside_is_wrong(
    harnesses: Callable[..., Harness], tool: str, words: str
) -> None:
    harness = harnesses(("almost", AlmostJson()))

    result = harness.call(tool, {})

    assert result.error_code == "TOOL_ERROR"
    assert words in result.text_content
    assert "which is not a ToolResult" not in result.text_content
    assert len(result.text_content) < 500


def test_arguments_are_coerced_before_validation(harnesses: Callable[..., Harness]) -> None:
    tools = SampleTools()
    harness = harnesses(("sample", tools))

    result = harness.call("echo", {"count": "42"})

    assert not result.is_error
    assert tools.received == [("echo", {"count": 42})]


def test_invalid_arguments_name_the_argument_and_the_handler_does_not_run(
    harnesses: Callable[..., Harness],
) -> None:
    tools = SampleTools()
    harness = harnesses(("sample", tools))

    wrong_type = harness.call("echo", {"count": "lots"})
    unknown = harness.call("echo", {"colour": "red"})
    not_object = harness.call("echo", [1, 2])

    assert wrong_type.error_code == "INVALID_ARGUMENTS"
    assert "count" in wrong_type.text_content
    assert unknown.error_code == "INVALID_ARGUMENTS"
    assert "colour" in unknown.text_content
    assert not_object.error_code == "INVALID_ARGUMENTS"
    assert tools.received == []


def test_an_invalid_argument_of_a_megabyte_comes_back_cut_not_whole(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(("sample", SampleTools()))

    result = harness.call("echo", {"count": "y" * 1_000_000})

    assert result.error_code == "INVALID_ARGUMENTS"
    assert "count" in result.text_content
    assert len(result.text_content) < 5_000
    assert len(json.dumps(result.structured)) < 10_000


def test_unknown_tool_suggests_close_names(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses(("sample", SampleTools()))

    result = harness.call("ecko", {})

    assert result.error_code == "UNKNOWN_TOOL"
    assert "echo" in result.text_content


def test_disabled_toolset_and_ungranted_toolset_are_not_callable(
    harnesses: Callable[..., Harness],
) -> None:
    tools = SampleTools()
    harness = harnesses(("sample", tools), config={"tools": {"disabled_toolsets": ["extra"]}})
    narrow = harness.session(granted_toolsets=frozenset({"files"}))

    disabled = harness.call("other", {})
    ungranted = harness.call("echo", {}, narrow)

    assert disabled.error_code == "UNKNOWN_TOOL"
    assert "not available" in disabled.text_content
    assert ungranted.error_code == "UNKNOWN_TOOL"
    assert tools.received == []


def test_interrupted_session_does_not_run_the_call(harnesses: Callable[..., Harness]) -> None:
    tools = SampleTools()
    harness = harnesses(("sample", tools))
    session = harness.session()
    session.interrupt()

    result = harness.call("echo", {}, session)

    assert result.error_code == "INTERRUPTED"
    assert tools.received == []
    assert harness.activity()[-1]["status"] == "interrupted"


def test_post_observer_failure_is_isolated_and_transforms_chain(
    harnesses: Callable[..., Harness],
) -> None:
    class BrokenObserver:
        @hookimpl
        def hermes_post_tool_call(self, call: ToolCall) -> None:
            raise RuntimeError("observer bug")

    class Shouter:
        @hookimpl
        def hermes_transform_tool_result(self, result: ToolResult) -> ToolResult:
            return ToolResult.text(result.text_content.upper())

    class Exclaimer:
        @hookimpl
        async def hermes_transform_tool_result(self, result: ToolResult) -> ToolResult:
            return ToolResult.text(result.text_content + "!")

    harness = harnesses(
        ("sample", SampleTools()),
        ("exclaimer", Exclaimer()),
        ("broken", BrokenObserver()),
        ("shouter", Shouter()),
    )

    result = harness.call("echo", {})

    # Last registered first: shouter, then exclaimer sees the shouted text.
    assert result.text_content == "ECHO OK!"


def test_activity_log_has_real_name_status_duration_and_redacted_secrets(
    harnesses: Callable[..., Harness],
) -> None:
    class SecretTool:
        @hookimpl
        def hermes_tools(self) -> list[Tool]:
            def login(user: str, api_key: str, note: str) -> str:
                return "logged in"

            return [Tool("login", "Log in.", handler=login, annotations=READ_ONLY)]

    harness = harnesses(("secret", SecretTool()), ("sample", SampleTools()))
    session = harness.session()

    harness.call("login", {"user": "ada", "api_key": "abc123", "note": "sk-" + "A" * 30}, session)
    harness.call("explode", {}, session)

    first, second = harness.activity()
    assert first["name"] == "login"
    assert first["status"] == "ok"
    assert first["arguments"] == {"user": "ada", "api_key": "[redacted]", "note": "[redacted]"}
    assert first["session_id"] == session.id
    assert first["source"] == "secret"
    assert first["duration_ms"] >= 0
    assert second["name"] == "explode"
    assert second["status"] == "error"
    assert "the disk is on fire" in second["message"]

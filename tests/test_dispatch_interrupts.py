"""Plugin code raising what normally ends a program (``KeyboardInterrupt``, a ``BaseException``
of its own, an ``asyncio.CancelledError`` nobody asked for) fails like any other plugin code:
nothing raises out of ``dispatch``. A real cancellation of the caller still cancels the call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import Harness, build_harness

from hermes_core._approvals.policy import Decision
from hermes_core._approvals.prompt import Answer, ApprovalRequest
from hermes_core._hookspecs import hookimpl
from hermes_core._session import Session
from hermes_core._specs import ActivityEvent, ToolCall
from hermes_core._tools import Tool, ToolAnnotations, ToolResult

READ_ONLY = ToolAnnotations(read_only=True, destructive=False)


class PluginBaseException(BaseException):
    """Outside the ``Exception`` hierarchy, as careless plugin code sometimes raises."""


ENDINGS = [
    pytest.param(KeyboardInterrupt, id="KeyboardInterrupt"),
    pytest.param(PluginBaseException, id="BaseException"),
    pytest.param(asyncio.CancelledError, id="CancelledError-raised-by-plugin-code"),
]
KINDS = [pytest.param(False, id="sync"), pytest.param(True, id="async")]


def raising(ending: type[BaseException], is_async: bool) -> Callable[..., Any]:
    """A function (or coroutine function) that raises ``ending``."""
    if is_async:

        async def coroutine(*args: Any, **kwargs: Any) -> Any:
            raise ending("raised by plugin code")

        return coroutine

    def function(*args: Any, **kwargs: Any) -> Any:
        raise ending("raised by plugin code")

    return function


class Tools:
    """``calm`` answers; ``ending`` runs the given handler; ``slow`` sleeps."""

    def __init__(self, handler: Callable[..., Any] | None = None) -> None:
        self.handler = handler
        self.ran: list[str] = []

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        def calm() -> str:
            self.ran.append("calm")
            return "calm"

        async def slow() -> str:
            await anyio.sleep(30)
            return "slow"

        tools = [
            Tool("calm", "x", handler=calm, toolset="sample", annotations=READ_ONLY),
            Tool("slow", "x", handler=slow, toolset="sample", annotations=READ_ONLY),
        ]
        if self.handler is not None:
            tools.append(
                Tool("ending", "x", handler=self.handler, toolset="sample", annotations=READ_ONLY)
            )
        return tools


def hook_plugin(hook_name: str, function: Callable[..., Any]) -> object:
    """A plugin object whose only hook implementation is ``hook_name`` = ``function``."""
    plugin = type("Plugin", (), {})()
    setattr(plugin, hook_name, hookimpl(function))
    return plugin


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(*plugins: tuple[str, object], tools: Tools | None = None) -> Harness:
        harness = build_harness(
            tmp_path / f"h{len(made)}", plugins=[("sample", tools or Tools()), *plugins]
        )
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.mark.parametrize("is_async", KINDS)
@pytest.mark.parametrize("ending", ENDINGS)
def test_a_pre_hook_raising_a_base_exception_blocks_the_call_naming_the_plugin(
    harnesses: Callable[..., Harness], ending: type[BaseException], is_async: bool
) -> None:
    tools = Tools()
    hook = hook_plugin("hermes_pre_tool_call", raising(ending, is_async))
    harness = harnesses(("gatekeeper", hook), tools=tools)

    result = harness.call("calm", {})

    assert result.error_code == "BLOCKED"
    assert "'gatekeeper'" in result.text_content
    assert ending.__name__ in result.text_content
    assert tools.ran == []
    assert harness.call("calm", {}, harness.session()).error_code == "BLOCKED"  # still serving


@pytest.mark.parametrize("is_async", KINDS)
@pytest.mark.parametrize("ending", ENDINGS)
def test_a_handler_raising_a_base_exception_is_a_tool_error(
    harnesses: Callable[..., Harness], ending: type[BaseException], is_async: bool
) -> None:
    harness = harnesses(tools=Tools(raising(ending, is_async)))

    result = harness.call("ending", {})

    assert result.error_code == "TOOL_ERROR"
    assert ending.__name__ in result.text_content
    assert harness.call("calm", {}).text_content == "calm"


@pytest.mark.parametrize(
    "hook_name",
    ["hermes_post_tool_call", "hermes_transform_tool_result", "hermes_tool_activity"],
)
@pytest.mark.parametrize("ending", ENDINGS)
def test_an_observer_raising_a_base_exception_changes_nothing(
    harnesses: Callable[..., Harness], ending: type[BaseException], hook_name: str
) -> None:
    def observer(call: ToolCall | None = None, event: ActivityEvent | None = None) -> None:
        raise ending("raised by plugin code")

    observer.__name__ = hook_name
    harness = harnesses(("watcher", hook_plugin(hook_name, observer)))

    result = harness.call("calm", {})

    assert result.text_content == "calm"
    assert [record["name"] for record in harness.activity()] == ["calm"]


class EndingPolicy:
    def __init__(self, ending: type[BaseException]) -> None:
        self.ending = ending

    def decide(self, call: ToolCall, session: Session) -> Decision:
        raise self.ending("raised by the policy")


class EndingPrompt:
    interactive = True

    def __init__(self, ending: type[BaseException]) -> None:
        self.ending = ending

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        raise self.ending("raised by the prompt")


@pytest.mark.parametrize("ending", ENDINGS)
def test_an_approval_policy_raising_a_base_exception_denies(
    harnesses: Callable[..., Harness], ending: type[BaseException]
) -> None:
    harness = harnesses()
    harness.dispatcher.policy = EndingPolicy(ending)

    result = harness.call("calm", {})

    assert result.error_code == "DENIED"
    assert ending.__name__ in result.text_content


@pytest.mark.subprocess
@pytest.mark.parametrize("ending", ENDINGS)
def test_a_prompt_raising_a_base_exception_denies(
    harnesses: Callable[..., Harness], ending: type[BaseException]
) -> None:
    harness = harnesses()
    marker = harness.env.cwd / "created"
    session = harness.session(interactive=True, prompt=EndingPrompt(ending))

    result = harness.call("terminal", {"command": f"touch {marker}"}, session)

    assert result.error_code == "DENIED"
    assert not marker.exists()


# A real cancellation ------------------------------------------------------------------------


async def _sleeping_hook(call: ToolCall) -> None:
    if call.name == "calm":
        await anyio.sleep(30)


@pytest.mark.parametrize(
    ("tool", "plugins"),
    [
        pytest.param("calm", [("sleeper", hook_plugin("hermes_pre_tool_call", _sleeping_hook))]),
        pytest.param("slow", [], id="handler"),
    ],
    ids=["pre-hook", "handler"],
)
def test_cancelling_the_callers_scope_still_cancels_the_call(
    harnesses: Callable[..., Harness], tool: str, plugins: list[tuple[str, object]]
) -> None:
    harness = harnesses(*plugins)
    session = harness.session()
    results: list[ToolResult] = []

    async def main() -> bool:
        with anyio.move_on_after(0.3) as scope:
            results.append(await harness.dispatcher.dispatch(tool, {}, session))
        return scope.cancelled_caught

    started = time.monotonic()
    assert anyio.run(main) is True
    assert results == []
    assert time.monotonic() - started < 10


def test_cancelling_the_callers_task_still_cancels_the_call(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(("sleeper", hook_plugin("hermes_pre_tool_call", _sleeping_hook)))
    session = harness.session()

    async def main() -> None:
        task = asyncio.ensure_future(harness.dispatcher.dispatch("calm", {}, session))
        await asyncio.sleep(0.3)
        task.cancel()  # what asyncio.run does on Ctrl-C
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())

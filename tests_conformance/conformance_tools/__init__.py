"""The tools the conformance suite's ``tools-call-*`` server scenarios call, as an ordinary
directory plugin: ``test_tool_with_progress`` reports through hermes' public
``report_progress``, which ``hermes serve`` turns into ``notifications/progress``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from hermes_core.plugin import Tool, ToolAnnotations, ToolResult, hookimpl, report_progress

_READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True)


def simple_text() -> ToolResult:
    return ToolResult.text("This is a simple text response for testing.")


def error_handling() -> ToolResult:
    return ToolResult.error("TOOL_ERROR", "This tool intentionally returns an error for testing")


async def with_progress() -> ToolResult:
    for done in (0, 50, 100):
        report_progress(done, 100, f"{done}% done")
        await anyio.sleep(0.05)
    return ToolResult.text("Progress tool completed")


def _tool(name: str, description: str, handler: Any) -> Tool:
    return Tool(
        name=name,
        description=description,
        handler=handler,
        toolset="conformance_tools",
        source_name="conformance_tools",
        annotations=_READ,
    )


@hookimpl
def hermes_tools(config: Any, env: Any) -> Sequence[Tool]:
    return [
        _tool("test_simple_text", "Returns a simple text.", simple_text),
        _tool("test_error_handling", "Always returns an error result.", error_handling),
        _tool("test_tool_with_progress", "Reports progress 0, 50, 100.", with_progress),
    ]

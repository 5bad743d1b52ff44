"""The event a shell hook reads on stdin and a hook directory's ``handle(event)`` receives.

A JSON object: ``event`` (``pre_tool_call``, ``post_tool_call``, ``session_start``,
``session_end``), ``session_id`` and ``cwd``; for tool events also ``tool_name`` (always the real
tool) and ``arguments`` (as the handler will get them: coerced, not redacted); for
``post_tool_call`` also ``result`` (``is_error``, ``error_code``, ``text``, ``structured``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from hermes_core._session import Session
    from hermes_core._specs import ToolCall
    from hermes_core._tools import ToolResult

__all__ = ["EVENTS", "HookEvent", "session_event", "tool_event"]

HookEvent = Literal["pre_tool_call", "post_tool_call", "session_start", "session_end"]
EVENTS: Final[tuple[HookEvent, ...]] = (
    "pre_tool_call",
    "post_tool_call",
    "session_start",
    "session_end",
)


def session_event(event: HookEvent, session: Session) -> dict[str, Any]:
    """The event of a session starting or ending."""
    return {"event": event, "session_id": session.id, "cwd": str(session.cwd)}


def tool_event(
    event: HookEvent, call: ToolCall, session: Session, result: ToolResult | None = None
) -> dict[str, Any]:
    """The event of a tool call about to run (``pre_tool_call``) or finished
    (``post_tool_call``, with its ``result``)."""
    payload = session_event(event, session)
    payload["tool_name"] = call.name
    payload["arguments"] = dict(call.arguments)
    if result is not None:
        payload["result"] = {
            "is_error": result.is_error,
            "error_code": result.error_code,
            "text": result.text_content,
            "structured": result.structured,
        }
    return payload

"""Shell hooks and hook directories as plugin objects, so the dispatcher runs them as it runs a
plugin's hooks: in one order, under a timeout, failing closed on ``pre_tool_call``.

Each adapter implements one hook of :mod:`hermes_core._hookspecs` for one event and hands the
event (:mod:`hermes_core._hooks.events`) to its action when the tool name matches. It says who it
is in ``hermes_hook_owner`` (how the dispatcher's messages name it), how to turn it off in
``hermes_hook_remedy`` (said with its failures) and how long it may take in
``hermes_hook_timeout`` (instead of ``plugins.hook_timeout``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from hermes_core._hooks.events import HookEvent, session_event, tool_event
from hermes_core._hookspecs import hookimpl

if TYPE_CHECKING:
    from hermes_core._session import Session
    from hermes_core._specs import ToolCall
    from hermes_core._tools import ToolResult

__all__ = ["EventAction", "EventHook", "adapter_for"]

EventAction = Callable[[dict[str, Any]], Awaitable[Any]]
"""Runs a hook for one event; on ``pre_tool_call`` what it returns is read as a directive."""


class EventHook:
    """The common part: who the hook is, how to turn it off, its timeout, its tool-name glob
    and its action."""

    def __init__(
        self, owner: str, remedy: str, timeout: float, match: str, action: EventAction
    ) -> None:
        self.hermes_hook_owner = owner
        self.hermes_hook_remedy = remedy
        self.hermes_hook_timeout = timeout
        self.match = match
        self.action = action

    def matches(self, tool_name: str) -> bool:
        """Whether the hook applies to a call of ``tool_name``."""
        return self.match == "*" or fnmatchcase(tool_name, self.match)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.hermes_hook_owner}>"


class PreToolCallHook(EventHook):
    """``pre_tool_call``: its action's answer is the directive (``None``: go on)."""

    @hookimpl
    async def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> Any:
        if not self.matches(call.name):
            return None
        return await self.action(tool_event("pre_tool_call", call, session))


class PostToolCallHook(EventHook):
    """``post_tool_call``: an observer; its action's answer is ignored."""

    @hookimpl
    async def hermes_post_tool_call(
        self, call: ToolCall, result: ToolResult, session: Session
    ) -> None:
        if self.matches(call.name):
            await self.action(tool_event("post_tool_call", call, session, result))


class SessionStartHook(EventHook):
    """``session_start``: an observer."""

    @hookimpl
    async def hermes_session_start(self, session: Session) -> None:
        await self.action(session_event("session_start", session))


class SessionEndHook(EventHook):
    """``session_end``: an observer."""

    @hookimpl
    async def hermes_session_end(self, session: Session) -> None:
        await self.action(session_event("session_end", session))


_ADAPTERS: dict[HookEvent, type[EventHook]] = {
    "pre_tool_call": PreToolCallHook,
    "post_tool_call": PostToolCallHook,
    "session_start": SessionStartHook,
    "session_end": SessionEndHook,
}


def adapter_for(
    event: HookEvent, owner: str, remedy: str, timeout: float, match: str, action: EventAction
) -> EventHook:
    """The plugin object that runs ``action`` on ``event``; ``remedy`` is what its failure
    says to do (``fix or disable it (hermes hooks disable NAME)``)."""
    return _ADAPTERS[event](owner, remedy, timeout, match, action)

"""The call path as a running handler reaches it: a protocol, so that what a handler is given
(:class:`~hermes_core._execution.caller.ToolCaller`) depends on it and not on the dispatcher.

A handler that declares a parameter named :data:`CALLER_PARAMETER` receives what the
dispatcher's caller factory (:data:`CallerFactory`, injected by the host) makes for the call
being run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._registry import Registry
    from hermes_core._session import Session
    from hermes_core._tools import Tool, ToolResult

__all__ = ["CALLER_PARAMETER", "CallPath", "CallerFactory"]

CALLER_PARAMETER: Final = "caller"
"""The handler parameter that receives what the caller factory makes."""


class CallPath(Protocol):
    """Something that dispatches: the :class:`~hermes_core._dispatch.Dispatcher` as a handler's
    calls back into it see it."""

    @property
    def config(self) -> Config:
        """The host's configuration."""
        ...

    @property
    def env(self) -> Environment:
        """The host's environment."""
        ...

    @property
    def registry(self) -> Registry:
        """The host's registry: every registered tool, in registration order."""
        ...

    def resolve(self, name: str, session: Session | None = None) -> Tool | None:
        """The tool ``name`` when it exists, its toolset is enabled and ``session`` is granted
        it; otherwise ``None``."""
        ...

    async def dispatch(self, name: str, arguments: Any, session: Session) -> ToolResult:
        """Run one call of ``name`` for ``session`` through the whole pipeline; never raises."""
        ...


CallerFactory = Callable[[CallPath, "Tool", "Session"], Any]
"""Makes the value a handler's :data:`CALLER_PARAMETER` receives, from the call path, the tool
whose handler runs and the session of the call."""

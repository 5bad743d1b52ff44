"""``ToolCaller``: how a running tool handler calls other tools, through the one call path.

A handler that declares a parameter named ``caller`` receives a :class:`ToolCaller` for the call
being run, as one that declares ``session`` receives the session. Every call it makes goes
through the call path (:class:`~hermes_core._call_path.CallPath`, the dispatcher) for the same
session under the real tool name: the same hooks, approvals and activity log as a call of the
model. ``execute_code`` serves the RPC of its scripts with it. The host gives the dispatcher a
:class:`ToolCallers`, which makes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core._call_path import CALLER_PARAMETER, CallPath
from hermes_core._execution.environment import ScriptPassthrough, scrubbed_environment
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool, ToolResult

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._session import Session

__all__ = ["CALLER_PARAMETER", "ToolCaller", "ToolCallers"]


class ToolCallers:
    """The dispatcher's caller factory: makes the :class:`ToolCaller` a handler asks for, and
    holds which variable names pass the scrub of a script's environment, per session.

    ``always`` are the names that pass for every session (``code_execution.env_passthrough``
    and the ``requires_env`` of the loaded plugins).
    """

    def __init__(self, always: Iterable[str] = ()) -> None:
        self.passthrough = ScriptPassthrough(always)
        """The variable names that pass the scrub of a script's environment, per session."""

    def __call__(self, calls: CallPath, tool: Tool, session: Session) -> ToolCaller:
        return ToolCaller(calls, tool, session, self.passthrough)


class ToolCaller:
    """The dispatcher as one running handler may use it: for its session, never for itself.

    A handler cannot call its own tool (``execute_code`` cannot start ``execute_code``) nor a
    bridge tool (``tool_call``: call the real tool by its name instead).
    """

    def __init__(
        self, calls: CallPath, tool: Tool, session: Session, passthrough: ScriptPassthrough
    ) -> None:
        self._calls = calls
        self._passthrough = passthrough
        self.tool = tool
        """The tool whose handler is running."""
        self.session = session
        """The session of the call being run; every call made here is made for it."""

    @property
    def config(self) -> Config:
        """The host's configuration."""
        return self._calls.config

    @property
    def env(self) -> Environment:
        """The host's environment."""
        return self._calls.env

    def refusal(self, name: str) -> ToolResult | None:
        """Why this handler may not call ``name`` (its own tool, a bridge tool), else ``None``
        (the dispatcher still decides whether the call may run)."""
        if name == self.tool.name:
            return ToolResult.error("NOT_AVAILABLE", f"{name} cannot call {name} itself.")
        if name in BRIDGE_TOOL_NAMES:
            return ToolResult.error(
                "NOT_AVAILABLE", f"{name} is a bridge tool: call the real tool by its name."
            )
        return None

    def find(self, name: str) -> Tool | None:
        """The tool ``name`` when this session may call it from here (it exists, its toolset
        is enabled and granted, it is neither this tool nor a bridge tool), else ``None``."""
        if self.refusal(name) is not None:
            return None
        return self._calls.resolve(name, self.session)

    def tools(self) -> list[Tool]:
        """Every tool :meth:`find` finds, in registration order."""
        return [tool for tool in self._calls.registry if self.find(tool.name) is not None]

    def toolsets(self) -> frozenset[str]:
        """Every toolset a session may be granted here, this one or not: the registered
        tools', each configured MCP server's and ``connectors`` (what a job or a subagent may
        be given; names only)."""
        from hermes_core._toolsets import grantable_toolsets

        return grantable_toolsets(self._calls.registry.tools(), self.config)

    def is_deferrable(self, tool: Tool) -> bool:
        """Whether ``tool`` is kept out of the model's tool array when tools are deferred
        (``tools.tool_search``: an MCP or plugin tool, a name in ``defer``)."""
        from hermes_core.search._deferral import is_deferrable

        return is_deferrable(tool, self.config.tools.tool_search)

    async def call(self, name: str, arguments: Mapping[str, Any] | Any) -> ToolResult:
        """Run the tool ``name`` with ``arguments`` through the dispatcher, for this session;
        never raises (a refusal is an error result, as every failure of the pipeline)."""
        refusal = self.refusal(name)
        if refusal is not None:
            return refusal
        from hermes_core._progress import listening_to_progress

        # The progress of a call made from a tool is not the progress of the call being served.
        with listening_to_progress(None):
            return await self._calls.dispatch(name, arguments, self.session)

    def pass_variables(self, names: Iterable[str]) -> list[str]:
        """Let the variables ``names`` that are set in the host's environment pass the scrub
        of :meth:`child_environment` for this session from now on; return those given."""
        return self._passthrough.give(self.session, names, self.env.variables)

    def passed_variables(self) -> frozenset[str]:
        """The names that pass the scrub for this session (set or not)."""
        return self._passthrough.names(self.session)

    def child_environment(self) -> dict[str, str]:
        """The environment a child process started for this session gets: the host's variables
        scrubbed of secrets (see :mod:`hermes_core._execution.environment`)."""
        return scrubbed_environment(self.env.variables, self.passed_variables())

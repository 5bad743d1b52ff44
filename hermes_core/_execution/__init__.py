"""What a running tool handler may reach beyond its arguments: calls back into the dispatcher
(:class:`~hermes_core._execution.caller.ToolCaller`, how ``execute_code`` serves its RPC) and the
scrubbed environment of the child processes it starts
(:mod:`hermes_core._execution.environment`)."""

from __future__ import annotations

from hermes_core._execution.caller import CALLER_PARAMETER, ToolCaller, ToolCallers
from hermes_core._execution.environment import (
    SAFE_VARIABLES,
    SECRET_MARKERS,
    ScriptPassthrough,
    looks_secret,
    scrubbed_environment,
)

__all__ = [
    "CALLER_PARAMETER",
    "SAFE_VARIABLES",
    "SECRET_MARKERS",
    "ScriptPassthrough",
    "ToolCaller",
    "ToolCallers",
    "looks_secret",
    "scrubbed_environment",
]

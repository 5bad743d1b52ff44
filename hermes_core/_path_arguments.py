"""Tool arguments that name a file or directory: a NUL character refused, naming the argument.

No file or directory name can hold a NUL (``\\x00``): the system calls end a name there, and
Python refuses it (``ValueError: embedded null byte``) wherever the path is first used, deep in
a tool's work, as a generic failure. Each tool whose argument becomes a path asks
:func:`path_refusal` first, so a NUL is an ``INVALID_ARGUMENTS`` result naming the argument, as
a schema error is, and the tool does nothing.
"""

from __future__ import annotations

from typing import Final

from hermes_core._shown import clipped
from hermes_core._tools import ToolResult
from hermes_core._validation import ArgumentError, argument_path

__all__ = ["path_refusal"]

_NUL: Final = "\x00"


def path_refusal(tool: str, /, **paths: object) -> ToolResult | None:
    """An ``INVALID_ARGUMENTS`` result for the first of ``paths`` (an argument's name, or its
    path inside the arguments such as ``tasks[1].cwd``, and its value as sent) that holds a NUL
    character; ``None`` when none does. A value that is not text is left to the schema."""
    for argument, value in paths.items():
        if isinstance(value, str) and _NUL in value:
            message = (
                f"{clipped(value)!r} holds a NUL character (\\x00), which no file or directory "
                "name can hold"
            )
            where = argument_path([argument])
            return ArgumentError(tool, where, "path", message, parameters={}).to_tool_result()
    return None

"""The generated ``hermes_tools`` module: the client (``client.py``) and one function per tool.

A function takes the tool's parameters as keyword-only arguments (the required ones without a
default; an optional one left out is not sent, so the tool's own default applies) and its
docstring is the tool's description with a line per parameter. A parameter whose name is not a
Python identifier, or a schema open to more properties, adds ``**extra``. A tool whose name is
not an identifier (or clashes with the client's names) has no function; :func:`call` reaches it.
"""

from __future__ import annotations

import functools
import json
import keyword
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hermes_core import Tool

_CLIENT_NAMES = frozenset(
    {"Result", "ToolError", "array", "call", "json", "os", "socket", "threading"}
)


@functools.cache
def client_source() -> str:
    """The text of ``client.py``, the head of every generated module."""
    return (Path(__file__).parent / "client.py").read_text(encoding="utf-8")


def function_name(tool_name: str) -> str | None:
    """The Python name of a tool's function (``-`` becomes ``_``), or ``None`` when it has none."""
    candidate = tool_name.replace("-", "_")
    if (
        not candidate.isidentifier()
        or keyword.iskeyword(candidate)
        or candidate.startswith("_")
        or candidate in _CLIENT_NAMES
    ):
        return None
    return candidate


def _is_parameter_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
    )


def _type_text(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return " or ".join(str(item) for item in kind)
    if "enum" in schema and isinstance(schema["enum"], list):
        return "one of " + ", ".join(json.dumps(item) for item in schema["enum"])
    return "any"


def _docstring(tool: Tool, properties: Mapping[str, Any], required: set[str]) -> str:
    lines = [tool.description.strip() or tool.name]
    if properties:
        lines += ["", "Parameters:"]
        for name, schema in properties.items():
            facts = [_type_text(schema)]
            if name in required:
                facts.append("required")
            elif isinstance(schema, Mapping) and "default" in schema:
                facts.append(f"default {json.dumps(schema['default'])}")
            about = schema.get("description") if isinstance(schema, Mapping) else None
            line = f"    {name} ({', '.join(facts)})"
            lines.append(f"{line}: {about}" if isinstance(about, str) and about else line)
    lines += ["", f"Calls the tool {tool.name!r}."]
    return "\n".join(lines)


def function_source(tool: Tool, name: str) -> str:
    """The ``def`` of the function ``name`` that calls ``tool``."""
    schema = tool.parameters
    raw = schema.get("properties")
    properties: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    listed = schema.get("required")
    required = {str(item) for item in listed} if isinstance(listed, list) else set()
    named = [key for key in properties if _is_parameter_name(key)]
    extra = len(named) < len(properties) or schema.get("additionalProperties") is not False
    parameters = [key if key in required else f"{key}=_UNSET" for key in named]
    if extra:
        parameters.append("**extra")
    signature = ", ".join(["*", *parameters]) if named else ", ".join(parameters)
    passed = ", ".join(f"{key!r}: {key}" for key in named)
    if extra:
        passed = f"{passed}, **extra" if passed else "**extra"
    return (
        f"def {name}({signature}):\n"
        f"    {_docstring(tool, properties, required)!r}\n"
        f"    return _call({tool.name!r}, {{{passed}}})\n"
    )


def module_source(tools: Iterable[Tool], channel_fd: int) -> str:
    """The whole ``hermes_tools`` module for one run: its functions call ``tools`` over the
    channel the host passed to the script as the descriptor ``channel_fd``."""
    parts = [client_source(), f"\n_CHANNEL_FD = {channel_fd:d}\n"]
    exported = []
    for tool in tools:
        name = function_name(tool.name)
        if name is None or name in exported:
            continue
        exported.append(name)
        parts.append("\n\n" + function_source(tool, name))
    parts.append(f"\n\n__all__ = [*__all__, *{exported!r}]\n")
    return "".join(parts)

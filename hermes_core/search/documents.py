"""What text a tool is indexed under.

Per tool: the words of its name without the ``mcp__<server>__`` prefix, the group name when its
words are not already among the name's words (never the placeholder group ``other``), the
description, and the top-level parameter names.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from hermes_core.search.backend import ToolDocument
from hermes_core.search.tokenize import tokenize
from hermes_core.tools import Tool

__all__ = [
    "OTHER_GROUP",
    "bare_tool_name",
    "document_from_tool",
    "document_tokens",
    "parameter_names",
]

OTHER_GROUP = "other"
"""The group of a tool whose server or plugin is unknown."""

_MCP_PREFIX = "mcp__"


def bare_tool_name(name: str) -> str:
    """``name`` without its ``mcp__<server>__`` prefix (``mcp__github__create_issue`` ->
    ``create_issue``); other names unchanged."""
    if name.startswith(_MCP_PREFIX):
        server, separator, rest = name[len(_MCP_PREFIX) :].partition("__")
        if separator and server and rest:
            return rest
    return name


@lru_cache(maxsize=65536)
def _identifier_tokens(text: str) -> tuple[str, ...]:
    # Names, groups and parameter names repeat across a catalog; tokenize each once.
    return tuple(tokenize(text))


def document_tokens(document: ToolDocument) -> list[str]:
    """The tokens ``document`` is indexed under, in order, repeats kept (BM25 counts them)."""
    name_tokens = _identifier_tokens(bare_tool_name(document.name))
    tokens = list(name_tokens)
    if document.group and document.group != OTHER_GROUP:
        group_tokens = _identifier_tokens(document.group)
        if not set(group_tokens) <= set(name_tokens):
            tokens.extend(group_tokens)
    tokens.extend(tokenize(document.description))
    for parameter in document.parameter_names:
        tokens.extend(_identifier_tokens(parameter))
    return tokens


def parameter_names(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The top-level property names of a JSON Schema object, or ``()`` when it has none."""
    if not isinstance(schema, Mapping):
        return ()
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    return tuple(str(name) for name in properties)


def document_from_tool(tool: Tool) -> ToolDocument:
    """The document of a registered tool; its group is the tool's source name or ``other``."""
    return ToolDocument(
        name=tool.name,
        description=tool.description,
        group=tool.source_name or OTHER_GROUP,
        parameter_names=parameter_names(tool.parameters),
    )

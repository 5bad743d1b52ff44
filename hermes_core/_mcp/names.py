"""Safe tool names for MCP tools: ``mcp__<server>__<tool>``.

Model providers accept 1-64 characters of ``[A-Za-z0-9_-]``. A name that breaks the rule is
shortened deterministically: illegal characters become ``_`` and a hash of the full original
name is appended, so two different originals never share a safe name by accident and the same
original always gets the same one. The original MCP name is kept for the call.
"""

from __future__ import annotations

import hashlib
import re

from hermes_core._tools import TOOL_NAME_PATTERN

__all__ = ["MAX_TOOL_NAME_LENGTH", "may_name_a_tool_of", "mcp_tool_name", "mcp_toolset"]

MAX_TOOL_NAME_LENGTH = 64
_HASH_LENGTH = 8
_ILLEGAL = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """The registered name of ``tool`` of ``server``: ``mcp__<server>__<tool>`` when legal,
    otherwise a sanitized prefix of it plus ``_`` and an 8-character hash of the original."""
    wanted = f"mcp__{server}__{tool}"
    if TOOL_NAME_PATTERN.fullmatch(wanted):
        return wanted
    digest = hashlib.sha256(wanted.encode("utf-8")).hexdigest()[:_HASH_LENGTH]
    return f"{_hashed_prefix(wanted)}_{digest}"


def _hashed_prefix(text: str) -> str:
    """What a shortened name keeps of ``text``: legal characters only, room left for the hash."""
    return _ILLEGAL.sub("_", text)[: MAX_TOOL_NAME_LENGTH - _HASH_LENGTH - 1]


def may_name_a_tool_of(name: str, server: str) -> bool:
    """Whether ``name`` may be the registered name of a tool of ``server`` whose listing is not
    known: it begins as :func:`mcp_tool_name` makes them begin (a server name cannot contain
    ``__``, so the prefix is unambiguous). A legal name begins with ``mcp__<server>__``, which
    is its own shortened form when that is legal and short enough, and every other name begins
    with the shortened form."""
    return name.startswith(_hashed_prefix(f"mcp__{server}__"))


def mcp_toolset(server: str) -> str:
    """The toolset every tool of ``server`` belongs to: ``mcp-<server>``."""
    return f"mcp-{server}"

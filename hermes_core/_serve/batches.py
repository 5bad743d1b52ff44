"""When ``hermes serve`` reads a JSON-RPC batch (an array of requests and notifications in one
message), over stdio and over HTTP alike.

MCP 2025-03-26 says servers MUST accept batches, and that ``initialize`` is never part of one;
2025-06-18 removed them (2026-07-28 has none either). A batch of a session at 2025-03-26 (or
2024-11-05, whose JSON-RPC 2.0 has them) is read element by element, each answered on its own;
any other batch is one invalid request (``-32600``, ``"id": null``), as are an empty batch and
one of more than :data:`MAX_BATCH` messages.
"""

from __future__ import annotations

from typing import Any, Final

from mcp.shared.dispatcher import coerce_request_id

__all__ = ["BATCH_VERSIONS", "MAX_BATCH", "batch_refusal", "element_refusal"]

MAX_BATCH: Final = 64
"""The most messages hermes reads in one batch: a batch's calls run at once."""
BATCH_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26"})
"""The protocol revisions whose sessions send batches."""


def batch_refusal(batch: list[Any], version: str | None) -> str | None:
    """Why ``batch`` of a session at protocol ``version`` (``None``: before ``initialize``) is
    refused whole, as the details of its invalid request; ``None`` when its elements are read."""
    if version is None:
        return (
            "a batch before initialize, which comes first and alone (MCP 2025-03-26; "
            "2025-06-18 and later have no batches): send initialize, then batches, or each "
            "message on its own"
        )
    if version not in BATCH_VERSIONS:
        return (
            f"a batch, which protocol {version} does not read (MCP removed batches in "
            "2025-06-18; 2025-03-26 has them): send each message on its own"
        )
    if not batch:
        return "an empty batch: send at least one request or notification in it"
    if len(batch) > MAX_BATCH:
        return (
            f"a batch of {len(batch)} messages, more than the {MAX_BATCH} hermes reads in one "
            "batch: send smaller batches"
        )
    return None


def element_refusal(element: Any, taken: set[int | str]) -> str | None:
    """Why ``element`` of a batch is refused though the batch is read (the details of its
    invalid request); ``None`` when it is read as a message on its own would be. ``taken``
    holds the ids of the batch's requests before it (``element``'s is added): a request id
    is never used twice (MCP), and two answers under one id could not be told apart."""
    if not isinstance(element, dict):
        return None
    if element.get("method") == "initialize":
        return "initialize must not be part of a batch (MCP 2025-03-26): send it alone"
    ident = element.get("id")
    if "method" not in element or isinstance(ident, bool) or not isinstance(ident, int | str):
        return None
    key = coerce_request_id(ident)
    if key in taken:
        return (
            f"the id {ident!r} of an earlier request of this batch (MCP: a request id is never "
            "used twice): give each request its own id"
        )
    taken.add(key)
    return None

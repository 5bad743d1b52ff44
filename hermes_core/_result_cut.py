"""The one rule for cutting a tool result that is too long for a model's context.

MCP results (``mcp_servers.NAME.max_result_chars``) and connector results
(``tools.connectors.max_result_chars``) are cut by :func:`cut_blocks`: a server or a gateway
answering megabytes would fill the context, and a model cannot read past it anyway.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_core._block_lines import block_line

__all__ = ["cut_blocks"]


def cut_blocks(
    blocks: list[dict[str, Any]], structured: Any, limit: int, setting: str
) -> tuple[list[dict[str, Any]], Any]:
    """``blocks`` within ``limit`` characters (a text block's text, another block's data or
    the line a model reads of it, :func:`~hermes_core._block_lines.block_line`, the longer),
    cut where the limit falls, and ``structured`` unless its JSON is
    longer than ``limit``.
    When anything was cut, a last text block says how much and names ``setting``, the
    configuration key of the limit."""
    sizes = [len(_payload(block)) for block in blocks]
    total = sum(sizes)
    dropped_structured = False
    if structured is not None and len(json.dumps(structured, ensure_ascii=False)) > limit:
        structured, dropped_structured = None, True
    if total <= limit and not dropped_structured:
        return blocks, structured
    kept: list[dict[str, Any]] = []
    left_out: dict[str, int] = {}  # a kind of block: how many were left out whole
    room = limit
    for block, size in zip(blocks, sizes, strict=True):
        if size <= room:
            kept.append(block)
            room -= size
        elif block.get("type") == "text" and room > 0:
            kept.append({**block, "text": block["text"][:room]})
            room = 0
        else:
            kind = str(block.get("type", "unknown")).replace("_", " ")
            left_out[kind] = left_out.get(kind, 0) + 1
    said = []
    if total > limit:
        # A block left out whole leaves its room unused: what was cut is more than total - limit.
        cut = f"{total - (limit - room):,} of its {total:,} characters were cut"
        if left_out:
            whole = ", ".join(f"{n:,} {kind} block{'s' * (n > 1)}" for kind, n in left_out.items())
            cut += f" (left out whole: {whole})"
        said.append(cut)
    if dropped_structured:
        said.append("its structured content was left out")
    note = (
        f"[... this result was longer than {setting} ({limit:,}): {' and '.join(said)}; "
        "ask the tool for less (a page, a filter, a range)]"
    )
    kept.append({"type": "text", "text": note})
    return kept, structured


def _payload(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        return str(block.get("text", ""))
    # What the model reads of it (a link's name, an image's MIME type) or its data, the longer.
    return max(str(block.get("data") or block.get("resource") or ""), block_line(block), key=len)

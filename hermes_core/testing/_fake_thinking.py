"""Anthropic's extended thinking on the fake model server: the signed blocks it answers with
and the rules of the real API it enforces.

With ``thinking: {"type": "enabled", "budget_tokens": N}`` in a request, a scripted turn's
``reasoning`` is answered as a ``thinking`` block (its ``signature`` made from its text, so a
changed text no longer matches; several texts, several blocks) and its ``redacted_thinking``
as a ``redacted_thinking`` block after the first, all before the text. The request is
refused (a 400, the API's words) when its budget is under 1,024 tokens or not under
``max_tokens``, when it sets a ``temperature`` other than 1, when a thinking block it sends
back was changed, or when its last assistant message holds a ``tool_use`` and does not open
with its thinking block (the blocks of a tool loop must be sent back unchanged, before the
tool results).

OpenRouter's Claude (an ``anthropic/...`` model on the OpenAI wire, with reasoning asked for)
answers with the same signed thinking as ``reasoning_details`` (:func:`openrouter_details`),
and refuses, as Anthropic behind it does, a last assistant tool call sent back without them or
with one changed (:func:`openrouter_refusal`).
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = [
    "MIN_BUDGET",
    "openrouter_details",
    "openrouter_refusal",
    "signature_of",
    "thinking_blocks",
    "thinking_refusal",
]

MIN_BUDGET = 1024
"""The smallest ``budget_tokens`` the API takes."""

_THINKING_TYPES = ("thinking", "redacted_thinking")


def signature_of(text: str) -> str:
    """The fake's signature of a thinking block's text (the API's is opaque; this one only
    tells a changed text from the one it was made for)."""
    return "fake-sig-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _enabled(body: Any) -> dict[str, Any] | None:
    thinking = body.get("thinking") if isinstance(body, dict) else None
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        return thinking
    return None


def thinking_blocks(
    reasoning: str | tuple[str, ...], redacted: str, body: Any
) -> list[dict[str, Any]]:
    """The blocks that open an answer to ``body``: none unless it enables thinking. Each of
    several ``reasoning`` texts is a block of its own (interleaved thinking), ``redacted``
    after the first."""
    if _enabled(body) is None:
        return []
    texts = (reasoning,) if isinstance(reasoning, str) else reasoning
    blocks = [
        {"type": "thinking", "thinking": text, "signature": signature_of(text)}
        for text in texts
        if text
    ]
    if redacted:
        blocks.insert(min(1, len(blocks)), {"type": "redacted_thinking", "data": redacted})
    return blocks


def _content(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def thinking_refusal(body: Any) -> str | None:
    """Why the API refuses ``body`` for its thinking, or ``None``."""
    thinking = _enabled(body)
    if thinking is None:
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_BUDGET:
        return (
            f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}"
        )
    if not budget < body.get("max_tokens", 0):
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    if body.get("temperature", 1) != 1:
        return "`temperature` may only be set to 1 when thinking is enabled."
    messages = body.get("messages") or []
    for number, message in enumerate(messages):
        for block in _content(message):
            if not isinstance(block, dict) or block.get("type") != "thinking":
                continue
            if block.get("signature") != signature_of(str(block.get("thinking", ""))):
                return f"messages.{number}.content: Invalid `signature` in `thinking` block"
    assistants = [n for n, m in enumerate(messages) if m.get("role") == "assistant"]
    if not assistants:
        return None
    last = assistants[-1]
    blocks = _content(messages[last])
    uses = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
    first = blocks[0].get("type") if blocks and isinstance(blocks[0], dict) else None
    if uses and first not in _THINKING_TYPES:
        return (
            f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
            "start with a thinking block (preceeding the lastmost set of `tool_use` and "
            "`tool_result` blocks). We recommend you include thinking blocks from previous "
            "turns. To avoid this requirement, disable `thinking`."
        )
    return None


_FORMAT = "anthropic-claude-v1"


def openrouter_details(reasoning: str, pieces: list[str], cut: bool) -> list[dict[str, Any]]:
    """The deltas of OpenRouter's Claude thinking ``reasoning``, cut in ``pieces``: each as
    ``reasoning`` text and a ``reasoning_details`` entry, then its signature (none when the
    answer is ``cut`` in it); the entries' whole is one ``reasoning.text`` entry."""
    base = {"type": "reasoning.text", "format": _FORMAT, "index": 0}
    deltas = [{"reasoning": p, "reasoning_details": [{**base, "text": p}]} for p in pieces]
    signed = {**base, "text": "", "signature": signature_of(reasoning)}
    return deltas if cut else [*deltas, {"reasoning_details": [signed]}]


def openrouter_refusal(body: Any) -> str | None:
    """Why OpenRouter refuses ``body`` for its Claude model's thinking, or ``None``."""
    if not isinstance(body, dict) or not str(body.get("model", "")).startswith("anthropic/"):
        return None
    if body.get("reasoning_effort") in (None, "none") and not body.get("reasoning"):
        return None
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for number, message in enumerate(messages):
        for detail in message.get("reasoning_details") or []:
            text = str(detail.get("text", ""))
            if detail.get("type") == "reasoning.text" and detail.get("signature") != signature_of(
                text
            ):
                return f"messages.{number}.content.0: Invalid `signature` in `thinking` block"
    answers = [m for m in messages if m.get("role") == "assistant"]
    if answers and answers[-1].get("tool_calls") and not answers[-1].get("reasoning_details"):
        return (
            "Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` "
            "is enabled, a final `assistant` message must start with a thinking block"
        )
    return None

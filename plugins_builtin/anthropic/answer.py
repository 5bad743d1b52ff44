"""What the events of one streamed Messages answer add up to (:class:`Answer`): the text as
shown, the thinking as shown (a ``thinking`` block's, a paragraph apart from the block's
before, never a ``redacted_thinking`` block's data), the tool calls and thinking blocks in
pieces, the stop reason and the usage (the cache's reads and writes added back into the
input, :func:`_counted`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hermes_core.agent import (
    Message,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    Usage,
    token_count,
)

__all__ = ["Answer"]

_Stop = Literal["end_turn", "tool_use", "max_tokens", "other"]
_STOPS: Mapping[str, _Stop] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
}


def _counted(usage: Any) -> tuple[int | None, int | None, int | None]:
    """A usage's input tokens, all of them, and those read from the cache; ``None`` for what
    it does not say (a message_delta without input counts), or says as no number of tokens
    (:func:`~hermes_core.agent.token_count`)."""
    fresh, read, written, output = (
        token_count(getattr(usage, name, None))
        for name in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        )
    )
    if fresh is None and read is None and written is None:
        return None, None, output
    return (fresh or 0) + (read or 0) + (written or 0), read, output


class Answer:
    """What the events of one answer add up to."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, tuple[str, str, list[str]]] = {}
        self.thinking: dict[int, tuple[list[str], list[str], str]] = {}  # text, signature, data
        self.thought_in: int | None = None  # the block whose thinking was shown last
        self.stop: str | None = None
        self.input_tokens = 0
        self.cached_tokens = 0
        self.output_tokens = 0

    def count(self, usage: Any) -> None:
        """Take a usage: message_start's, then message_delta's (the whole counts, not
        increments; an older API's delta holds only the output)."""
        total, read, output = _counted(usage)
        self.input_tokens = max(self.input_tokens, total or 0)
        if read is not None:
            self.cached_tokens = max(self.cached_tokens, read)
        if output is not None:
            self.output_tokens = output

    def add(self, event: Any) -> TextDelta | ThinkingDelta | None:
        """Take one stream event; the text or thinking it adds to what is shown."""
        kind = event.type
        if kind == "message_start":
            self.count(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                self.calls[event.index] = (block.id, block.name, [])
            elif block.type == "thinking":
                self.thinking[event.index] = ([block.thinking], [block.signature], "")
                return self.shown(event.index, block.thinking)
            elif block.type == "redacted_thinking":
                self.thinking[event.index] = ([], [], block.data)
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self.text.append(delta.text)
                return TextDelta(str(delta.text)) if delta.text else None
            if delta.type == "input_json_delta" and event.index in self.calls:
                self.calls[event.index][2].append(delta.partial_json)
            elif delta.type == "thinking_delta" and event.index in self.thinking:
                self.thinking[event.index][0].append(delta.thinking)
                return self.shown(event.index, delta.thinking)
            elif delta.type == "signature_delta" and event.index in self.thinking:
                self.thinking[event.index][1].append(delta.signature)
        elif kind == "message_delta":
            self.stop = event.delta.stop_reason or self.stop
            self.count(event.usage)
        return None

    def shown(self, index: int, text: Any) -> ThinkingDelta | None:
        """Block ``index``'s thinking ``text`` as shown: a paragraph apart from an earlier
        block's (interleaved thinking gives several in one answer), or nothing if empty."""
        if not text:
            return None
        apart = self.thought_in is not None and self.thought_in != index
        self.thought_in = index
        return ThinkingDelta(("\n\n" if apart else "") + str(text))

    def turn(self) -> ModelTurn:
        calls = tuple(
            ModelToolCall(id_, name, "".join(parts) or "{}")
            for _, (id_, name, parts) in sorted(self.calls.items())
        )
        # A block cut at max_tokens before its signature came is not kept: the API refuses
        # every request that sends it back, and needs none on a turn without tool calls.
        thinking = tuple(
            ThinkingBlock("".join(text), "".join(signature), data)
            for _, (text, signature, data) in sorted(self.thinking.items())
            if data or "".join(signature)
        )
        message = Message("assistant", "".join(self.text), tool_calls=calls, thinking=thinking)
        usage = Usage(self.input_tokens, self.output_tokens, self.cached_tokens)
        return ModelTurn(message, usage=usage, stop_reason=_STOPS.get(self.stop or "", "other"))

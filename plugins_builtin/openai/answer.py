"""What the chunks of one streamed chat completion add up to (:class:`Answer`): the text as
shown, the tool calls in pieces, OpenRouter's ``reasoning_details`` entries in pieces, the
finish reason and the usage (:func:`usage_of`), each joined once, at the answer's end; and
the thinking a chunk streams (:meth:`Answer.thought_of`), shown, never kept."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core.agent import (
    Message,
    ModelToolCall,
    ModelTurn,
    ReasoningDetail,
    Usage,
    token_count,
)

from .text_calls import TextCalls
from .think_tags import ThinkTags

__all__ = ["Answer", "details_thought", "usage_of"]

_Stop = Literal["end_turn", "tool_use", "max_tokens", "other"]
_STOPS: Mapping[str, _Stop] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


_JOINED = ("text", "summary", "signature", "data")
"""The fields of a ``reasoning_details`` entry a stream sends in pieces."""

_THOUGHT_KEYS = ("reasoning_content", "reasoning")
"""Where a delta carries a reasoning model's thinking as text (DeepSeek and vLLM's reasoning
parser; OpenRouter and Ollama)."""


def details_thought(entries: object) -> str:
    """The thinking readable in ``reasoning_details`` entries: their ``text`` and ``summary``
    pieces, never an encrypted entry's ``data``."""
    return "".join(
        value
        for entry in (entries if isinstance(entries, list) else ())
        if isinstance(entry, dict)
        for key in ("summary", "text")
        if isinstance(value := entry.get(key), str)
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)  # joined once, at the answer's end


class _Pieces(list[str]):
    """The pieces of a field of a ``reasoning_details`` entry so far, joined at the answer's
    end: a piece added to the text so far copied it, quadratic in the pieces."""


class Answer:
    """What the chunks of one answer add up to."""

    def __init__(self, tool_names: frozenset[str]) -> None:
        self.text: list[str] = []  # as shown (streamed)
        self.calls: dict[int, _PartialCall] = {}
        self.details: dict[int, dict[str, Any]] = {}  # OpenRouter's reasoning_details, in pieces
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.text_calls = TextCalls(tool_names)
        self.think_tags = ThinkTags()
        self.chunks = 0

    def thought_of(self, delta: Any) -> str:
        """The thinking a chunk's ``delta`` streams: its ``reasoning_content`` or ``reasoning``
        text, else (OpenRouter sends the same thinking in both) its ``reasoning_details``'
        text; then what a ``<think>`` block opening the text held (fed before)."""
        for key in _THOUGHT_KEYS:
            value = getattr(delta, key, None)
            if isinstance(value, str) and value:
                return value + self.think_tags.thought()
        return details_thought(getattr(delta, "reasoning_details", None)) + (
            self.think_tags.thought()
        )

    def add_calls(self, deltas: Any) -> None:
        for delta in deltas:
            index = delta.index if delta.index is not None else 0
            call = self.calls.setdefault(index, _PartialCall())
            call.id = call.id or (delta.id or "")
            function = delta.function
            if function is not None:
                call.name = call.name or (function.name or "")
                call.arguments.append(function.arguments or "")

    def add_details(self, entries: object) -> None:
        """Take a delta's ``reasoning_details``: the pieces of each entry (by its ``index``)
        joined into the entry a whole answer holds."""
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict):
                continue
            index = entry.get("index")
            whole = self.details.setdefault(
                index if isinstance(index, int) else len(self.details), {}
            )
            for key, value in entry.items():
                if key in _JOINED and isinstance(value, str):
                    so_far = whole.get(key)
                    if not isinstance(so_far, _Pieces):
                        whole[key] = so_far = _Pieces([str(so_far or "")])
                    so_far.append(value)
                elif whole.get(key) is None:
                    whole[key] = value

    def turn(self, written: list[tuple[str, str]]) -> ModelTurn:
        calls = [
            ModelToolCall(c.id or _new_id(), c.name, "".join(c.arguments) or "{}")
            for _, c in sorted(self.calls.items())
        ]
        calls += [ModelToolCall(_new_id(), name, arguments) for name, arguments in written]
        stop = _STOPS.get(self.finish or "stop", "other")
        if calls and stop == "end_turn":
            stop = "tool_use"  # servers that say "stop" after calls, or calls found in the text
        # A thinking cut at max_tokens before its signature came is not kept: refused, sent back.
        entries = (
            {key: "".join(v) if isinstance(v, _Pieces) else v for key, v in d.items()}
            for _, d in sorted(self.details.items())
        )
        details = tuple(
            ReasoningDetail.from_json(d)
            for d in entries
            if not (
                stop == "max_tokens"
                and d.get("type") == "reasoning.text"
                and not d.get("signature")
            )
        )
        message = Message(
            "assistant", "".join(self.text), tool_calls=tuple(calls), reasoning_details=details
        )
        return ModelTurn(message, usage=self.usage, stop_reason=stop)


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def usage_of(counted: Any) -> Usage | None:
    """A chunk's usage: its prompt tokens hold the cached ones (OpenAI's
    ``prompt_tokens_details.cached_tokens``, DeepSeek's ``prompt_cache_hit_tokens``). A count
    that is no number of tokens is unknown (:func:`~hermes_core.agent.token_count`); none
    known, no usage."""
    details = getattr(counted, "prompt_tokens_details", None)
    cached = token_count(getattr(details, "cached_tokens", None)) or token_count(
        getattr(counted, "prompt_cache_hit_tokens", None)
    )
    prompt = token_count(getattr(counted, "prompt_tokens", None))
    completion = token_count(getattr(counted, "completion_tokens", None))
    if prompt is None and completion is None:
        return None
    return Usage(prompt or 0, completion or 0, min(cached or 0, prompt or 0))

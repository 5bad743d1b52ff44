"""What :class:`~hermes_core.testing.FakeModelServer` answers, as JSON, apart from HTTP.

A scripted :class:`FakeTurn` becomes an OpenAI chat completion or an Anthropic message, whole
or as the streamed events each vendor sends: text split across several deltas, tool-call
arguments split across several chunks (the OpenAI chunk carrying ``index``, ``id`` and the
function's name only on the first), a usage chunk when the client asked for one, and each
vendor's error body, the prompt cache's counts (Anthropic's ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` beside an ``input_tokens`` without them, OpenAI's
``prompt_tokens_details.cached_tokens`` within ``prompt_tokens``) and a reasoning model's
thinking (``reasoning_content`` deltas before the text, as DeepSeek and vLLM send). The
official SDKs parse all of it (tests/agent/test_fake_model_server.py).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core.agent._wire import Usage
from hermes_core.testing._fake_thinking import openrouter_details, thinking_blocks

__all__ = [
    "ERROR_MESSAGES",
    "FakeToolCall",
    "FakeTurn",
    "Wire",
    "anthropic_answer",
    "anthropic_events",
    "context_overflow_turn",
    "error_body",
    "models_answer",
    "openai_answer",
    "openai_chunks",
    "pieces",
]

Wire = Literal["openai", "anthropic"]
"""The two wire formats the fake server speaks."""


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call a scripted turn makes: the tool's name and its arguments (an object, or the
    exact JSON text to send, which may be malformed on purpose); ``id`` defaults to one made
    from the request's number."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str = ""

    @property
    def arguments_text(self) -> str:
        """The arguments as the JSON text the model writes."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class FakeTurn:
    """One scripted answer of :class:`~hermes_core.testing.FakeModelServer`.

    - ``text`` and ``tool_calls``: the assistant's answer. With ``tool_calls_in_text`` the
      calls are written in the text as ``<tool_call>{"name": ..., "arguments": {...}}
      </tool_call>``, as small local models do, instead of the wire's tool calls.
    - ``usage``: the tokens reported; ``"estimate"`` counts about four characters a token of
      the request and the answer; ``None`` sends no usage at all on the OpenAI wire (as
      llama.cpp's server does in streams; the Anthropic wire always carries one, zeros then).
      Its ``cached_tokens`` are reported as read from the prompt cache, ``cache_write_tokens``
      as written to it (Anthropic's ``cache_creation_input_tokens``; part of ``input_tokens``).
      ``usage_counts``, when given, is the usage object sent instead, as it is (each count any
      JSON value: a float, a numeric string, null, as some servers write them).
    - ``reasoning``: the thinking of a reasoning model, streamed on the OpenAI wire as
      ``reasoning_key`` deltas (``reasoning_content``: DeepSeek, vLLM; ``reasoning``:
      OpenRouter, Ollama; ``reasoning_details``: OpenRouter's Claude, signed, beside
      ``reasoning``) before the answer's text; on the Anthropic wire, to a request that
      enables thinking, as a signed ``thinking`` block, then ``redacted_thinking`` (its
      data) as a ``redacted_thinking`` block (:mod:`._fake_thinking`). A tuple of texts is
      several thinking blocks on the Anthropic wire (the redacted one after the first), one
      text a paragraph apart on the OpenAI wire.
    - ``error``: answer this HTTP status instead (429 with a ``retry-after`` header of
      ``retry_after`` seconds, 400, 401, 500...) with the vendor's error body and
      ``error_message`` (a default one per status); ``error_code`` is the OpenAI body's
      ``code`` (default: its ``type``), as ``context_length_exceeded``.
    - ``truncated``: stop as a model out of output tokens does (``length`` / ``max_tokens``);
      on the Anthropic wire a thinking block that ends the answer is cut: no signature.
    - ``gate``: hold the answer until the event is set: before answering when ``hold_after``
      is 0, else after sending that many streamed events (a stream stopped mid-way, for
      cancellation tests). ``delay``: seconds to wait before answering.
    - ``text_cuts``: where the OpenAI stream cuts the answer's text into deltas (positions in
      it, as a model's tokens fall: before or after a joiner); by default word by word.
    """

    text: str = ""
    tool_calls: Sequence[FakeToolCall] = ()
    usage: Usage | Literal["estimate"] | None = "estimate"
    cache_write_tokens: int = 0
    usage_counts: Mapping[str, Any] | None = None
    reasoning: str | tuple[str, ...] = ""
    reasoning_key: str = "reasoning_content"
    redacted_thinking: str = ""
    error: int | None = None
    error_message: str = ""
    error_code: str = ""
    retry_after: float | None = 1.0
    tool_calls_in_text: bool = False
    truncated: bool = False
    gate: threading.Event | None = None
    hold_after: int = 0
    delay: float = 0.0
    text_cuts: Sequence[int] = ()

    def answer_text(self) -> str:
        """The text the model writes: ``text``, then the calls when they go in the text."""
        if not self.tool_calls_in_text:
            return self.text
        written = "".join(
            "<tool_call>"
            + json.dumps({"name": call.name, "arguments": _arguments_value(call)})
            + "</tool_call>"
            for call in self.tool_calls
        )
        return self.text + written

    def thought(self) -> str:
        """``reasoning`` as one text, its blocks a paragraph apart."""
        return self.reasoning if isinstance(self.reasoning, str) else "\n\n".join(self.reasoning)

    def wire_calls(self) -> Sequence[FakeToolCall]:
        """The calls sent as the wire's tool calls (none when they go in the text)."""
        return () if self.tool_calls_in_text else self.tool_calls

    def usage_for(self, body: Any) -> Usage | None:
        """The usage reported for a request of ``body``."""
        if self.usage != "estimate":
            return self.usage
        answer = self.answer_text() + "".join(c.arguments_text for c in self.wire_calls())
        return Usage(request_tokens(body), max(1, len(answer) // 4))


def _arguments_value(call: FakeToolCall) -> Any:
    if isinstance(call.arguments, str):
        try:
            return json.loads(call.arguments)
        except ValueError:
            return call.arguments
    return dict(call.arguments)


ERROR_MESSAGES: Mapping[int, str] = {
    400: "Invalid request: the scripted turn refused it.",
    401: "Incorrect API key provided: {key}.",
    403: "You do not have access to this model.",
    404: "The model does not exist or you do not have access to it.",
    429: "Rate limit reached; please try again later.",
    500: "The server had an error while processing your request.",
}
"""The error message per status when a turn gives none; ``{key}`` is the key the client sent
(a real server echoes part of it: a provider must never repeat it)."""

_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit"}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(wire: Wire, status: int, message: str, code: str = "") -> dict[str, Any]:
    """The vendor's error body for ``status`` (``code``: the OpenAI body's, default its type)."""
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = _OPENAI_ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request")
    return {"error": {"message": message, "type": kind, "param": None, "code": code or kind}}


def models_answer(wire: Wire, models: Sequence[str]) -> dict[str, Any]:
    """The answer to ``GET /v1/models`` listing ``models``, in the vendor's shape: OpenAI's
    ``{"object": "list", "data": [...]}``, Anthropic's page with ``has_more``."""
    if wire == "anthropic":
        data = [
            {
                "type": "model",
                "id": name,
                "display_name": name,
                "created_at": "2025-01-01T00:00:00Z",
            }
            for name in models
        ]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": 1735689600, "owned_by": "fake"}
            for name in models
        ],
    }


def request_tokens(body: Any) -> int:
    """The tokens of a request's ``body`` as the fake server counts them: a quarter of its
    JSON's characters (no tokenizer runs here)."""
    return max(1, len(json.dumps(body)) // 4)


def context_overflow_turn(wire: Wire, tokens: int, limit: int) -> FakeTurn:
    """The 400 a real server answers a request of ``tokens`` past a context window of
    ``limit``: OpenAI's ``context_length_exceeded``, Anthropic's ``prompt is too long``."""
    if wire == "anthropic":
        message = f"prompt is too long: {tokens} tokens > {limit} maximum"
        return FakeTurn(error=400, error_message=message)
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )
    return FakeTurn(error=400, error_message=message, error_code="context_length_exceeded")


def pieces(text: str, count: int = 3) -> list[str]:
    """``text`` cut into at least two pieces when it has two characters (words first, then
    about ``count`` equal parts), so that a client must join deltas to get it whole."""
    words = re.findall(r"\s*\S+\s*", text) if text.strip() else []
    if len(words) >= 2 and "".join(words) == text:
        return words
    if len(text) < 2:
        return [text] if text else []
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)]


def _call_id(call: FakeToolCall, number: int, index: int, prefix: str) -> str:
    return call.id or f"{prefix}_{number}_{index}"


def _openai_finish(turn: FakeTurn) -> str:
    if turn.truncated:
        return "length"
    return "tool_calls" if turn.wire_calls() else "stop"


def _openai_usage(usage: Usage) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total,
    }
    if usage.cached_tokens:
        counts["prompt_tokens_details"] = {"cached_tokens": usage.cached_tokens}
    return counts


def openai_answer(turn: FakeTurn, body: Any, number: int) -> dict[str, Any]:
    """A whole chat completion (``stream`` false)."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.answer_text() or None}
    if turn.thought():
        message[turn.reasoning_key] = turn.thought()
    if turn.wire_calls():
        message["tool_calls"] = [
            {
                "id": _call_id(call, number, index, "call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text},
            }
            for index, call in enumerate(turn.wire_calls())
        ]
    answer: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": str(body.get("model", "")),
        "choices": [{"index": 0, "message": message, "finish_reason": _openai_finish(turn)}],
    }
    usage = turn.usage_for(body)
    if usage is not None:
        answer["usage"] = _openai_usage(usage)
    return answer


def openai_chunks(turn: FakeTurn, body: Any, number: int) -> list[dict[str, Any]]:
    """The ``data:`` payloads of a streamed chat completion, before ``data: [DONE]``."""
    head = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000 + number,
        "model": str(body.get("model", "")),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if turn.reasoning_key == "reasoning_details":  # truncated and nothing after: cut in it
        cut = turn.truncated and not (turn.answer_text() or turn.wire_calls())
        chunks += [
            chunk(d) for d in openrouter_details(turn.thought(), pieces(turn.thought()), cut)
        ]
    else:
        chunks += [chunk({turn.reasoning_key: piece}) for piece in pieces(turn.thought())]
    text = turn.answer_text()
    cuts = [0, *sorted(turn.text_cuts), len(text)]
    parts = [text[a:b] for a, b in itertools.pairwise(cuts) if b > a] if turn.text_cuts else None
    chunks += [chunk({"content": piece}) for piece in parts or pieces(text)]
    for index, call in enumerate(turn.wire_calls()):
        first = {
            "index": index,
            "id": _call_id(call, number, index, "call"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [first]}))
        for piece in pieces(call.arguments_text):
            chunks.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    chunks.append(chunk({}, _openai_finish(turn)))
    usage = turn.usage_for(body)
    wanted = (body.get("stream_options") or {}).get("include_usage") is True
    if turn.usage_counts is not None and wanted:
        chunks.append({**head, "choices": [], "usage": dict(turn.usage_counts)})
    elif usage is not None and wanted:
        chunks.append({**head, "choices": [], "usage": _openai_usage(usage)})
    return chunks


def _anthropic_stop(turn: FakeTurn) -> str:
    if turn.truncated:
        return "max_tokens"
    return "tool_use" if turn.wire_calls() else "end_turn"


def _anthropic_blocks(turn: FakeTurn, body: Any, number: int) -> list[dict[str, Any]]:
    blocks = thinking_blocks(turn.reasoning, turn.redacted_thinking, body)
    if turn.answer_text():
        blocks.append({"type": "text", "text": turn.answer_text()})
    for index, call in enumerate(turn.wire_calls()):
        blocks.append(
            {
                "type": "tool_use",
                "id": _call_id(call, number, index, "toolu"),
                "name": call.name,
                "input": _arguments_value(call),
            }
        )
    return blocks


def _anthropic_usage(turn: FakeTurn, body: Any) -> dict[str, Any]:
    """The message's usage: ``input_tokens`` is only the input after the last cache read or
    write, as Anthropic counts it."""
    if turn.usage_counts is not None:
        return dict(turn.usage_counts)
    usage = turn.usage_for(body) or Usage()
    written = turn.cache_write_tokens
    return {
        "input_tokens": max(0, usage.input_tokens - usage.cached_tokens - written),
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": written,
    }


def anthropic_answer(turn: FakeTurn, body: Any, number: int) -> dict[str, Any]:
    """A whole message (``stream`` false)."""
    usage = _anthropic_usage(turn, body)
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "")),
        "content": _anthropic_blocks(turn, body, number),
        "stop_reason": _anthropic_stop(turn),
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_events(turn: FakeTurn, body: Any, number: int) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, data)`` pairs of a streamed message."""
    usage = _anthropic_usage(turn, body)
    start = {**anthropic_answer(turn, body, number), "content": [], "stop_reason": None}
    start["usage"] = {**usage, "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    calls = iter(turn.wire_calls())
    blocks = _anthropic_blocks(turn, body, number)
    for index, block in enumerate(blocks):
        opened: dict[str, Any]
        deltas: list[dict[str, Any]] = []
        if block["type"] == "text":
            opened, parts = {"type": "text", "text": ""}, pieces(block["text"])
            deltas = [{"type": "text_delta", "text": part} for part in parts]
        elif block["type"] == "thinking":
            opened, parts = {**block, "thinking": "", "signature": ""}, pieces(block["thinking"])
            deltas = [{"type": "thinking_delta", "thinking": part} for part in parts]
            if not (turn.truncated and index == len(blocks) - 1):  # cut in it: no signature
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "redacted_thinking":
            opened = block  # sent whole in its start, as the API does
        else:
            opened = {**block, "input": {}}
            text = next(calls).arguments_text
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in pieces(text)]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _anthropic_stop(turn), "stop_sequence": None},
                "usage": usage,  # the whole count, as the API sends it now
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events

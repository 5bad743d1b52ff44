"""``AnthropicProvider``: a :class:`~hermes_core.agent.ModelRequest` as a streamed Messages
request through the official ``anthropic`` SDK, and its events back.

The Messages API's own rules: the system prompt goes in ``system``, ``max_tokens`` is always
sent, a tool result is a ``tool_result`` block (``is_error`` kept) in a user message, and
consecutive messages of one role are merged into one (tool results of one turn, a user message
after them), as the API requires roles to alternate. Blank text is never a text block (the API
refuses one, :func:`_worded`), and a message of nothing else is not sent. The SDK never retries
(``max_retries=0``): the conversation loop does, for every provider alike.

The prompt cache (``model.prompt_cache``, on by default): a loop resends the same prefix
(tools, system prompt, the conversation so far) on every request, which Anthropic caches only
up to blocks marked ``cache_control`` (:func:`mark_cache_breakpoints`; never an empty
text or tool result, which it refuses to mark). Its usage counts
``input_tokens`` without the cache's reads and writes: the :class:`Usage` adds them back, so
``input_tokens`` is the whole input and ``cached_tokens`` what was read from the cache.

Extended thinking (``model.reasoning_effort``): ``thinking`` is sent with the budget, and
``max_tokens`` above it (a request capped lower, as the vision tool's question, gets the
budget added to its cap, up to ``model.max_output_tokens``); no ``temperature`` is ever
sent, which thinking refuses. A ``thinking`` block's text streams as
:class:`~hermes_core.agent.ThinkingDelta` s (a ``redacted_thinking`` block's data, encrypted,
never); both blocks come on the assistant message (:class:`ThinkingBlock`) and go back
first in it, unchanged, as the API requires of a tool loop (a block cut at ``max_tokens``
before its signature came is dropped: the API would refuse it; an assistant message left
empty is not sent, as the API refuses empty content). A request whose last assistant
message made tool calls without them (a conversation taken up again whose blocks were not
kept, or begun with another provider) would be refused with thinking: it is sent without,
and without any block.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import anthropic
from hermes_core._plugin_support import shown_url, tls_context
from hermes_core.agent import (
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    cache_breakpoints,
    http_model_error,
    listed_models,
    no_stream_error,
    transport_errors,
)

from .answer import Answer

__all__ = [
    "PLACEHOLDER_KEY",
    "AnthropicProvider",
    "anthropic_messages",
    "anthropic_tools",
    "mark_cache_breakpoints",
]

PLACEHOLDER_KEY = "hermes-no-key"
"""Sent when no key is set (a proxy may need none; Anthropic's API answers 401)."""


def _sent(message: Message) -> bool:
    """Whether ``message`` is sent: not one of no content (an answer cut before it said
    anything, or only blank lines), which the API refuses."""
    return message.role == "tool" or bool(
        _worded(message.content) or message.tool_calls or message.images
    )


def _worded(text: str) -> bool:
    """Whether ``text`` may be a text block: the API refuses one that is empty or blank (a line
    break a model wrote before its tool call, sent back, had every later request refused)."""
    return bool(text.strip())


def _blocks(message: Message, thinking: bool) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            result["is_error"] = True
        return [result]
    blocks: list[dict[str, Any]] = [b.to_json() for b in message.thinking] if thinking else []
    blocks += [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64},
        }
        for image in message.images
    ]
    if _worded(message.content):
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": call.arguments_object() or {},
            }
        )
    return blocks


def anthropic_messages(
    request: ModelRequest, *, thinking: bool = False, positions: list[int] | None = None
) -> list[dict[str, Any]]:
    """The conversation as Messages API messages: tool results in user messages, consecutive
    messages of one role merged, and with ``thinking`` each assistant message's thinking
    blocks first in it. ``positions``, when given, gets the index in the result of each of
    ``request.messages`` (of the one before it, for a message not sent)."""
    merged: list[dict[str, Any]] = []
    for message in request.messages:
        if _sent(message):
            role = "assistant" if message.role == "assistant" else "user"
            blocks = _blocks(message, thinking)
            if merged and merged[-1]["role"] == role:
                merged[-1]["content"].extend(blocks)
            else:
                merged.append({"role": role, "content": blocks})
        if positions is not None:
            positions.append(len(merged) - 1)
    return merged


def anthropic_tools(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's tools as Messages API tools."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": dict(tool.parameters)}
        for tool in request.tools
    ]


def thinking_kept(request: ModelRequest) -> bool:
    """Whether the request's last assistant message, when it made tool calls, has the thinking
    blocks the API requires of it when thinking is on."""
    last = next((m for m in reversed(request.messages) if m.role == "assistant"), None)
    return last is None or not last.tool_calls or bool(last.thinking)


def mark_cache_breakpoints(
    request: ModelRequest,
    tools: list[dict[str, Any]],
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    positions: list[int],
) -> None:
    """Mark ``request``'s prefix, sent as ``tools``, ``system`` and ``messages`` (where each of
    ``request.messages`` went: ``positions``, from :func:`anthropic_messages`), for
    Anthropic's prompt cache, in its order: the last tool, the system prompt's end, and the
    user turns :func:`~hermes_core.agent.cache_breakpoints` picks, each at its last block
    with content (a turn is one merged user message; one of only empty tool results goes
    unmarked)."""
    mark = {"type": "ephemeral"}
    turns = [messages[positions[index]]["content"] for index in cache_breakpoints(request)]
    for blocks in (tools, system, *turns):
        # Anthropic refuses a mark on an empty text block, as a tool result of no text is (a
        # blank one is not marked either: whether the API takes it is not known).
        filled = [
            b
            for b in blocks
            if b.get("type") not in _TEXTS or _worded(str(b.get("text", b.get("content"))))
        ]
        if filled:
            filled[-1]["cache_control"] = mark


_TEXTS = ("text", "tool_result")
"""The blocks that may be empty text, which the API refuses to mark."""


class AnthropicProvider:
    """The ``anthropic`` provider over ``settings`` (``base_url`` None: Anthropic's API), with
    ``api_key`` read from ``key_env``."""

    name = "anthropic"

    def __init__(
        self,
        settings: ModelSettings,
        api_key: str | None,
        key_env: str,
        thinking_budget: int | None = None,
    ) -> None:
        self.settings = settings
        self.thinking_budget = thinking_budget
        self._key = api_key
        self._key_env = settings.api_key_env or key_env
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=settings.base_url,
            max_retries=0,
            timeout=settings.timeout,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context()),
        )

    def __repr__(self) -> str:
        base_url = self.settings.base_url and shown_url(self.settings.base_url)
        return f"AnthropicProvider(model={self.settings.model!r}, base_url={base_url!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The answer to ``request``: text deltas, then one turn (see the module)."""
        model = request.model or self.settings.model
        tools = anthropic_tools(request)
        system = [{"type": "text", "text": request.system}] if _worded(request.system) else []
        budget = self.thinking_budget if thinking_kept(request) else None
        positions: list[int] = []
        messages: Any = anthropic_messages(
            request, thinking=budget is not None, positions=positions
        )
        if self.settings.prompt_cache:
            mark_cache_breakpoints(request, tools, system, messages, positions)
        extra: dict[str, Any] = {}
        if system:
            extra["system"] = system if self.settings.prompt_cache else request.system
        if tools:
            extra["tools"] = tools
        cap = request.max_tokens or self.settings.max_output_tokens
        if budget is not None:
            extra["thinking"] = {"type": "enabled", "budget_tokens": budget}
            # Never past max_output_tokens (above the budget, as the build checked): the most
            # the model writes, and the API refuses a max_tokens above its own.
            cap = cap if cap > budget else min(budget + cap, self.settings.max_output_tokens)
        answer = Answer()
        started = False
        dropped = transport_errors()
        failed: tuple[type[Exception], ...] = (anthropic.APIError, *dropped)
        try:
            events = await self._client.messages.create(
                model=model,
                messages=messages,
                max_tokens=cap,
                stream=True,
                **extra,
            )
            async with events:
                async for event in events:
                    started = started or event.type == "message_start"
                    streamed = answer.add(event)
                    if streamed is not None:
                        yield streamed
        except anthropic.APIStatusError as error:
            raise self._status_error(model, error) from None
        except anthropic.APIResponseValidationError as error:
            raise ModelError(
                f"anthropic: model {model!r}: the server's answer is no message: {error}",
                provider="anthropic",
                model=model,
            ) from None
        # No answer, a dropped connection (mid-stream too: the SDK wraps its HTTP library's
        # error in APIConnectionError, or lets it out when older), a timeout.
        except failed as error:
            lost = isinstance(error, (anthropic.APIConnectionError, *dropped))
            raise self._no_answer(model, error, mid_answer=started and lost) from None
        if not started:
            # A 200 without message_start is no Messages API's: a web page, a proxy, another API.
            raise no_stream_error(
                "anthropic",
                model,
                base_url=self.settings.base_url,
                headers=events.response.headers,
                stream="Messages API stream",
                missing="no message_start event",
                base_url_hint="the host alone: the SDK adds /v1",
            )
        yield answer.turn()

    def _status_error(self, model: str, error: anthropic.APIStatusError) -> ModelError:
        body = error.body
        inner = body.get("error") if isinstance(body, dict) else None
        detail = inner.get("message") if isinstance(inner, dict) else None
        # An error event in a stream that had begun (overloaded_error) comes with the 200.
        status = error.status_code if error.status_code >= 400 else 503
        return http_model_error(
            "anthropic",
            model,
            status=status,
            detail=str(detail or error.message),
            headers=dict(error.response.headers),
            key_env=self._key_env,
            base_url=self.settings.base_url,
            secret=self._key,
            base_url_hint=_v1_hint(self.settings.base_url),
        )

    def _no_answer(self, model: str, error: Exception, *, mid_answer: bool = False) -> ModelError:
        """No answer, a dropped connection or a timeout (``mid_answer``: after the stream began)
        as the :class:`ModelError` :func:`http_model_error` words."""
        timed_out = isinstance(error, anthropic.APITimeoutError)
        return http_model_error(
            "anthropic",
            model,
            status=None,
            detail=str(error),
            base_url=self.settings.base_url,
            secret=self._key,
            timed_out_after=self.settings.timeout if timed_out else None,
            cause=error,
            mid_answer=mid_answer,
        )

    async def list_models(self) -> list[str]:
        """The models the server lists (``GET {base_url}/v1/models``, no tokens spent), for
        ``hermes doctor``; a failure is the :class:`ModelError` :meth:`stream` would raise."""
        model = self.settings.model
        try:
            return await listed_models(
                "anthropic",
                model,
                self._client.models.list(),
                base_url=self.settings.base_url,
                hint="the host alone: the SDK adds /v1",
            )
        except anthropic.APIStatusError as error:
            raise self._status_error(model, error) from None
        except anthropic.APIError as error:  # no answer, or one that is no listing
            raise self._no_answer(model, error) from None

    async def aclose(self) -> None:
        """Close the SDK's connections."""
        await self._client.close()


def _v1_hint(base_url: str | None) -> str | None:
    """For a 404: the URL meant, when ``base_url``'s path ends in ``/v1``, which the SDK adds
    again (``/v1/v1/messages``, a route no server has), or goes on after it (the endpoint
    pasted whole, ``.../v1/messages``)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    head, v1, _ = path.partition("/v1/")
    if v1:
        meant = parts._replace(path=head).geturl()
    elif path.endswith("/v1"):
        meant = base_url.rstrip("/").removesuffix("/v1")
    else:
        return None
    return f"the anthropic provider's URL is the host alone, its SDK adds /v1: {shown_url(meant)}"

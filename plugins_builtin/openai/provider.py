"""``OpenAIProvider``: a :class:`~hermes_core.agent.ModelRequest` as a streamed chat completion
through the official ``openai`` SDK, and its chunks back as events.

The compatibility rules of local servers are followed for every server (OpenAI accepts them
too): ``tool_choice: "auto"`` is sent whenever there are tools (llama.cpp's server needs it to
parse calls), an assistant message with tool calls has ``content: ""`` (never null), usage is
asked for (``stream_options.include_usage``) but a stream without it ends with ``usage=None``,
and ``<tool_call>`` blocks in the text become calls (:mod:`.text_calls`). The SDK never retries
(``max_retries=0``): the conversation loop does, for every provider alike.

Reasoning models: a server that streams the model's thinking beside the text
(``reasoning_content`` or ``reasoning`` in the deltas: DeepSeek, vLLM's reasoning parser,
OpenRouter, Ollama) has it streamed as :class:`~hermes_core.agent.ThinkingDelta` s: it is
neither the answer nor sent back (DeepSeek refuses a request that sends it); so has a
``<think>`` block that opens the text (:mod:`.think_tags`). OpenRouter's ``reasoning_details``
(the same thinking as entries, signed or encrypted, which its Claude models need back in a
tool loop: Anthropic refuses the loop's next request without them) are kept whole on the
message (:class:`ReasoningDetail`; their text streamed as thinking only when the delta has no
``reasoning`` text beside, their encrypted data never) and sent back
unchanged on it, to OpenRouter only; a thinking cut at ``max_tokens`` before its signature came
is not kept, as the API would refuse it.
``model.reasoning_effort`` is sent as ``reasoning_effort``, the cap then as
``max_completion_tokens``, since OpenAI's reasoning models refuse ``max_tokens``; OpenAI's own
API gets ``max_completion_tokens`` whatever the model. Prompt caching needs nothing: OpenAI
caches long prefixes by itself, and ``prompt_tokens_details.cached_tokens`` (DeepSeek:
``prompt_cache_hit_tokens``) says how much of ``prompt_tokens`` it read. But OpenRouter's
Claude models (``anthropic/...`` at ``openrouter.ai``) are cached as Anthropic's are, only up
to content parts marked ``cache_control``: with ``model.prompt_cache`` the system prompt and
the user turns :func:`~hermes_core.agent.cache_breakpoints` picks are sent as text parts, the
last one with text marked (the tools, before the system prompt in the cache's order, are in its
entry; a turn of no text, an empty tool result, goes unmarked: Anthropic refuses a mark there).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final
from urllib.parse import urlsplit

import openai
from hermes_core._plugin_support import shown_url, tls_context
from hermes_core.agent import (
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    TextDelta,
    ThinkingDelta,
    cache_breakpoints,
    http_model_error,
    listed_models,
    no_stream_error,
    transport_errors,
)

from .answer import Answer, usage_of

__all__ = ["PLACEHOLDER_KEY", "OpenAIProvider", "openai_messages", "openai_tools"]

PLACEHOLDER_KEY = "hermes-no-key"
"""Sent when no key is set: a local server ignores it, and the SDK refuses to run without one."""

_MARK = {"type": "ephemeral"}
UNANSWERED: Final = "(This turn ended here, before an answer to the tool results.)"
"""The assistant message sent between tool results and a user message (:func:`openai_messages`)."""


def _marked(message: dict[str, Any]) -> None:
    """``message`` with its content as text parts, the last one with text marked for the
    cache; unmarked without one (Anthropic refuses a mark on an empty text part, and
    OpenRouter passes marks on text parts only)."""
    content = message["content"]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts = [part for part in parts if part.get("type") == "text" and part.get("text")]
    if texts:
        texts[-1]["cache_control"] = _MARK
        message["content"] = parts


def _arguments(call: ModelToolCall) -> str:
    """A call's arguments sent back: as the model wrote them when they are a JSON object, else
    ``{}`` (:meth:`~hermes_core.agent.ModelToolCall.arguments_object`: the result quotes what
    was written)."""
    return call.arguments if call.arguments_object() is not None else "{}"


def openrouter(host: str) -> bool:
    """Whether ``host`` is OpenRouter's."""
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


def openrouter_claude(host: str, model: str) -> bool:
    """Whether ``model`` at ``host`` is a Claude model behind OpenRouter, which caches only
    up to the content parts a request marks, as Anthropic does."""
    return openrouter(host) and model.startswith("anthropic/")


def openai_messages(
    request: ModelRequest, *, cache_marks: bool = False, reasoning_details: bool = False
) -> list[dict[str, Any]]:
    """The conversation as chat-completion messages, the system prompt first; with
    ``cache_marks`` the system prompt and the user turns of
    :func:`~hermes_core.agent.cache_breakpoints` marked for an Anthropic-style prompt cache,
    with ``reasoning_details`` each assistant message's entries of them (OpenRouter's).
    A user message right after tool results (a turn that ended before the model answered them:
    ``agent.max_turns``, a stop, a failed request) follows an assistant message saying so
    (:data:`UNANSWERED`): many chat templates (Mistral's, Gemma's) refuse a user message there,
    as a second one in a row."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    at: list[int] = []  # where each of request.messages went in messages
    for message in request.messages:
        if message.role == "user" and messages and messages[-1]["role"] == "tool":
            messages.append({"role": "assistant", "content": UNANSWERED})
        at.append(len(messages))
        if message.role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
        elif message.role == "assistant" and message.tool_calls:
            calls = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments(call)},
                }
                for call in message.tool_calls
            ]
            # "" and never null: llama.cpp's server and others refuse a null content.
            messages.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        elif message.images:
            parts: list[dict[str, Any]] = [
                {"type": "image_url", "image_url": {"url": image.data_url}}
                for image in message.images
            ]
            parts.append({"type": "text", "text": message.content})
            messages.append({"role": message.role, "content": parts})
        else:
            messages.append({"role": message.role, "content": message.content})
        if reasoning_details and message.reasoning_details:
            messages[-1]["reasoning_details"] = [d.to_json() for d in message.reasoning_details]
    if cache_marks:
        if request.system:
            _marked(messages[0])
        for index in cache_breakpoints(request):
            _marked(messages[at[index]])
    return messages


def openai_tools(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's tools as chat-completion functions."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in request.tools
    ]


class OpenAIProvider:
    """The ``openai`` provider over ``settings`` (``base_url`` None: OpenAI's API), with
    ``api_key`` (None: a placeholder, for a local server) read from ``key_env``."""

    name = "openai"

    def __init__(self, settings: ModelSettings, api_key: str | None, key_env: str) -> None:
        self.settings = settings
        self._key = api_key
        self._key_env = settings.api_key_env or key_env
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=settings.base_url,
            max_retries=0,
            timeout=settings.timeout,
            http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
        )

    def __repr__(self) -> str:
        base_url = self.settings.base_url and shown_url(self.settings.base_url)
        return f"OpenAIProvider(model={self.settings.model!r}, base_url={base_url!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The answer to ``request``: text deltas, then one turn (see the module)."""
        model = request.model or self.settings.model
        # Tools only when there are some: an empty array is an error for some servers.
        extra: dict[str, Any] = {}
        if request.tools:
            extra = {"tools": openai_tools(request), "tool_choice": "auto"}
        cap = request.max_tokens or self.settings.max_output_tokens
        effort = self.settings.reasoning_effort
        if effort is not None or self._client.base_url.host == "api.openai.com":
            extra["max_completion_tokens"] = cap
        else:  # what every OpenAI-compatible server reads
            extra["max_tokens"] = cap
        if effort is not None:
            extra["reasoning_effort"] = effort
        host = self._client.base_url.host
        marks = self.settings.prompt_cache and openrouter_claude(host, model)
        at_openrouter = openrouter(host)
        messages: Any = openai_messages(request, cache_marks=marks, reasoning_details=at_openrouter)
        answer = Answer(frozenset(tool.name for tool in request.tools))
        dropped = transport_errors()
        failed: tuple[type[Exception], ...] = (openai.APIError, *dropped)
        try:
            chunks = await self._client.chat.completions.create(
                model=model,
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
            async with chunks:
                async for chunk in chunks:
                    answer.chunks += 1
                    if chunk.usage is not None:
                        answer.usage = usage_of(chunk.usage) or answer.usage
                    for choice in chunk.choices:
                        delta = choice.delta
                        answer_text = answer.think_tags.feed(delta.content or "")
                        thought = answer.thought_of(delta)
                        if thought:
                            yield ThinkingDelta(thought)
                        shown = answer.text_calls.feed(answer_text)
                        if shown:
                            answer.text.append(shown)
                            yield TextDelta(shown)
                        if delta.tool_calls:
                            answer.add_calls(delta.tool_calls)
                        if at_openrouter:
                            answer.add_details(getattr(delta, "reasoning_details", None))
                        if choice.finish_reason:
                            answer.finish = choice.finish_reason
        except openai.APIStatusError as error:
            raise self._status_error(model, error) from None
        except openai.APIResponseValidationError as error:
            raise ModelError(
                f"openai: model {model!r}: the server's answer is no chat completion: {error}",
                provider="openai",
                model=model,
            ) from None
        # No answer, a dropped connection (mid-stream too: the SDK wraps its HTTP library's
        # error in APIConnectionError, or lets it out when older), a timeout.
        except failed as error:
            lost = isinstance(error, (openai.APIConnectionError, *dropped))
            raise self._no_answer(model, error, mid_answer=answer.chunks > 0 and lost) from None
        if not answer.chunks:
            # A 200 without one chunk is no model server's: a web page, a proxy, another API.
            raise no_stream_error(
                "openai",
                model,
                base_url=self.settings.base_url,
                headers=chunks.response.headers,
                stream="chat-completion stream",
                missing="not one chunk",
                base_url_hint="an OpenAI-compatible server's URL, ending in /v1",
            )
        # The text held back from a <tool_call> on: what is no call is shown last.
        held = answer.text_calls.feed(answer.think_tags.finish())
        thought = answer.think_tags.thought()  # a block cut short: its last piece
        if thought:
            yield ThinkingDelta(thought)
        if held:
            answer.text.append(held)
            yield TextDelta(held)
        rest, written = answer.text_calls.finish()
        if rest:
            answer.text.append(rest)
            yield TextDelta(rest)
        yield answer.turn(written)

    def _status_error(self, model: str, error: openai.APIStatusError) -> ModelError:
        body = error.body
        detail = str((body.get("message") if isinstance(body, dict) else None) or error.message)
        code = body.get("code") if isinstance(body, dict) else None
        if code == "context_length_exceeded" and code not in detail:
            detail += f" ({code})"  # Groq says the size in the code alone
        return http_model_error(
            "openai",
            model,
            status=error.status_code,
            detail=detail,
            headers=dict(error.response.headers),
            key_env=self._key_env,
            base_url=self.settings.base_url,
            secret=self._key,
            base_url_hint=_v1_hint(self.settings.base_url),
        )

    def _no_answer(self, model: str, error: Exception, *, mid_answer: bool = False) -> ModelError:
        """No answer, a dropped connection or a timeout (``mid_answer``: after the stream began)
        as the :class:`ModelError` :func:`http_model_error` words."""
        timed_out = isinstance(error, openai.APITimeoutError)
        return http_model_error(
            "openai",
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
        """The models the server lists (``GET {base_url}/models``, no tokens spent), for
        ``hermes doctor``; a failure is the :class:`ModelError` :meth:`stream` would raise."""
        model = self.settings.model
        try:
            return await listed_models(
                "openai",
                model,
                self._client.models.list(),
                base_url=self.settings.base_url,
                hint="an OpenAI-compatible server's URL, ending in /v1",
            )
        except openai.APIStatusError as error:
            raise self._status_error(model, error) from None
        except openai.APIError as error:  # no answer, or one that is no listing
            raise self._no_answer(model, error) from None

    async def aclose(self) -> None:
        """Close the SDK's connections."""
        await self._client.close()


def _v1_hint(base_url: str | None) -> str | None:
    """For a 404: the URL meant, when ``base_url``'s path does not end in ``/v1`` (llama.cpp's,
    vLLM's and Ollama's endpoints are under it; the server then has no such route): cut after
    its ``/v1`` when it goes on (the endpoint pasted whole, ``.../v1/chat/completions``)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        return None
    head, v1, _ = path.partition("/v1/")
    meant = parts._replace(path=f"{head}/v1").geturl() if v1 else f"{base_url.rstrip('/')}/v1"
    return f"an OpenAI-compatible server's URL usually ends in /v1: {shown_url(meant)}"

"""An example model provider plugin: ``httpx-chat``, OpenAI-compatible chat completions spoken
with httpx directly, so that the whole contract shows.

Copy this folder into your plugins first, from the repository::

    cp -r examples/model_provider_plugin ~/.hermes/plugins/httpx-chat

then enable it and select it in ``config.yaml``::

    plugins:
      enabled: [httpx-chat]
    model:
      provider: httpx-chat
      model: qwen2.5-0.5b-instruct
      base_url: http://127.0.0.1:8080/v1

A provider is any object with ``stream(request)``, an ``async def`` generator yielding
``TextDelta`` s as the text arrives and then exactly one ``ModelTurn``, and ``aclose()`` (the
``hermes_core.agent.ModelProvider`` protocol). It raises ``ModelError`` for a failed request
and never retries: the conversation loop retries what is ``retryable``, after ``retry_after``.
``http_model_error`` makes that error from an HTTP status, the same way for every provider.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from hermes_core.agent import (
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    Usage,
    http_model_error,
)
from hermes_core.plugin import ModelContext, ModelProviderSpec, hookimpl

NAME = "httpx-chat"
KEY_VARIABLE = "OPENAI_API_KEY"


def wire_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation as chat-completion messages, the system prompt first."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
    for message in request.messages:
        if message.role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
            continue
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        messages.append(item)
    return messages


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


class HttpxChatProvider:
    """Chat completions at ``settings.base_url``, streamed over server-sent events."""

    def __init__(self, settings: ModelSettings, api_key: str | None) -> None:
        self.settings = settings
        self._key = api_key
        self._key_env = settings.api_key_env or KEY_VARIABLE
        base = (settings.base_url or "https://api.openai.com/v1").rstrip("/") + "/"
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(base_url=base, headers=headers, timeout=settings.timeout)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request``; yield its text as it comes, then the whole turn."""
        model = request.model or self.settings.model
        body: dict[str, Any] = {
            "model": model,
            "messages": wire_messages(request),
            "max_tokens": request.max_tokens or self.settings.max_output_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tool_choice"] = "auto"
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": dict(t.parameters),
                    },
                }
                for t in request.tools
            ]
        text: list[str] = []
        calls: dict[int, _Call] = {}
        usage: Usage | None = None
        finish = "stop"
        try:
            async with self._client.stream("POST", "chat/completions", json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise self._refused(model, response)
                async for line in response.aiter_lines():
                    if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                        continue
                    chunk = json.loads(line[5:])
                    if chunk.get("usage"):
                        counted = chunk["usage"]
                        usage = Usage(counted["prompt_tokens"], counted["completion_tokens"])
                    for choice in chunk.get("choices", []):
                        delta = choice.get("delta") or {}
                        if delta.get("content"):
                            text.append(delta["content"])
                            yield TextDelta(delta["content"])
                        for part in delta.get("tool_calls") or []:
                            call = calls.setdefault(part.get("index", 0), _Call())
                            call.id = call.id or part.get("id") or ""
                            function = part.get("function") or {}
                            call.name = call.name or function.get("name") or ""
                            call.arguments += function.get("arguments") or ""
                        finish = choice.get("finish_reason") or finish
        except httpx.HTTPError as error:  # no server, a dropped connection, a timeout
            raise http_model_error(
                NAME,
                model,
                status=None,
                detail=str(error),
                base_url=self.settings.base_url,
                secret=self._key,
            ) from None
        made = tuple(
            ModelToolCall(c.id, c.name, c.arguments or "{}") for _, c in sorted(calls.items())
        )
        message = Message("assistant", "".join(text), tool_calls=made)
        stop: Literal["end_turn", "tool_use", "max_tokens"] = "end_turn"
        if made:
            stop = "tool_use"
        elif finish == "length":
            stop = "max_tokens"
        yield ModelTurn(message, usage=usage, stop_reason=stop)

    def _refused(self, model: str, response: httpx.Response) -> ModelError:
        try:
            detail = str(response.json()["error"]["message"])
        except (ValueError, KeyError, TypeError):
            detail = response.text
        return http_model_error(
            NAME,
            model,
            status=response.status_code,
            detail=detail,
            headers=dict(response.headers),
            key_env=self._key_env,
            base_url=self.settings.base_url,
            secret=self._key,
        )

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()


def create_provider(context: ModelContext) -> HttpxChatProvider:
    """The provider for the ``model`` settings, its key from ``model.api_key_env`` or
    ``OPENAI_API_KEY`` (a local server needs none)."""
    if context.model is None:
        raise ValueError(f"{NAME} is built with the model settings")
    return HttpxChatProvider(context.model, context.api_key(KEY_VARIABLE))


@hookimpl
def hermes_model_providers() -> Sequence[ModelProviderSpec]:
    """Register the ``httpx-chat`` provider."""
    return [
        ModelProviderSpec(NAME, factory=create_provider, description="Chat completions over httpx.")
    ]

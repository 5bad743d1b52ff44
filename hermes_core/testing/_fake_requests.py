"""What a ``FakeModelServer`` received: :class:`RecordedRequest`, and the rules a strict one
holds a conversation to: roles that take turns (:func:`roles_refusal`), as many local servers'
chat templates require, and no empty tool result (:func:`empty_text_refusal`), as Gemini does.

llama.cpp and vLLM render a chat-completions request through the model's chat template, and
the templates of Mistral, Gemma and Llama-2 raise "Conversation roles must alternate
user/assistant/user/assistant/..." for a conversation whose user and assistant messages do not
take turns (the tool traffic set aside: tool results and the assistant messages that call
tools, as Mistral's template skips them). OpenAI's and Anthropic's APIs accept such a
conversation, so only a server made ``strict_roles`` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.testing._fake_images import images_of
from hermes_core.testing._fake_model_wire import Wire

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})

ROLES_MESSAGE = "Conversation roles must alternate user/assistant/user/assistant/..."
"""What a chat template raises for roles that do not alternate (Llama-2's, Mistral's words)."""

EMPTY_TEXT_MESSAGE = (
    "Unable to submit request because it has an empty text parameter. Add a value to the "
    "parameter and try again."
)
"""What Gemini's OpenAI-compatible endpoint (and Vertex) answer a message of empty text."""


@dataclass
class RecordedRequest:
    """One request the fake server received: its number (from 1), wire format, path, headers
    (lower-case names; the key is kept for tests to compare, and redacted in the repr) and
    parsed JSON body. ``disconnected`` turns true when the client went away before the answer
    ended (a cancelled stream); ``done`` when the server finished with it."""

    number: int
    wire: Wire
    path: str
    headers: Mapping[str, str]
    body: Any
    disconnected: bool = False
    done: bool = False

    def __repr__(self) -> str:
        shown = {k: "[redacted]" if k in _SECRET_HEADERS else v for k, v in self.headers.items()}
        return (
            f"RecordedRequest(number={self.number}, wire={self.wire!r}, path={self.path!r}, "
            f"headers={shown!r}, body={self.body!r}, disconnected={self.disconnected})"
        )

    @property
    def api_key(self) -> str | None:
        """The key the client sent (``Authorization: Bearer`` or ``x-api-key``)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        value = self.headers.get("authorization", "")
        return value.removeprefix("Bearer ").strip() if value else None

    @property
    def stream(self) -> bool:
        """Whether the client asked for a streamed answer."""
        return bool(self.body.get("stream"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as sent (the wire's own message objects)."""
        return list(self.body.get("messages") or [])

    @property
    def system(self) -> str:
        """The system prompt: the ``system`` message (OpenAI) or field (Anthropic)."""
        if self.wire == "anthropic":
            return _text_of(self.body.get("system") or "")
        return "".join(_text_of(m.get("content")) for m in self.messages if m["role"] == "system")

    @property
    def first_user_text(self) -> str:
        """The text of the first user message: what a responder tells conversations apart by
        (a delegated child's goal, say)."""
        for message in self.messages:
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def images(self) -> list[tuple[str, bytes]]:
        """The images the request shows the model (its vision input): (media_type, bytes)."""
        return images_of(self.messages)

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offers the model."""
        tools = self.body.get("tools") or []
        return [t["function"]["name"] if "function" in t else t["name"] for t in tools]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _tool_traffic(wire: Wire, message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a tool result or an assistant message calling tools (which a
    template's roles rule skips)."""
    if wire == "openai":
        return message.get("role") == "tool" or bool(message.get("tool_calls"))
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    kinds = {block.get("type") for block in blocks if isinstance(block, dict)}
    return bool(kinds) and ("tool_use" in kinds or kinds == {"tool_result"})


def roles_refusal(wire: Wire, body: Any) -> str | None:
    """:data:`ROLES_MESSAGE` when the user and assistant messages of ``body`` (its system
    message and tool traffic aside) do not alternate starting with a user message, else
    ``None``."""
    messages = body.get("messages") if isinstance(body, dict) else None
    expected = "user"
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") == "system":
            continue
        if _tool_traffic(wire, message):
            continue
        if message.get("role") != expected:
            return ROLES_MESSAGE
        expected = "assistant" if expected == "user" else "user"
    return None


def empty_text_refusal(wire: Wire, body: Any) -> str | None:
    """:data:`EMPTY_TEXT_MESSAGE` when a tool result of ``body`` has no text (``""``, or only
    empty parts), as Gemini's OpenAI-compatible endpoint, Vertex and some vLLM chat templates
    refuse it (OpenAI's and Anthropic's APIs take it), else ``None``."""
    messages = body.get("messages") if isinstance(body, dict) else None
    results: list[Any] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        if wire == "openai" and message.get("role") == "tool":
            results.append(message.get("content"))
        content = message.get("content") if wire == "anthropic" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(block.get("content", ""))
    for content in results:
        if content in ("", None, []) or (
            isinstance(content, list) and not any(_text_of([part]) for part in content)
        ):
            return EMPTY_TEXT_MESSAGE
    return None

"""What a model provider and the conversation loop say to each other, in no vendor's format.

A provider (a plugin kind, selected by ``model.provider``) turns a :class:`ModelRequest` into
its vendor's wire format, sends it, and turns the answer back into :class:`ModelEvent` s: text
as it streams (:class:`TextDelta`; a reasoning model's thinking as :class:`ThinkingDelta`),
then one :class:`ModelTurn` with the whole assistant message, its tool calls and the usage.
Everything here is plain frozen data, so a transcript, a test and a third-party provider can
build and compare it.

A provider raises :class:`ModelError` for a failed request; the loop retries one whose
``retryable`` is true (429, 5xx, a dropped connection), waiting ``retry_after`` seconds when the
server said so, and reports the others as they are (400, 401, an unknown model).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from hermes_core._errors import HermesError

if TYPE_CHECKING:
    from hermes_core._config.agent import ModelConfig

Role = Literal["user", "assistant", "tool"]
StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@dataclass(frozen=True)
class ModelToolCall:
    """A tool call the model asked for: its id (echoed in the result), the tool's name and the
    arguments as the JSON text the model wrote (the dispatcher parses and checks it, so a
    malformed argument string becomes a clear tool error, not a crash of the loop)."""

    id: str
    name: str
    arguments: str = "{}"

    def arguments_object(self) -> dict[str, Any] | None:
        """The arguments as the JSON object they should be, or ``None`` when the model wrote
        something else (cut short, single quotes, a list): the dispatcher answered such a call
        with ``INVALID_ARGUMENTS`` quoting the text, and a provider sends it back as ``{}``,
        since servers that read a call's arguments (Anthropic's ``input``, the chat templates
        of llama.cpp and vLLM) refuse the whole request otherwise. ``NaN`` and ``Infinity``,
        which Python reads but JSON has not, are no JSON either."""
        try:
            value = json.loads(self.arguments or "{}", parse_constant=_no_constant)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return None
        return value if isinstance(value, dict) else None


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not JSON")


IMAGE_TYPES: frozenset[str] = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image formats every vision model of the bundled providers' vendors accepts."""


@dataclass(frozen=True)
class ImagePart:
    """An image a user message shows the model (its vision input): the bytes and their media
    type, one of :data:`IMAGE_TYPES`. The repr gives the size, never the bytes."""

    media_type: str
    data: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if self.media_type not in IMAGE_TYPES:
            allowed = ", ".join(sorted(IMAGE_TYPES))
            raise ValueError(f"image type {self.media_type!r} is not one of {allowed}")

    @property
    def base64(self) -> str:
        """The bytes as base64 text, as both vendors' wires carry them."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_url(self) -> str:
        """The image as a ``data:`` URL (OpenAI's ``image_url``)."""
        return f"data:{self.media_type};base64,{self.base64}"


@dataclass(frozen=True)
class ThinkingBlock:
    """A block of a model's thinking that must go back to its vendor unchanged with the
    assistant message it came on (Anthropic's extended thinking: the next request of a tool
    loop is refused without it): ``text`` and its ``signature``, or, for a block the vendor
    encrypted (``redacted_thinking``), its ``data`` alone. All three are opaque to hermes and
    never shown."""

    text: str = ""
    signature: str = field(default="", repr=False)
    data: str = field(default="", repr=False)

    def to_json(self) -> dict[str, str]:
        """The block as Anthropic's API writes it (the transcript keeps it so)."""
        if self.data:
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "thinking", "thinking": self.text, "signature": self.signature}

    @classmethod
    def from_json(cls, data: object) -> ThinkingBlock:
        """The block :meth:`to_json` wrote; ``ValueError`` for anything else (a changed block
        would make the vendor refuse every request sending it)."""
        if isinstance(data, dict):
            kind = data.get("type")
            text, signature, secret = (data.get(k) for k in ("thinking", "signature", "data"))
            if kind == "redacted_thinking" and isinstance(secret, str) and secret:
                return cls(data=secret)
            if kind == "thinking" and isinstance(text, str) and isinstance(signature, str):
                return cls(text, signature)
        raise ValueError(
            "thinking: a block is not a thinking block as written (type thinking with text "
            "thinking and signature, or redacted_thinking with data): restore or remove it"
        )


@dataclass(frozen=True)
class ReasoningDetail:
    """One entry of OpenRouter's ``reasoning_details``, the model's thinking as OpenRouter
    carries it (``reasoning.text`` with its signature, ``reasoning.encrypted``...), which must
    go back unchanged with the assistant message it came on (its Claude models' are Anthropic's
    signed thinking blocks). Kept whole as the JSON text of the entry: opaque, never shown."""

    text: str = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        """The entry as OpenRouter wrote it (the transcript keeps it so)."""
        value: dict[str, Any] = json.loads(self.text)
        return value

    @classmethod
    def from_json(cls, data: object) -> ReasoningDetail:
        """The entry ``data``, a JSON object; ``ValueError`` for anything else."""
        if not isinstance(data, dict):
            raise ValueError(
                "reasoning_details: an entry is not an object as OpenRouter wrote it: restore "
                "or remove it"
            )
        return cls(json.dumps(data, ensure_ascii=False))


@dataclass(frozen=True)
class Message:
    """One message of a conversation.

    - ``user``: ``content`` is what the person (or the parent agent) wrote, ``images`` what
      it shows the model (a vision request: ``vision_analyze``, ``browser_vision``);
    - ``assistant``: ``content`` is the model's text, ``tool_calls`` what it asked to run,
      ``thinking`` the blocks of its thinking its vendor wants back, in order (never shown),
      ``reasoning_details`` OpenRouter's entries of it (the same, over the OpenAI wire);
    - ``tool``: the result of the call ``tool_call_id`` to the tool ``name``, as text,
      ``is_error`` when the call failed.

    The system prompt is no message: it is :attr:`ModelRequest.system`.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()
    thinking: tuple[ThinkingBlock, ...] = ()
    reasoning_details: tuple[ReasoningDetail, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The message as a JSON object (the transcript line), without empty fields."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [
                {"id": call.id, "name": call.name, "arguments": call.arguments}
                for call in self.tool_calls
            ]
        if self.tool_call_id:
            data["tool_call_id"] = self.tool_call_id
        if self.name:
            data["name"] = self.name
        if self.is_error:
            data["is_error"] = True
        if self.images:
            data["images"] = [{"media_type": i.media_type, "data": i.base64} for i in self.images]
        if self.thinking:
            data["thinking"] = [block.to_json() for block in self.thinking]
        if self.reasoning_details:
            data["reasoning_details"] = [entry.to_json() for entry in self.reasoning_details]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        """The message :meth:`to_json` wrote."""
        calls = tuple(
            ModelToolCall(str(call["id"]), str(call["name"]), str(call.get("arguments", "{}")))
            for call in data.get("tool_calls", ())
        )
        return cls(
            role=data["role"],
            content=str(data.get("content", "")),
            tool_calls=calls,
            tool_call_id=str(data.get("tool_call_id", "")),
            name=str(data.get("name", "")),
            is_error=bool(data.get("is_error", False)),
            images=tuple(
                ImagePart(str(image["media_type"]), base64.b64decode(image["data"]))
                for image in data.get("images", ())
            ),
            thinking=_thinking_of(data),
            reasoning_details=_details_of(data),
        )


def _thinking_of(data: Mapping[str, Any]) -> tuple[ThinkingBlock, ...]:
    """The thinking blocks of the message ``data``, a list on a model's message only."""
    blocks = data.get("thinking", [])
    if not isinstance(blocks, list):
        raise ValueError("thinking: not a list of thinking blocks: restore or remove it")
    if blocks and data.get("role") != "assistant":
        raise ValueError("thinking: only an assistant message has thinking: remove it")
    return tuple(ThinkingBlock.from_json(block) for block in blocks)


def _details_of(data: Mapping[str, Any]) -> tuple[ReasoningDetail, ...]:
    """The ``reasoning_details`` entries of the message ``data``, a list on a model's message."""
    entries = data.get("reasoning_details", [])
    if not isinstance(entries, list) or (entries and data.get("role") != "assistant"):
        raise ValueError(
            "reasoning_details: not a list of entries on an assistant message: restore or remove it"
        )
    return tuple(ReasoningDetail.from_json(entry) for entry in entries)


@dataclass(frozen=True)
class ToolSchema:
    """A tool as a model sees it: name, description and the JSON schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True)
class ModelRequest:
    """One request to a model: the system prompt, the conversation so far and the tools.

    ``max_tokens`` caps the answer's length (``None``: the provider's default).
    """

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    max_tokens: int | None = None


def cache_breakpoints(request: ModelRequest) -> list[int]:
    """Where ``request``'s conversation is marked for a prompt cache that caches only up to the
    blocks a request marks (Anthropic's ``cache_control``, and OpenRouter's for Claude): the
    indexes in ``request.messages`` of the last message of each of the last two user turns (a
    user message, or a turn's tool results and what follows them), one with something to mark.
    With the end of the tools and of the system prompt, the API's most of four breakpoints.
    The latest is where the next request reads what this one wrote; the one before is where
    this one reads what the last one wrote, however many blocks (tool calls and results) came
    after it, since the API looks back only 20 blocks from a breakpoint for an earlier entry."""
    ends: list[int] = []
    in_turn = False
    for index, message in enumerate(request.messages):
        if message.role == "assistant":
            in_turn = False
            continue
        if message.role == "tool" or message.content or message.images:
            if in_turn:
                ends[-1] = index
            else:
                ends.append(index)
            in_turn = True
    return ends[-2:]


@dataclass(frozen=True)
class Usage:
    """Tokens a request cost, as the server counted them: ``input_tokens`` is the whole input,
    ``cached_tokens`` the part of it the server read from its prompt cache (billed at a
    fraction of the price). ``unreported``: of the requests a sum counts, those answered with
    no token counts (their tokens are in no field: the counts are then a lower bound)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    unreported: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.unreported + other.unreported,
        )

    @property
    def total(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text, as it streams."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of a reasoning model's thinking, as it streams before (or between) its text:
    shown to whoever asked for it (an editor's thought area, ``--show-thinking``), never part
    of the answer nor of the history. A provider may yield none; what a vendor needs sent back
    comes on the :class:`ModelTurn`'s message, not from these."""

    text: str


@dataclass(frozen=True)
class ModelTurn:
    """The end of one model answer: the whole assistant message (its text and tool calls), the
    usage (``None`` when the server sent none, as some OpenAI-compatible servers do in streams)
    and why it stopped."""

    message: Message
    usage: Usage | None = None
    stop_reason: StopReason = "end_turn"


ModelEvent = TextDelta | ThinkingDelta | ModelTurn
"""What :meth:`ModelProvider.stream` yields: text deltas (thinking deltas among them, or
none), then exactly one :class:`ModelTurn`."""


class ModelError(HermesError):
    """A model request that failed, naming the provider and the model.

    ``status`` is the HTTP status when there was one; ``retryable`` says whether the same
    request may succeed later (429, 5xx, a connection lost before an answer); ``retry_after``
    is how long the server asked to wait, in seconds, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        model: str,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.model = model
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ContextOverflowError(ModelError):
    """A request longer than the model's context window: the server refused it for its size
    (never retried as it is: the conversation must get shorter first)."""


@dataclass(frozen=True)
class ModelSettings:
    """The ``model`` section as a provider's factory gets it, the key already read.

    ``api_key`` comes from the variable ``model.api_key_env`` names (the environment first,
    then ``$HERMES_HOME/.env``); it is ``None`` when that variable is unset (a local server
    needs none). It is never logged and never part of a repr. ``prompt_cache`` and
    ``reasoning_effort`` are ``model.prompt_cache`` and ``model.reasoning_effort``, which a
    provider follows as its vendor allows (or refuses with a ``ConfigError``).
    """

    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = None
    context_length: int = 128_000
    max_output_tokens: int = 4096
    timeout: float = 120.0
    prompt_cache: bool = True
    reasoning_effort: str | None = None

    @classmethod
    def of_section(cls, section: ModelConfig, api_key: str | None = None) -> ModelSettings:
        """The settings of the ``model`` section ``section``, the key ``api_key``."""
        return cls(
            provider=section.provider,
            model=section.model,
            base_url=section.base_url,
            api_key=api_key,
            api_key_env=section.api_key_env,
            context_length=section.context_length,
            max_output_tokens=section.max_output_tokens,
            timeout=section.timeout,
            prompt_cache=section.prompt_cache,
            reasoning_effort=section.reasoning_effort,
        )


@runtime_checkable
class ModelProvider(Protocol):
    """A model behind one vendor's API, made by a :class:`~hermes_core._specs.ModelProviderSpec`
    factory from :class:`ModelSettings`.

    ``stream`` sends one request and yields :class:`TextDelta` s as the text arrives (and
    :class:`ThinkingDelta` s as the thinking does, if it can), then exactly one
    :class:`ModelTurn`; it raises :class:`ModelError` for a failed request, and
    does not retry (the loop does, one place for every provider). ``aclose`` releases its
    connections.

    A provider may also offer ``async def list_models(self) -> list[str]``: the names of the
    models its server lists, asked with a request that costs no tokens (``GET /models`` for
    OpenAI's API and Anthropic's), raising :class:`ModelError` as ``stream`` does. ``hermes
    doctor`` asks it to see that the server answers and takes the key; a provider without it
    is reported "not checked".
    """

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The answer to ``request``, as events (an ``async def`` generator)."""
        ...

    async def aclose(self) -> None:
        """Release the provider's connections."""
        ...

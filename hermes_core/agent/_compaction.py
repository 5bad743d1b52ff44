"""Long conversations: compaction, and what to say when one no longer fits.

Every request sends the whole conversation. Before a request whose estimate passes
``agent.compact_at`` of ``model.context_length`` (:meth:`Compaction.estimate`: the server's
count of the last request and the estimate of what came since), once when
the server refuses a request for its size anyway
(:func:`~hermes_core.agent._http_errors.overflowed`: the request is then sent again), and when
the person asks (``/compact``), the older part of the conversation is replaced by a summary the
model writes: one more request, without tools, under :data:`SUMMARY_PROMPT`, spending the
turn's budget. The system prompt and the most recent messages (about a fifth of the window)
stay whole, and a tool call never goes without its results (both wires refuse an orphan). When
no summary can be written (that request fails, or is refused for its size too), the older part
is dropped, with a note saying so to the model and a :class:`Compacted` event to the person.

The transcript keeps every message: a compaction record is appended
(:meth:`~hermes_core.agent._transcripts.Transcript.compacted`) and a conversation taken up again
starts from it.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from hermes_core.agent._events import AgentEvent, Compacted, CompactionReason, UsageReport
from hermes_core.agent._requests import Stopped, request_events
from hermes_core.agent._wire import (
    Message,
    ModelError,
    ModelRequest,
    ModelTurn,
    TextDelta,
    ThinkingDelta,
    Usage,
)

if TYPE_CHECKING:
    import asyncio

    from hermes_core._config.agent import AgentConfig
    from hermes_core._session import Session
    from hermes_core.agent._budget import Budget
    from hermes_core.agent._request_tools import RequestTools
    from hermes_core.agent._requests import RetryPolicy
    from hermes_core.agent._transcripts import Transcript
    from hermes_core.agent._wire import ModelProvider, ModelSettings, ToolSchema

KEEP_SHARE = 0.2
"""The recent messages kept whole: up to this share of the window (at least the last call and
its results, or the last message)."""
SUMMARY_INPUT_SHARE = 0.5
"""The most of the window the summary request's text may take; past it, its middle is cut."""
RESULT_CHARS = 4000
"""A tool result's characters in the summary request's text (its start)."""
WORTH_SHARE = 0.05
"""Less of the window than this in the older part is not worth a model request to compact
(unless the person asks): the request is sent as it is, and the server judges it."""
IMAGE_TOKENS = 1600
"""An image as vision models count it, about (not the characters of its base64)."""
TRUSTED_SHARE = 0.5
"""A server's count of a request under this share of the request's estimate is not taken as
the base of the next estimates (it left out what the server read from its cache)."""
TRUSTED_MOST = 50
"""Nor one over this many times the estimate: text counts at most a few times it, an image at
most about ten (a large one at 16,000 tokens for some vision models, against
:data:`IMAGE_TOKENS`); a count past that is a server's bug."""

SUMMARY_HEADER = (
    "[The earlier part of this conversation was compacted: this summary, which you wrote, "
    "replaces it. Go on from it; the most recent messages follow as they were.]"
)
DROPPED_NOTE = (
    "[{count} earlier messages of this conversation were left out: it outgrew the model's "
    "context window and no summary of them could be written ({why}). Ask the person for what "
    "you need of them.]"
)
_DROPPED_WORDS = "earlier messages of this conversation were left out"
SUMMARY_PROMPT = """\
You are summarizing a conversation between a person and an AI agent that has grown too long \
for the model's context window. Your summary replaces the conversation below: the agent will \
go on with the work from it and the few most recent messages, and will see nothing else of \
what came before. Write what the agent needs to go on without asking again, under these \
headings:

1. Goal: what the person asked for and wants in the end (their words where they matter), and \
their latest request.
2. Preferences and constraints: how the person wants things done, what to avoid.
3. Decisions: what was decided or agreed, and why.
4. Files and commands: each file read, created or changed (its path and what changed), \
commands run and what they showed, other resources used (URLs, tools, ids).
5. Errors: problems met and how they were solved, or that they were not.
6. State: what is done and what the last messages were about.
7. Open work: what remains, and the next step.

Be specific: names, paths, numbers, identifiers, exact error messages. Leave out greetings \
and anything that no longer matters. Do not call tools. Write the summary only."""


def overflow_detail(error: ModelError, context_length: int) -> str:
    """The stop line's detail for a request the server refused for its size (``error``, a
    :func:`~hermes_core.agent._http_errors.overflowed` one): what happened, in the server's
    words, and the three ways on."""
    return (
        f"{error}: compact the conversation (/compact in hermes chat or an editor's ACP "
        f"session) or start a new conversation; model.context_length ({context_length}) "
        "should be the model's real window, so that hermes compacts before a request "
        "overflows it"
    )


def text_tokens(text: str) -> int:
    """The estimated tokens of a conversation's ``text``: a quarter of its ASCII characters
    (English, code, JSON), as the tool search counts, and one for each other character. A
    script written without spaces (Chinese, Japanese) takes about a token a character, four
    times the quarter, so a quarter of every character would let a conversation in it pass
    the window before compacting, and its summary request with it."""
    other = len(text) - len(text.encode("ascii", "ignore"))
    return math.ceil((len(text) - other) / 4) + other


def message_tokens(message: Message) -> int:
    """The estimated tokens of ``message``: its text, its calls, its images, the thinking
    blocks sent back with it."""
    calls = sum(text_tokens(call.name + call.arguments) for call in message.tool_calls)
    thinking = sum(text_tokens(block.text + block.data) for block in message.thinking)
    thinking += sum(text_tokens(entry.text) for entry in message.reasoning_details)
    return text_tokens(message.content) + calls + IMAGE_TOKENS * len(message.images) + thinking


def split_point(messages: Sequence[Message], keep: int) -> int | None:
    """Where the recent messages kept whole start: the earliest message, not a tool result
    (its call stays with it), from which the rest takes at most ``keep`` tokens; at least the
    last such message. ``None`` when nothing before it could be compacted (one message, or
    only an earlier summary within ``keep``: one past it, forged or written enormous, would
    overflow every request, and is compacted again)."""
    best: int | None = None
    total = 0
    for index in range(len(messages) - 1, 0, -1):
        total += message_tokens(messages[index])
        if messages[index].role == "tool":
            continue
        if best is not None and total > keep:
            break
        best = index
    if best is None or (best == 1 and _summary_within(messages[0], keep)):
        return None
    return best


def _summary_within(message: Message, keep: int) -> bool:
    """Whether ``message`` is a compaction's (:func:`replaces_earlier`) taking at most
    ``keep`` tokens: not worth summarising again alone."""
    return replaces_earlier(message) and message_tokens(message) <= keep


def replaces_earlier(message: Message) -> bool:
    """Whether ``message`` is a compaction's: the summary, or the note of messages dropped."""
    text = message.content
    dropped = text.startswith("[") and _DROPPED_WORDS in text[:100]
    return message.role == "user" and (text.startswith(SUMMARY_HEADER) or dropped)


def transcript_text(messages: Sequence[Message], limit: int) -> str:
    """``messages`` as the text the summary request shows the model (tool results cut to their
    start, images named); past ``limit`` tokens (:func:`text_tokens`), its middle is left out."""
    parts: list[str] = []
    for message in messages:
        if message.role == "tool":
            result = message.content
            if len(result) > RESULT_CHARS:
                result = result[:RESULT_CHARS] + f" [... {len(result) - RESULT_CHARS} more]"
            failed = " (failed)" if message.is_error else ""
            parts.append(f"[result of {message.name}{failed}]\n{result}")
            continue
        text = message.content
        if message.images:
            text += f"\n[{len(message.images)} image(s), not shown here]"
        for call in message.tool_calls:
            text += f"\n[called {call.name} {call.arguments}]"
        parts.append(f"[{message.role}]\n{text.strip()}")
    whole = "\n\n".join(parts)
    tokens = text_tokens(whole)
    if tokens <= limit:
        return whole
    kept = len(whole) * limit // tokens  # characters, at the text's own density
    head = kept // 4
    cut = len(whole) - kept
    return (
        f"{whole[:head]}\n\n[... {cut} characters left out here ...]\n\n{whole[-(kept - head) :]}"
    )


class _Agent(Protocol):
    @property
    def provider(self) -> ModelProvider: ...
    @property
    def model(self) -> ModelSettings: ...
    @property
    def retry(self) -> RetryPolicy: ...
    @property
    def limits(self) -> AgentConfig: ...
    @property
    def request_tools(self) -> RequestTools: ...


class _Conversation(Protocol):
    """What compaction needs of a :class:`~hermes_core.agent._conversation.Conversation`."""

    @property
    def agent(self) -> _Agent: ...
    @property
    def session(self) -> Session: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def budget(self) -> Budget: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def stop_requested(self) -> asyncio.Event: ...
    def transcript(self) -> Transcript | None: ...
    def _spend(self, usage: Usage) -> None: ...
    def _deadline(self) -> float | None: ...


@dataclass(frozen=True)
class _ServerCount:
    """What the server counted of a request: its whole input (cached or not), the model that
    counted it, and what the request held: how many messages, the last of them, the estimated
    tokens of its messages and of its tools."""

    tokens: int
    model: str
    sent: int
    last: Message
    messages: int
    schemas: int


class Compaction:
    """The compaction of one conversation (see the module). The estimate is kept cheap: the
    system prompt is counted once, the tools' schemas once per tool list
    (:class:`~hermes_core.agent._request_tools.RequestTools`), the messages as they are
    added, and past a server's count only what came after it."""

    def __init__(self, conversation: _Conversation) -> None:
        self._talk = conversation
        self._system = text_tokens(conversation.system_prompt)
        self._counted: tuple[int, int, Message | None] = (0, 0, None)
        self._server: _ServerCount | None = None
        self._tools: tuple[Sequence[ToolSchema], int] = ((), 0)  # the last estimate's
        self.shortened = False
        """Whether the last compaction replaced anything."""

    def estimate(self, tools: Sequence[ToolSchema]) -> int:
        """The tokens of the next request with ``tools``: the server's count of the last
        request (:meth:`counted`), plus the estimate of the messages added since and of the
        change in the tools' schemas. Without a count that still holds, estimated whole: the
        system prompt and the messages by :func:`text_tokens`, the schemas as the tool search
        counts them. A count no longer holds when the messages it counted were replaced (a
        compaction), when the conversation's model is another since (its tokenizer too), or
        when the tools lost more than half their estimate since (a smaller tool list whose
        real size is not known, subtracted, could leave too little)."""
        schemas = self._talk.agent.request_tools.tokens(tools)
        self._tools = (tools, schemas)
        counted = self._message_tokens()
        server = self._server
        messages = self._talk.messages
        if (
            server is not None
            and server.model == self._talk.agent.model.model
            and len(messages) >= server.sent
            and messages[server.sent - 1] is server.last
            and schemas * 2 >= server.schemas
        ):
            added = counted - server.messages  # each message is estimated once
            return server.tokens + added + schemas - server.schemas
        return self._system + schemas + counted

    def counted(self, request: ModelRequest, usage: Usage | None) -> None:
        """Take the server's count of ``request``, just answered (``usage``'s input tokens:
        both providers count the cache's reads and writes in them), as the base of the next
        estimates. None is taken when the server reported none, or a count under
        :data:`TRUSTED_SHARE` of the request's whole estimate: a server that counts only
        what it did not read from its cache (some local ones do) would let the conversation
        pass the window uncompacted; nor one over :data:`TRUSTED_MOST` times it, which would
        have every request compacted."""
        sent = request.messages
        self._server = None
        if usage is None or not sent or len(self._talk.messages) != len(sent):
            return  # none, or the conversation went on meanwhile: what was sent is unclear
        tools, schemas = self._tools
        if tools is not request.tools:
            schemas = self._talk.agent.request_tools.tokens(request.tools)
        counted = self._message_tokens()
        whole = self._system + schemas + counted
        if whole * TRUSTED_SHARE <= usage.input_tokens <= whole * TRUSTED_MOST:
            self._server = _ServerCount(
                usage.input_tokens, request.model, len(sent), sent[-1], counted, schemas
            )

    def _message_tokens(self) -> int:
        messages = self._talk.messages
        count, total, last = self._counted
        if count > len(messages) or (count and messages[count - 1] is not last):
            count, total = 0, 0  # replaced, not only added to
        total += sum(message_tokens(message) for message in messages[count:])
        self._counted = (len(messages), total, messages[-1] if messages else None)
        return total

    def due(self, tools: Sequence[ToolSchema]) -> bool:
        """Whether the next request with ``tools`` passes ``agent.compact_at`` (then
        :meth:`compact` with ``"size"``)."""
        share = self._talk.agent.limits.compact_at
        window = self._talk.agent.model.context_length
        return bool(share) and self.estimate(tools) > (share or 0) * window

    async def refused(self, tools: Sequence[ToolSchema]) -> AsyncIterator[AgentEvent]:
        """Compact after the server refused the request with ``tools`` for its size: the window
        is taken to be below that request's estimate, whatever ``model.context_length`` says."""
        window = min(self._talk.agent.model.context_length, self.estimate(tools))
        async for event in self.compact("overflow", window):
            yield event

    async def compact(
        self, reason: CompactionReason, window: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Replace the older part of the conversation by a summary (or drop it, when none can
        be written), yielding the summary request's retries and usage, then
        :class:`Compacted`; nothing when there is nothing to compact or the person stopped
        the turn meanwhile. :attr:`shortened` says whether anything was replaced."""
        self.shortened = False
        talk = self._talk
        model = talk.agent.model
        window = window or model.context_length
        messages = talk.messages
        keep = int(window * KEEP_SHARE)
        cut = split_point(messages, keep)
        if reason == "asked":  # the person wants room now: only the last exchange stays
            last = max((i for i, m in enumerate(messages) if m.role == "user"), default=0)
            fresh = last > 1 or (last == 1 and not _summary_within(messages[0], keep))
            cut = last if fresh else None
        if cut is None:
            return
        old, kept = messages[:cut], messages[cut:]
        tokens = sum(message_tokens(message) for message in old)
        if reason != "asked" and tokens < window * WORTH_SHARE:
            return
        written: list[str | ModelError] = []
        async for event in self._summary(old, window, written):
            yield event
        if not written:
            return  # stopped: the turn ends as the person asked, nothing changed
        summary, failure = written[0], ""
        if isinstance(summary, ModelError):
            failure, summary = str(summary), ""
            note = DROPPED_NOTE.format(count=len(old), why=f"the summary request failed: {failure}")
        else:
            note = f"{SUMMARY_HEADER}\n\n{summary}"
        replacement = Message("user", note)
        messages[:] = [replacement, *kept]
        self.shortened, self._server = True, None  # what the server counted is gone
        if (transcript := talk.transcript()) is not None:
            transcript.compacted(len(old), replacement, kept)
        summary_tokens = text_tokens(summary)
        yield Compacted(len(old), tokens, summary_tokens, reason, failure)

    async def _summary(
        self, old: Sequence[Message], window: int, written: list[str | ModelError]
    ) -> AsyncIterator[AgentEvent]:
        """Ask the model for the summary of ``old``; what it wrote (or why it could not) goes
        into ``written``, which stays empty when the person stopped the turn."""
        talk = self._talk
        agent = talk.agent
        text = transcript_text(old, int(window * SUMMARY_INPUT_SHARE))
        request = ModelRequest(
            model=agent.model.model,
            system=SUMMARY_PROMPT,
            messages=(Message("user", f"The conversation to summarize:\n\n{text}"),),
            max_tokens=agent.model.max_output_tokens,
        )
        talk.budget.spend_turn()
        turn: ModelTurn | None = None
        try:
            async for event in request_events(
                agent.provider,
                request,
                agent.retry,
                talk.stop_requested,
                talk._deadline(),
                agent.model.provider,
                agent.model.base_url,
            ):
                if isinstance(event, ModelTurn):
                    turn = event
                elif not isinstance(event, TextDelta | ThinkingDelta):  # the summary: no answer
                    yield event
        except Stopped:
            return
        except ModelError as error:
            written.append(error)
            return
        if turn is not None:
            talk._spend(turn.usage or Usage(unreported=1))  # answered, counted by no server
        if turn is not None and turn.usage is not None:
            yield UsageReport(turn.usage, talk.usage)
        summary = turn.message.content.strip() if turn is not None else ""
        if not summary:
            name = agent.model.provider
            empty = f"{name}: model {agent.model.model!r}: the summary came back empty"
            written.append(ModelError(empty, provider=name, model=agent.model.model))
            return
        written.append(summary)

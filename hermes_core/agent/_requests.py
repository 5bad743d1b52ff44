"""One model request as the loop makes it: streamed, retried when the failure may pass, cut
short by the user's stop or the time limit.

The one place where every provider's failures are retried: a :class:`ModelError` that is
``retryable`` (429, 5xx, a lost connection) and came before the answer's first event (the
model's thinking, a :class:`ThinkingDelta`, is none: nothing of it is kept) is sent again,
after the server's ``retry-after`` when it gave one (else 1, 2, 4... seconds), at most
``model.max_retries`` times and never waiting longer than ``model.max_retry_wait``.

Also the one place where a model server's malformed answer is caught, whatever the provider: an
event that is not what the wire types say (a tool name or text that is not a string) and any
other exception out of the provider's stream (a chunk its SDK could not parse) become a
:class:`ModelError` naming the provider and the model, so the turn ends with an error and never
lets a crash out of the loop. But an HTTP library's own error (httpx's or httpx2's: a dropped
or refused connection, a timeout), which the SDKs before the ones that wrap it (openai before
3.14, anthropic before 2.17) and a plugin talking httpx let out of a stream, is the lost
connection it is: retried before the first event, said as closed mid-answer after it. Token
counts that are no number of tokens are unknown (0), not
a malformed answer: an answer is never lost over its count.

And the one place where a request's messages are made to take turns (:func:`alternating`):
adjacent user messages are sent as one, their texts joined with a blank line. A compaction's
summary is a user message, and so may be the first message it keeps; a turn that failed (or
was stopped) before the model answered leaves the person's message without an answer. The
vendors' APIs take two user messages in a row, but many local servers' chat templates
(Mistral's, Gemma's, Llama-2's on llama.cpp or vLLM) refuse them: "Conversation roles must
alternate". The conversation and its transcript keep the messages as they were.

And the one place where a tool result of no text (a tool that printed nothing) is said in
words, :data:`NO_OUTPUT`, for every provider: Gemini's OpenAI-compatible endpoint, Vertex and
some vLLM chat templates refuse a message of empty text ("Unable to submit request because it
has an empty text parameter"), and the result would be sent back, and refused, with every later
request.

And the one place where a request's text is made text UTF-8 can hold, for every provider and
every part of it (:func:`encodable_request`): a lone surrogate (undecodable bytes in a prompt,
a JSON ``"\\ud800"`` in an MCP server's result or a model's arguments, a memory entry, a file
name) is sent as U+FFFD (``hermes_core/_encodable.py``), where the SDKs raised
``UnicodeEncodeError`` and the request failed; the conversation and its transcript keep the text
as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import weakref
from collections.abc import AsyncIterator, Sequence
from dataclasses import astuple, dataclass, fields, is_dataclass, replace
from typing import Any, Final, TypeVar

from hermes_core._encodable import encodable, encodable_value, escapes_surrogate
from hermes_core._redaction import redact_text, shown_url
from hermes_core.agent._events import Retrying
from hermes_core.agent._http_errors import http_model_error, transport_errors
from hermes_core.agent._provider_checks import token_count
from hermes_core.agent._wire import (
    Message,
    ModelError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    ThinkingDelta,
    Usage,
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry (``model.max_retries``, ``model.max_retry_wait``)."""

    max_retries: int = 3
    max_wait: float = 60.0

    def wait(self, error: ModelError, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        wanted = error.retry_after if error.retry_after is not None else 2.0 ** (attempt - 1)
        return max(0.0, min(wanted, self.max_wait))


class Stopped(Exception):
    """The request was cut short: by the user's stop (``interrupted``) or the time limit."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def _next_or_stop(
    stream: AsyncIterator[ModelEvent], stopper: asyncio.Future[Any], deadline: float | None
) -> ModelEvent:
    """The stream's next event, unless ``stopper`` (waiting on the stop event) ends or
    ``deadline`` passes first."""
    if stopper.done():
        raise Stopped("interrupted")
    loop = asyncio.get_running_loop()
    timeout = None if deadline is None else deadline - loop.time()
    if timeout is not None and timeout <= 0:
        raise Stopped("max_seconds")
    step = asyncio.ensure_future(anext(stream))
    try:
        done, _ = await asyncio.wait(
            {step, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    except BaseException:
        # This task was cancelled (an ACP client that left mid-answer): the step must not go
        # on alone and fail later, when the provider's client is closed, as an exception
        # nobody retrieves; it ends before the stream is closed.
        step.cancel()
        step.add_done_callback(_retrieved)
        with contextlib.suppress(BaseException):
            await asyncio.wait({step})
        raise
    if step in done:
        return step.result()
    step.cancel()
    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
        await step
    raise Stopped("interrupted" if stopper.done() else "max_seconds")


NO_OUTPUT: Final = "(no output)"
"""What a tool result of no text (empty or blank) is sent as (see the module)."""


def worded_results(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` with each tool result of no text (empty or blank) said as
    :data:`NO_OUTPUT` (see the module)."""
    return tuple(
        # isspace stops at the first other character, where strip would copy each result whole
        # at every request of the conversation.
        replace(m, content=NO_OUTPUT) if m.role == "tool" and _blank(m.content) else m
        for m in messages
    )


def _blank(text: str) -> bool:
    return not text or text.isspace()


def alternating(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` with each run of adjacent user messages sent as one: their texts joined
    with a blank line, their images together (see the module)."""
    joined: list[Message] = []
    for message in messages:
        last = joined[-1] if joined else None
        if last is None or last.role != "user" or message.role != "user":
            joined.append(message)
            continue
        text = "\n\n".join(part for part in (last.content, message.content) if part)
        joined[-1] = replace(last, content=text, images=last.images + message.images)
    return tuple(joined)


def encodable_request(request: ModelRequest) -> ModelRequest:
    """``request`` with each lone surrogate of its text sent as U+FFFD (see the module): the
    system prompt, the tools, each message's text, names and ids, and a call's arguments,
    whose JSON text may hold ``\\ud800``; ``request`` itself when it holds none."""
    tools = _each_once(request.tools)
    messages = _each_once(request.messages)
    model, system = encodable(request.model), encodable(request.system)
    given = (request.model, request.system, request.tools, request.messages)
    if all(new is old for new, old in zip((model, system, tools, messages), given, strict=True)):
        return request
    return replace(request, model=model, system=system, tools=tools, messages=messages)


_JUDGED: dict[int, tuple[weakref.ref[Any], Any]] = {}
"""What each tool and message (by identity, while it lives) is sent as: a conversation sends
its history and tools again at every request, and walking a tool's schema each time cost
about 0.6 ms of every tool call (benchmarks/agent.py)."""


def _each_once(items: tuple[_T, ...]) -> tuple[_T, ...]:
    """``items``, each :func:`_encodable_data`, judged once while it lives."""
    sent = []
    for item in items:
        known = _JUDGED.get(id(item))
        if known is None or known[0]() is not item:
            key = id(item)
            encoded = _encodable_data(item)
            # The entry goes with its item: nothing held past it, no id taken for another.
            gone = weakref.ref(item, functools.partial(_forget, key))
            known = (gone, _SAME if encoded is item else encoded)
            _JUDGED[key] = known
        sent.append(item if known[1] is _SAME else known[1])
    return items if all(new is old for new, old in zip(sent, items, strict=True)) else tuple(sent)


_SAME: Final = object()


def _forget(key: int, _gone: object) -> None:
    _JUDGED.pop(key, None)


def _encodable_data(value: Any) -> Any:
    if isinstance(value, Message) and _plain(value):
        return value  # most messages, at every request: no walk of their fields
    if isinstance(value, tuple):
        items = tuple(_encodable_data(item) for item in value)
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if not is_dataclass(value) or isinstance(value, type):
        return encodable_value(value)
    changes = {}
    for part in fields(value):
        old = getattr(value, part.name)
        new = _encodable_data(old)
        if new is not old:
            changes[part.name] = new
    if isinstance(value, ModelToolCall) and escapes_surrogate(value.arguments):
        arguments = _encodable_arguments(value.arguments)
        if arguments is not value.arguments:
            changes["arguments"] = arguments
    return replace(value, **changes) if changes else value


def _plain(message: Message) -> bool:
    texts = (message.content, message.name, message.tool_call_id)
    nested = message.tool_calls or message.thinking or message.reasoning_details
    return not nested and all(encodable(text) is text for text in texts)


def _encodable_arguments(text: str) -> str:
    # Sent as written (the OpenAI wire), or parsed (Anthropic's ``input``): both then UTF-8.
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    encoded = encodable_value(value)
    return text if encoded is value else json.dumps(encoded, ensure_ascii=False)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Take an abandoned task's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


async def request_events(
    provider: ModelProvider,
    request: ModelRequest,
    retry: RetryPolicy,
    stop: asyncio.Event,
    deadline: float | None,
    name: str | None = None,
    base_url: str | None = None,
) -> AsyncIterator[ModelEvent | Retrying]:
    """The events of ``request`` (its adjacent user messages joined: :func:`alternating`; a
    tool result of no text said: :func:`worded_results`),
    retried as the module says; raises :class:`Stopped` when
    stopped or out of time, and the provider's :class:`ModelError` when retrying cannot help,
    or one naming the provider ``name`` (``model.provider``) and ``base_url``
    (``model.base_url``, when set) for a stream that fails otherwise or ends without a
    :class:`ModelTurn`. Its text is sent UTF-8 can hold: :func:`encodable_request`."""
    request = replace(request, messages=alternating(worded_results(request.messages)))
    request = encodable_request(request)
    # One waiter on the stop event for the whole request, not one per streamed chunk.
    stopper = asyncio.ensure_future(stop.wait())
    named = name or getattr(provider, "name", None) or type(provider).__name__
    where = f" at {shown_url(base_url)}" if base_url else ""
    try:
        async for event in _attempts(
            provider, (named, where), base_url, request, retry, stop, stopper, deadline
        ):
            yield event
    finally:
        stopper.cancel()


async def _attempts(
    provider: ModelProvider,
    named: tuple[str, str],
    base_url: str | None,
    request: ModelRequest,
    retry: RetryPolicy,
    stop: asyncio.Event,
    stopper: asyncio.Future[Any],
    deadline: float | None,
) -> AsyncIterator[ModelEvent | Retrying]:
    attempt = 0
    while True:
        attempt += 1
        stream = provider.stream(request)
        started = turned = False
        try:
            while True:
                try:
                    event = await _next_or_stop(stream, stopper, deadline)
                except StopAsyncIteration:
                    if not turned:
                        raise _no_turn(named, request) from None
                    return
                except Exception as error:
                    if not isinstance(error, transport_errors()):
                        raise
                    raise http_model_error(
                        named[0],
                        request.model,
                        status=None,
                        detail=str(error) or type(error).__name__,
                        base_url=base_url,
                        cause=error,
                        mid_answer=started,
                    ) from None
                # Thinking is not the answer, and nothing of it is kept: a request lost while
                # the model only thought is sent again, as before thinking was streamed.
                started = started or not isinstance(event, ThinkingDelta)
                turned = turned or isinstance(event, ModelTurn)
                yield _checked(event, named, request)
        except ModelError as error:
            if started or not error.retryable or attempt > retry.max_retries:
                raise
            wait = retry.wait(error, attempt)
            yield Retrying(str(error), wait, attempt, retry.max_retries + 1)
            try:
                await asyncio.wait_for(stop.wait(), wait)
            except TimeoutError:
                continue
            raise Stopped("interrupted") from None
        except Stopped:
            raise
        except Exception as error:  # a chunk the provider could not read: no crash of the loop
            raised = f"its stream raised {type(error).__name__}: {error}"
            raise _malformed(named, request, raised) from error
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                # A provider failing to close must not hide the answer.
                with contextlib.suppress(Exception):
                    await closing()


def _no_turn(named: tuple[str, str], request: ModelRequest) -> ModelError:
    name, where = named
    return ModelError(
        f"{name}: model {request.model!r}{where}: the answer ended without a turn (a stream yields "
        "one ModelTurn, last)",
        provider=name,
        model=request.model,
    )


def _malformed(named: tuple[str, str], request: ModelRequest, what: str) -> ModelError:
    # The server's own text may be quoted: redacted (as every provider error is), then cut: a
    # key cut first could leave a piece too short for its pattern.
    what = redact_text(what)
    what = what if len(what) <= 300 else what[:300] + "..."
    name, where = named
    return ModelError(
        f"{name}: model {request.model!r}{where}: the server's answer could not be read: {what}",
        provider=name,
        model=request.model,
    )


def _checked(event: object, named: tuple[str, str], request: ModelRequest) -> ModelEvent:
    """``event`` when it is what the wire types say, else the :class:`ModelError` of a
    malformed answer (a provider passes on whatever its server's JSON held); its token counts
    read as :func:`~hermes_core.agent.token_count` reads them (unknown: 0), never a reason to
    lose the answer."""
    if isinstance(event, TextDelta | ThinkingDelta) and isinstance(event.text, str):
        return event
    if isinstance(event, ModelTurn):
        message, usage = event.message, event.usage
        texts = [message.content] + [
            part for call in message.tool_calls for part in (call.id, call.name, call.arguments)
        ]
        if all(isinstance(text, str) for text in texts):
            if usage is None or all(
                type(count) is int and token_count(count) == count
                for count in (usage.input_tokens, usage.output_tokens, usage.cached_tokens)
            ):
                return event
            read = [token_count(count) or 0 for count in astuple(usage)]
            return replace(event, usage=Usage(*read))
    raise _malformed(named, request, f"not text, calls and token counts: {event!r}")

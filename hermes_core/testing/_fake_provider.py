"""A fake model provider, in process: scripted answers for tests of the loop and of tools in a
loop, with no server and no model (none can run in CI).

For the wire formats (streaming chunks, 429s with ``retry-after``, what a real SDK sends), use
the fake model server instead; this one is for what happens above the provider.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.agent._wire import (
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    Usage,
)

_USAGE = Usage(10, 5)

FakeAnswer = ModelTurn | ModelError | str
"""A scripted answer: a whole turn, an error to raise, or plain text (a final answer)."""


def fake_turn(
    text: str = "",
    *calls: tuple[str, dict[str, Any]],
    usage: Usage | None = _USAGE,
) -> ModelTurn:
    """An assistant turn saying ``text`` and asking for ``calls`` (``(name, arguments)``
    pairs, given ids ``call_1``, ``call_2``...)."""
    tool_calls = tuple(
        ModelToolCall(f"call_{number}", name, json.dumps(arguments))
        for number, (name, arguments) in enumerate(calls, start=1)
    )
    return ModelTurn(
        Message("assistant", text, tool_calls=tool_calls),
        usage,
        "tool_use" if tool_calls else "end_turn",
    )


@dataclass
class FakeModelProvider:
    """A :class:`~hermes_core.agent._wire.ModelProvider` that answers from a script: each
    request takes the next of ``answers`` (or asks ``responder``, given the request), streams
    its text in ``chunk`` -character pieces, then yields the turn; a :class:`ModelError` answer
    is raised. ``requests`` records every request; ``delay`` is waited before each chunk (so a
    test can stop a turn mid-stream)."""

    answers: list[FakeAnswer] = field(default_factory=list)
    responder: Callable[[ModelRequest], FakeAnswer] | None = None
    chunk: int = 8
    delay: float = 0.0
    requests: list[ModelRequest] = field(default_factory=list)
    closed: bool = False

    @classmethod
    def scripted(cls, *answers: FakeAnswer, **options: Any) -> FakeModelProvider:
        """A fake provider answering ``answers`` in order."""
        return cls(list(answers), **options)

    def _answer(self, request: ModelRequest) -> FakeAnswer:
        if self.responder is not None:
            return self.responder(request)
        if not self.answers:
            raise AssertionError(
                f"the fake model was asked a request #{len(self.requests)} it has no answer for"
            )
        return self.answers.pop(0)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The next scripted answer, streamed."""
        self.requests.append(request)
        answer = self._answer(request)
        if isinstance(answer, ModelError):
            raise answer
        turn = answer if isinstance(answer, ModelTurn) else fake_turn(answer)
        text = turn.message.content
        for start in range(0, len(text), self.chunk):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield TextDelta(text[start : start + self.chunk])
        yield turn

    async def aclose(self) -> None:
        """Mark the provider closed."""
        self.closed = True


def texts_of(requests: Sequence[ModelRequest]) -> list[list[str]]:
    """The message texts of each recorded request (what a test compares)."""
    return [[message.content for message in request.messages] for request in requests]

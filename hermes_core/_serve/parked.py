"""Calls of 2026-07-28 clients that wait for an approval (the protocol's multi-round trip).

In the 2026-07-28 protocol a server never sends a request to the client. To ask, it answers
``tools/call`` with an ``input_required`` result holding the questions and a ``requestState``;
the client sends the same call again with the answers and that state. Running the call again
from the start would run its hooks twice and, in a ``tool_call`` batch, repeat the entries that
already ran, so each call runs once, in the background: the first request returns when the call
finishes or asks; each retry hands the answers to the waiting call and returns its next
question or its result. The state is a random token naming the parked call; the SDK's
``RequestStateBoundary`` seals it, binds it to the tool name and arguments and expires it.

A parked call waits for each answer at most ``approvals.timeout`` seconds (the dispatcher's
deadline); a finished call nobody collects is forgotten ``keep_for`` seconds later.

Parked calls are bounded: at most :data:`PARKED_PER_SESSION` of one hermes session (over stdio,
the connection) and :data:`PARKED_TOTAL` in all wait for an answer (the client was given their
state; the first request has returned). A call that asks while either bound is reached is
ended at its question, so what it asks about never runs: its first request gets an error
result (:class:`TooManyParked`). A place frees when a parked call is answered, times out or is
collected. A call that asks nothing is never refused: it is held by its request as any call is.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import mcp_types

from hermes_core._approvals.prompt import Elicit, ElicitReply
from hermes_core._serve.convert import mcp_call_result
from hermes_core._tools import ToolResult

__all__ = [
    "PARKED_PER_SESSION",
    "PARKED_TOTAL",
    "ParkedCall",
    "ParkedCalls",
    "RoundResult",
    "TooManyParked",
]

log = logging.getLogger("hermes_core._serve")

PARKED_PER_SESSION: Final = 16
"""The most calls one hermes session has parked at once (over stdio: the connection)."""
PARKED_TOTAL: Final = 128
"""The most calls one ``hermes serve`` has parked at once, over all sessions."""


class TooManyParked(Exception):
    """A call that would go beyond :data:`PARKED_PER_SESSION` or :data:`PARKED_TOTAL`; the
    message says which bound and how to free a place."""


RoundResult = mcp_types.CallToolResult | mcp_types.InputRequiredResult
"""What one request of a parked call answers: the call's result, or its open questions."""

ParkedCall = Callable[[Elicit], Awaitable[mcp_types.CallToolResult]]
"""The call to run: it asks the client through the ``Elicit`` it is given."""


@dataclass(eq=False)
class _Question:
    request: mcp_types.ElicitRequest
    answered: anyio.Event = field(default_factory=anyio.Event)
    reply: mcp_types.ElicitResult | None = None


class _Parked:
    """One call running in the background, its open questions and, once done, its result."""

    def __init__(self, owner: object) -> None:
        self.owner = owner
        """The hermes session the call runs in (counted against its bound once it waits)."""
        self.token = secrets.token_urlsafe(24)
        self.questions: dict[str, _Question] = {}
        self.result: mcp_types.CallToolResult | None = None
        self.handed_out = False
        """Whether the client was given the token (so it may come back for the result)."""
        self.collected = anyio.Event()
        self.scope = anyio.CancelScope()
        self._changed = anyio.Event()
        self._numbers = itertools.count(1)

    def changed(self) -> None:
        """Wake the requests waiting for a question or the result."""
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for_change(self) -> None:
        await self._changed.wait()

    async def elicit(self, message: str, schema: dict[str, Any]) -> ElicitReply:
        """Put one question to the client and wait for the request that answers it."""
        key = f"approval-{next(self._numbers)}"
        params = mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema)
        question = _Question(mcp_types.ElicitRequest(params=params))
        self.questions[key] = question
        self.changed()
        try:
            await question.answered.wait()
        finally:
            del self.questions[key]
        assert question.reply is not None
        return question.reply


class ParkedCalls:
    """The calls waiting for answers, by token; :meth:`run` hosts them until cancelled.

    At most ``per_session`` calls of one owner (a hermes session) and ``total`` calls in all
    are parked at once; ``keep_for`` is how long a finished call waits to be collected.
    """

    def __init__(
        self,
        keep_for: float,
        *,
        per_session: int = PARKED_PER_SESSION,
        total: int = PARKED_TOTAL,
    ) -> None:
        self._keep_for = keep_for
        self._per_session = per_session
        self._total = total
        self._parked: dict[str, _Parked] = {}
        self._waiting = 0
        """How many parked calls wait for an answer (their state handed out)."""
        self._by_owner: Counter[int] = Counter()
        """The same, by owner."""
        self._group: anyio.abc.TaskGroup | None = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Host the parked calls until cancelled (which ends the calls still waiting)."""
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._group = None
                self._parked.clear()
                self._waiting = 0
                self._by_owner.clear()

    @property
    def running(self) -> bool:
        """Whether :meth:`run` hosts calls now."""
        return self._group is not None

    def __len__(self) -> int:
        """How many calls are parked now."""
        return len(self._parked)

    async def start(self, call: ParkedCall, *, owner: object = None) -> RoundResult:
        """Run ``call`` of ``owner`` (its hermes session) in the background; its result, or
        its first questions. :class:`TooManyParked` when it asks while a bound is reached: the
        call is ended at its question, so what it asks about never runs."""
        if self._group is None:
            raise RuntimeError("ParkedCalls.run is not running")
        parked = _Parked(owner)
        self._add(parked)
        self._group.start_soon(self._run, parked, call)
        answered = False
        try:
            answer = await self._next_round(parked)
            answered = True
            return answer
        finally:
            if not answered and not parked.handed_out:
                # The client left before it had the token: nobody can come back for this call.
                parked.scope.cancel()
                self._forget(parked)

    def _check_bounds(self, owner: object) -> None:
        if self._waiting >= self._total:
            raise TooManyParked(
                f"{self._total} calls already wait for an approval in this hermes serve "
                "(the most it holds)"
            )
        if self._by_owner[id(owner)] >= self._per_session:
            raise TooManyParked(
                f"{self._per_session} calls of this session already wait for an approval "
                "(the most one session holds)"
            )

    def _add(self, parked: _Parked) -> None:
        self._parked[parked.token] = parked

    def _hand_out(self, parked: _Parked) -> None:
        """The client is given ``parked``'s state: from now on it waits, counted."""
        if parked.handed_out:
            return
        parked.handed_out = True
        self._waiting += 1
        self._by_owner[id(parked.owner)] += 1

    def _forget(self, parked: _Parked) -> None:
        """Drop ``parked`` (once: later calls for the same call do nothing)."""
        if self._parked.pop(parked.token, None) is None or not parked.handed_out:
            return
        self._waiting -= 1
        self._by_owner[id(parked.owner)] -= 1
        if self._by_owner[id(parked.owner)] <= 0:
            del self._by_owner[id(parked.owner)]

    async def resume(
        self, token: str, responses: mcp_types.InputResponses | None
    ) -> RoundResult | None:
        """Hand ``responses`` to the call ``token`` names; its next questions or its result.
        ``None`` when no such call is parked (it finished and was collected, or forgotten)."""
        parked = self._parked.get(token)
        if parked is None:
            return None
        for key, reply in (responses or {}).items():
            question = parked.questions.get(key)
            if question is None or question.answered.is_set():
                continue
            # Any other kind of reply to an approval form refuses it.
            question.reply = (
                reply
                if isinstance(reply, mcp_types.ElicitResult)
                else mcp_types.ElicitResult(action="cancel")
            )
            question.answered.set()
        return await self._next_round(parked)

    async def _run(self, parked: _Parked, call: ParkedCall) -> None:
        try:
            with parked.scope:
                try:
                    parked.result = await call(parked.elicit)
                except Exception as exc:  # dispatch never raises; what surrounds it might
                    log.exception("a parked call failed")
                    parked.result = mcp_call_result(
                        ToolResult.error("INTERNAL_ERROR", f"hermes-core failed: {exc}")
                    )
                parked.changed()
                with anyio.move_on_after(self._keep_for):
                    await parked.collected.wait()
        finally:
            self._forget(parked)

    async def _next_round(self, parked: _Parked) -> RoundResult:
        while True:
            if parked.result is not None:
                # Forgotten at once: a replayed state must not be answered (or run) twice.
                self._forget(parked)
                parked.collected.set()
                return parked.result
            waiting: mcp_types.InputRequests = {
                key: question.request
                for key, question in parked.questions.items()
                if not question.answered.is_set()
            }
            if waiting:
                if not parked.handed_out:
                    # Raised into start(), which ends the call: its tool never runs.
                    self._check_bounds(parked.owner)
                self._hand_out(parked)
                return mcp_types.InputRequiredResult(
                    input_requests=waiting, request_state=parked.token
                )
            await parked.wait_for_change()

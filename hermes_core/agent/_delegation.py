"""``delegate_task``: subagents, each an isolated conversation in its own session of the host.

A child's first request holds the system prompt, its goal and its context, nothing of its
parent's messages; it runs in a new session (:meth:`Host.session <hermes_core._host.Host.session>`:
the parent's working directory unless the task names another, its own background processes,
stopped when it ends), granted the task's toolsets or all its parent's, never ``clarify``,
``memory``, ``cron`` or ``messaging`` (:mod:`~hermes_core.agent._delegated_tasks`). It spends its
parent's :class:`~hermes_core.agent._budget.Budget`; its approval prompts go up to its parent's
(:mod:`~hermes_core.agent._child_prompt`). Only its final answer, and the files its
``write_file`` and ``patch`` calls wrote, return.

``delegation.max_concurrent`` children of one conversation run at once, more are queued. A
top-level delegation (from the root conversation) runs in the background: the tool answers
with a handle once each child has started or is queued (so its start is told before the
model's next answer), and the results wait in :class:`Delegations` until the caller sends them
as the next message (:func:`~hermes_core.agent._settling.send_until_settled`). A child may
delegate in turn while its depth is below ``delegation.max_depth``; such an orchestrator waits
for its workers.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from hermes_core._progress import listening_to_progress
from hermes_core._session import Session
from hermes_core._tools import ToolResult
from hermes_core.agent._child_outcomes import ChildOutcome, outcome_of, report, written_files
from hermes_core.agent._child_prompt import ChildPrompt
from hermes_core.agent._delegated_tasks import DelegatedTask, TaskError, child_cwd, child_grant
from hermes_core.agent._events import (
    AgentEvent,
    ChildEvent,
    ChildFinished,
    ChildStarted,
    Finished,
    ToolFinished,
    passed_on,
)

if TYPE_CHECKING:
    from hermes_core._config.agent import DelegationConfig
    from hermes_core._host import Host
    from hermes_core.agent._budget import Budget

log = logging.getLogger(__name__)

STATE_KEY: Final = "agent.delegations"
"""Where a conversation's :class:`Delegations` is kept in its session's ``state``."""
RESULTS_HEADER: Final = "[delegation {} finished] The results of the subagents you delegated to:"
"""How the message of a background delegation's results starts (``{}``: the delegation's id)."""


_CLOSE_GRACE: Final = 10.0
"""How long :meth:`Delegations.aclose` lets stopped children end before cancelling them."""


class Conversing(Protocol):
    """What delegation needs of a conversation
    (:class:`~hermes_core.agent._conversation.Conversation`)."""

    @property
    def delegations(self) -> Delegations:
        """Its delegations."""
        ...

    def send(self, text: str) -> AsyncIterator[AgentEvent]:
        """Run a turn."""
        ...

    def cancel(self) -> None:
        """Stop the running turn."""
        ...

    @property
    def stop_requested(self) -> asyncio.Event:
        """Set by :meth:`cancel` until the next turn starts."""
        ...


class Owner(Protocol):
    """The conversation that delegates."""

    @property
    def session(self) -> Session:
        """Its session."""
        ...

    @property
    def depth(self) -> int:
        """0 for a root conversation, 1 for its children..."""
        ...

    @property
    def budget(self) -> Budget:
        """What its turn (and its children) may still spend."""
        ...

    def child(self, session: Session) -> Conversing:
        """A child conversation in ``session``, spending this one's budget."""
        ...


@dataclass(eq=False)
class _Batch:
    """One call of ``delegate_task``: its tasks, each child's grant and directory, the children
    running now."""

    id: str
    tasks: list[DelegatedTask]
    grants: list[frozenset[str]]
    cwds: list[Path]
    running: dict[int, Conversing] = field(default_factory=dict)
    cancelled: bool = False
    taken_back: bool = False
    """Its results are not sent (``/undo`` took back the call that started it)."""
    task: asyncio.Task[None] | None = None
    launched: set[int] = field(default_factory=set)
    """The children that have started, are queued behind ``max_concurrent``, or have ended."""
    all_launched: asyncio.Event = field(default_factory=asyncio.Event)
    ended: set[int] = field(default_factory=set)
    """The children that have ended (their outcome is known)."""

    def launch(self, index: int) -> None:
        """Child ``index`` has started, is queued, or has ended."""
        self.launched.add(index)
        if len(self.launched) == len(self.tasks):
            self.all_launched.set()


class Delegations:
    """The delegations of one conversation: its children (``max_concurrent`` at once), the
    results of background delegations waiting to be sent as a message, and the children's
    started/finished events.

    The caller of a root conversation reads :attr:`pending` and :meth:`next_message` when a
    turn ends (or uses :func:`~hermes_core.agent._settling.send_until_settled`) and closes with
    :meth:`aclose`.
    """

    def __init__(self, owner: Owner, host: Host, config: DelegationConfig) -> None:
        self.owner = owner
        self.host = host
        self.config = config
        self.prefix = ""
        """Put before this conversation's children's labels (a worker's: ``d1.2/``)."""
        self._ids = itertools.count(1)
        self._slots = asyncio.Semaphore(config.max_concurrent)
        self._prompt_lock = asyncio.Lock()
        self._batches: dict[str, _Batch] = {}
        self._inbox: asyncio.Queue[str] = asyncio.Queue()
        self._given: set[str] = set()
        self._events: list[ChildEvent] = []
        self._news = asyncio.Event()

    @property
    def pending(self) -> int:
        """Background delegations whose results have not been taken yet (running or ready)."""
        running = sum(1 for batch in self._batches.values() if batch.task is not None)
        return running + self._inbox.qsize()

    @property
    def unfinished(self) -> int:
        """The children that have not ended yet (running, or queued behind ``max_concurrent``):
        what :meth:`aclose` would stop."""
        return sum(len(batch.tasks) - len(batch.ended) for batch in self._batches.values())

    def ready(self) -> list[str]:
        """The results that have arrived, each a message for the model (taken: not again)."""
        found = self._arrived()
        self._given.update(found)
        return found

    async def next_message(self) -> str | None:
        """The next background delegation's results, waiting for them (with any other that
        arrived meanwhile, as one message); ``None`` when none is pending."""
        if not self.pending:
            return None
        first = await self._inbox.get()
        message = "\n\n".join([first, *self._arrived()])
        self._given.add(message)
        return message

    def gave(self, message: str) -> bool:
        """Whether ``message`` is results :meth:`ready` or :meth:`next_message` gave out (once:
        the turn sending it goes on with the budget of the turn that delegated)."""
        if message not in self._given:
            return False
        self._given.discard(message)
        return True

    def _arrived(self) -> list[str]:
        found = []
        while not self._inbox.empty():
            found.append(self._inbox.get_nowait())
        return found

    def put_back(self, message: str) -> None:
        """Keep ``message`` (results taken by :meth:`next_message`) for the next taker."""
        self._inbox.put_nowait(message)

    def take_events(self) -> list[ChildEvent]:
        """The children's started/finished events since the last call."""
        events, self._events = self._events, []
        return events

    async def next_events(self) -> list[ChildEvent]:
        """Like :meth:`take_events`, waiting for the next event when there is none (what a
        caller watches while the conversation is idle: a queued child starting, one ending)."""
        while not self._events:
            self._news.clear()
            await self._news.wait()
        return self.take_events()

    async def events_until(self, *waits: asyncio.Future[Any]) -> AsyncIterator[list[ChildEvent]]:
        """The children's events as they come, a batch at a time, until one of ``waits`` (a
        line typed, the next results, a stop) is done."""
        while not any(wait.done() for wait in waits):
            events = asyncio.ensure_future(self.next_events())
            try:
                await asyncio.wait({*waits, events}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                events.cancel()  # an event's wait: cancelled before it took anything
            if events.done() and not events.cancelled():
                yield events.result()

    def cancel(self) -> None:
        """Stop every child (each ends its turn ``interrupted`` and passes it on to its own
        children); queued ones never start."""
        for batch in self._batches.values():
            batch.cancelled = True
            for child in list(batch.running.values()):
                child.cancel()

    def take_back(self, ids: set[str]) -> list[str]:
        """Stop the background delegations ``ids`` whose call was taken back (``/undo``,
        ``/retry``) and drop their results, sent by none; the ids of those still pending."""
        found = sorted(ids & self._batches.keys())
        for batch in [self._batches[name] for name in found]:
            batch.cancelled = batch.taken_back = True
            for child in list(batch.running.values()):
                child.cancel()
        for message in self._arrived():  # ended already: their results wait unsent
            name = next((n for n in ids if message.startswith(RESULTS_HEADER.format(n))), None)
            if name is None:
                self._inbox.put_nowait(message)
            elif name not in found:
                found.append(name)
        return found

    async def aclose(self) -> None:
        """Stop the children and wait for them to end (cancelled after a grace period)."""
        self.cancel()
        tasks = [batch.task for batch in self._batches.values() if batch.task is not None]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=_CLOSE_GRACE)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    async def delegate(self, tasks: list[DelegatedTask]) -> ToolResult:
        """Run ``tasks``: in the background from a root conversation (a handle at once), else
        waiting for them (an orchestrator child); the tool's result."""
        depth, limit = self.owner.depth, self.config.max_depth
        if depth >= limit:
            return ToolResult.error(
                "NOT_AVAILABLE",
                f"delegate_task: a subagent at depth {depth} cannot delegate "
                f"(delegation.max_depth: {limit}); do the task yourself.",
            )
        if (refused := self._over_budget(len(tasks))) is not None:
            return ToolResult.error("INVALID_ARGUMENTS", refused)
        session = self.owner.session
        try:
            grants = [
                child_grant(
                    self.host.registry,
                    session.granted_toolsets,
                    task.toolsets,
                    may_delegate=depth + 1 < limit,
                )
                for task in tasks
            ]
            cwds = [child_cwd(session.cwd, task.cwd) for task in tasks]
        except TaskError as exc:
            return ToolResult.error("INVALID_ARGUMENTS", f"delegate_task: {exc}")
        batch = _Batch(f"d{next(self._ids)}", tasks, grants, cwds)
        self._batches[batch.id] = batch
        if depth == 0:
            batch.task = asyncio.create_task(self._background(batch))
            await self._launched(batch)
            return ToolResult.text(
                f"Delegation {batch.id} started: {len(tasks)} subagent(s) working in the "
                f"background (at most {self.config.max_concurrent} at once). Their results "
                "will come in a later message when all have finished; meanwhile go on with "
                "other work, or end your turn saying what you are waiting for.",
                structured={"delegation": batch.id, "tasks": len(tasks), "status": "started"},
            )
        try:
            outcomes = await self._run(batch)
        finally:
            del self._batches[batch.id]
        return ToolResult.text(
            report(outcomes), structured={"results": [o.to_json() for o in outcomes]}
        )

    def _over_budget(self, count: int) -> str | None:
        """Why ``count`` tasks cannot all be answered and read within the turns left, or
        ``None``: each child makes one request at least, the delegating conversation one to
        read their results (a root one, one more to answer the handle), and so does each
        conversation above it (the budget is the whole tree's)."""
        budget, depth = self.owner.budget, self.owner.depth
        left = budget.remaining_turns()
        ours = 2 if depth == 0 else 1 + depth
        if left is None or count + ours <= left:
            return None
        reading = (
            "one to answer now and one"
            if depth == 0
            else "one, and each conversation above you one,"
        )
        most = left - ours - 1  # the request that calls delegate_task again spends one too
        advice = f"call again with at most {_tasks(most)}, or" if most > 0 else "delegate none:"
        return (
            f"delegate_task: {_tasks(count)}, but this turn has {left} model requests left "
            f"(agent.max_turns: {budget.max_turns}): each subagent needs one at least, and you "
            f"{reading} to read their results; {advice} do the work yourself."
        )

    @staticmethod
    async def _launched(batch: _Batch) -> None:
        """Wait until each child has started or is queued (or the batch has ended): their
        ``ChildStarted`` events then come with the tool's result, before the model answers."""
        launched = asyncio.ensure_future(batch.all_launched.wait())
        try:
            assert batch.task is not None
            await asyncio.wait({launched, batch.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            launched.cancel()

    async def _background(self, batch: _Batch) -> None:
        try:
            outcomes = await self._run(batch)
        finally:
            del self._batches[batch.id]
        if not batch.taken_back:
            self._inbox.put_nowait(f"{RESULTS_HEADER.format(batch.id)}\n\n{report(outcomes)}")

    async def _run(self, batch: _Batch) -> list[ChildOutcome]:
        # gather cancels every child when the caller is cancelled (the tool's timeout, aclose).
        return list(await asyncio.gather(*(self._child(batch, n) for n in range(len(batch.tasks)))))

    async def _child(self, batch: _Batch, index: int) -> ChildOutcome:
        task = batch.tasks[index]
        label = f"{self.prefix}{batch.id}.{index + 1}"
        if self._slots.locked():
            batch.launch(index)  # queued: its start is told when it comes
        try:
            async with self._slots:
                if batch.cancelled:
                    return ChildOutcome(
                        label, task.goal, "interrupted", "", "stopped before it started"
                    )
                try:
                    return await self._converse(batch, index, label)
                except Exception as exc:  # one child's failure is its result, not its siblings'
                    log.exception("subagent %s failed", label)
                    failure = f"{type(exc).__name__}: {exc}"
                    return ChildOutcome(label, task.goal, "failed", "", failure)
        finally:
            batch.ended.add(index)
            batch.launch(index)

    def _prompt(self, label: str) -> ChildPrompt | None:
        prompt = self.host.dispatcher.approvals.prompt_of(self.owner.session)
        if prompt is None:
            return None
        if isinstance(prompt, ChildPrompt):  # a worker asks its orchestrator's person
            return ChildPrompt(prompt.parent, label, prompt.lock)
        return ChildPrompt(prompt, label, self._prompt_lock)

    def _emit(self, event: ChildEvent) -> None:
        self._events.append(event)
        self._news.set()

    async def _converse(self, batch: _Batch, index: int, label: str) -> ChildOutcome:
        task, parent = batch.tasks[index], self.owner.session
        files: list[str] = []
        end: Finished | None = None
        async with self.host.session(
            cwd=batch.cwds[index],
            interactive=parent.interactive,
            granted_toolsets=batch.grants[index],
            prompt=self._prompt(label),
            parent_id=parent.id,
        ) as session:
            if batch.cancelled:
                return ChildOutcome(
                    label, task.goal, "interrupted", "", "stopped before it started"
                )
            child = self.owner.child(session)
            child.delegations.prefix = f"{label}/"
            batch.running[index] = child  # from here, cancel() reaches it
            self._emit(ChildStarted(label, task.goal, session.id))
            batch.launch(index)
            try:
                with listening_to_progress(None):  # the parent's call is not the child's
                    async for event in child.send(task.message()):
                        if isinstance(event, ToolFinished):
                            files += written_files(event, session.cwd, parent.cwd)
                        elif (told := passed_on(event, label, session.id)) is not None:
                            self._emit(told)
                        elif isinstance(event, Finished):
                            end = event
            finally:
                batch.running.pop(index, None)
        outcome = outcome_of(label, task.goal, end, files, session.id)
        self._emit(ChildFinished(label, task.goal, session.id, outcome.status, outcome.text))
        return outcome


def _tasks(count: int) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"

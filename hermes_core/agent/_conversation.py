"""The conversation loop: the model asks, the host runs, until a final answer or a limit.

Each model request is assembled afresh (``Host.assemble``: the tiers and the listing are
re-decided every request, as tools come and go), streamed, and every tool call the model asks
for runs through ``Host.dispatch``: hooks, approvals and the activity log see the real tool, as
for any other caller; the loop adds no second call path. Results go back as tool messages and
the model is asked again, until it answers without a tool call, or the budget
(:mod:`~hermes_core.agent._budget`) runs out, or the user stops the turn
(:meth:`Conversation.cancel`): calls not yet started then end ``INTERRUPTED``. What a
conversation needs of the agent that made it is :class:`ConversationAgent`, which
:class:`~hermes_core.agent._agent.Agent` is.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from hermes_core._config.agent import AgentConfig
from hermes_core.agent._budget import Budget
from hermes_core.agent._compaction import Compaction, overflow_detail
from hermes_core.agent._delegation import STATE_KEY, Delegations
from hermes_core.agent._events import (
    AgentEvent,
    Finished,
    StopReason,
    ToolFinished,
    ToolStarted,
    UsageReport,
    real_tools,
)
from hermes_core.agent._http_errors import overflowed
from hermes_core.agent._request_tools import RequestTools
from hermes_core.agent._requests import RetryPolicy, Stopped, request_events
from hermes_core.agent._session_model import STATE_KEY as MODEL_KEY
from hermes_core.agent._session_model import SessionModel
from hermes_core.agent._transcripts import Transcript, TranscriptStore
from hermes_core.agent._wire import (
    Message,
    ModelError,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelTurn,
    TextDelta,
    ToolSchema,
    Usage,
)

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core._session import Session


class ConversationAgent(Protocol):
    """What a :class:`Conversation` needs of the agent that made it (and hands on to its
    compaction): an :class:`~hermes_core.agent._agent.Agent`. ``model`` and ``provider`` are
    set by :meth:`Conversation.use`."""

    model: ModelSettings
    provider: ModelProvider

    @property
    def host(self) -> Host:
        """The host whose tools the conversation calls."""

    @property
    def limits(self) -> AgentConfig:
        """The ``agent`` section: each turn's budget."""

    @property
    def retry(self) -> RetryPolicy:
        """How a failed model request is retried."""

    @property
    def transcripts(self) -> TranscriptStore | None:
        """Where transcripts go (``None``: none kept)."""

    @property
    def request_tools(self) -> RequestTools:
        """The tools of the requests as schemas, and their estimated tokens."""

    def tool_schemas(self, session: Session) -> tuple[ToolSchema, ...]:
        """The tools of the next request for ``session``."""

    def conversation(
        self,
        session: Session,
        *,
        budget: Budget | None = None,
        parent: str | None = None,
        depth: int = 0,
        job: str | None = None,
    ) -> Conversation:
        """A new conversation in ``session`` (a subagent's: :meth:`Conversation.child`; a cron
        job's run: ``job``)."""


class Conversation:
    """One conversation: its messages, its session and its budget.

    :meth:`send` takes the user's message and yields what happens
    (:data:`~hermes_core.agent._events.AgentEvent`), :class:`Finished` last. :meth:`cancel`,
    from another task or a signal handler, ends the running turn at once, and its subagents'.
    ``delegations`` holds the subagents of ``delegate_task`` and the results of background
    ones, to send as the next message; :meth:`aclose` stops them.
    """

    def __init__(
        self,
        agent: ConversationAgent,
        session: Session,
        budget: Budget,
        *,
        renew_budget: bool = False,
        parent: str | None = None,
        system_prompt: str,
        depth: int = 0,
        job: str | None = None,
    ) -> None:
        self.agent = agent
        self.session = session
        self.budget = budget
        self.budgets = [budget]
        """Every budget the conversation spent, the current one last (``/usage`` adds them up)."""
        self._renew_budget = renew_budget
        self.parent = parent
        self.job = job
        """The cron job this conversation is a run of (its transcript's header names it)."""
        self.system_prompt = system_prompt
        self.depth = depth
        self.delegations = Delegations(self, agent.host, agent.host.config.delegation)
        session.state[STATE_KEY] = self.delegations
        session.state[MODEL_KEY] = self._session_model()
        self.messages: list[Message] = []
        self.usage = Usage()
        self._stop = asyncio.Event()
        self._transcript: Transcript | None = None
        self.compaction = Compaction(self)

    def _session_model(self) -> SessionModel:
        agent = self.agent
        stop, budget = (lambda: self._stop), (lambda: self.budget)
        return SessionModel(
            agent.provider, agent.model, agent.retry, budget, stop=stop, spent=self._spend
        )

    def use_model(self, name: str) -> None:
        """Ask model ``name`` of the same provider from the next request on (``/model``): the
        agent's, so the conversations it starts later too, and the session's side questions;
        the transcript's next message follows a header naming it."""
        self.use(replace(self.agent.model, model=name), self.agent.provider)

    def use(self, settings: ModelSettings, provider: ModelProvider) -> None:
        """Ask ``provider`` with ``settings`` from the next request on, as :meth:`use_model`
        (an ACP session's thinking effort: a provider built for it)."""
        self.agent.model, self.agent.provider = settings, provider
        self.session.state[MODEL_KEY] = self._session_model()
        self._transcript = None  # the next message opens it again, writing that header

    def cancel(self) -> None:
        """Stop the running turn: the model's answer is cut, calls not yet started end
        ``INTERRUPTED``, and :meth:`send` ends with ``stop="interrupted"``."""
        self.session.interrupt()
        self._stop.set()
        self.delegations.cancel()

    @property
    def stop_requested(self) -> asyncio.Event:
        """Set by :meth:`cancel` until the next turn starts: a caller waiting between turns
        (for a background delegation's results) watches it to start no further turn."""
        return self._stop

    def child(self, session: Session) -> Conversation:
        """A subagent's conversation in ``session``: one level deeper, spending this
        conversation's budget."""
        return self.agent.conversation(
            session,
            budget=self.budget,
            parent=self.session.id,
            depth=self.depth + 1,
        )

    async def aclose(self) -> None:
        """Stop the subagents still running and wait for them to end."""
        await self.delegations.aclose()

    def _record(self, message: Message) -> None:
        self.messages.append(message)
        if (transcript := self.transcript()) is not None:
            transcript.add(message)

    def transcript(self) -> Transcript | None:
        """Where what the conversation says is appended (none when transcripts are off): its
        header written first, once, so a file deleted meanwhile is written again whole."""
        store = self.agent.transcripts
        if store is None:
            return None
        if self._transcript is None:
            self._transcript = transcript = store.open(self.session.id)
            settings, cwd = self.agent.model, str(self.session.cwd)
            transcript.start(
                self.session.id,
                model=settings.model,
                parent=self.parent,
                cwd=cwd,
                job=self.job,
                effort=settings.reasoning_effort,
            )
        return self._transcript

    def _finished(self, text: str, stop: StopReason, detail: str = "") -> Finished:
        return Finished(text, stop, self.usage, self.budget.turns, detail, self.budget.usage)

    async def send(self, text: str) -> AsyncIterator[AgentEvent]:
        """Add the user's ``text`` and run the turn: model requests and tool calls until a
        final answer, a limit, the user's stop or a model error; :class:`Finished` is last.
        The limits are the turn's: a conversation that made its own budget starts a fresh one,
        unless ``text`` is the results of its delegations (they go on with the budget of the
        turn that delegated); one given a budget spends that one."""
        self._stop = asyncio.Event()
        if self._renew_budget and not self.delegations.gave(text):
            # the person's message: a turn of its own (subagents running keep their budget)
            self.budget = Budget.from_config(self.agent.limits)
            self.budgets.append(self.budget)
        self.session.next_turn()
        self._record(Message("user", text))
        said = ""
        compacted = False  # a request refused for its size: once, then sent again
        while True:
            for child_event in self.delegations.take_events():
                yield child_event
            exhausted = self.budget.exhausted()
            if exhausted is not None:
                yield self._finished(said, *exhausted)
                return
            if self._stop.is_set():
                yield self._finished(said, "interrupted", "stopped by the user")
                return
            turn: ModelTurn | None = None
            streamed: list[str] = []
            tools = self.agent.tool_schemas(self.session)
            if self.compaction.due(tools):
                async for step in self.compaction.compact("size"):
                    yield step
                if self.budget.exhausted() is not None or self._stop.is_set():
                    continue  # the summary spent the turn's last, or the person stopped it
            request = ModelRequest(
                model=self.agent.model.model,
                system=self.system_prompt,
                messages=tuple(self.messages),
                tools=tools,
                max_tokens=self.agent.model.max_output_tokens,
            )
            self.budget.spend_turn()
            deadline = self._deadline()
            try:
                async for event in request_events(
                    self.agent.provider,
                    request,
                    self.agent.retry,
                    self._stop,
                    deadline,
                    self.agent.model.provider,
                    self.agent.model.base_url,
                ):
                    if isinstance(event, TextDelta):
                        streamed.append(event.text)
                        yield event
                    elif isinstance(event, ModelTurn):
                        turn = event
                    else:
                        yield event
            except Stopped as stopped:
                partial = "".join(streamed)
                ending: tuple[StopReason, str] = (
                    ("interrupted", "stopped by the user")
                    if stopped.reason == "interrupted"
                    else self.budget.out_of_time()
                )
                self._keep_cut(partial, ending[1])
                yield self._finished(partial or said, *ending)
                return
            except ModelError as error:
                partial = "".join(streamed)  # the person saw it stream before the failure
                if overflowed(error) and not partial and not compacted:
                    compacted = True
                    async for step in self.compaction.refused(tools):
                        yield step
                    if self.compaction.shortened or self._stop.is_set():
                        continue
                self._keep_cut(partial, "the model request failed")
                size = self.agent.model.context_length
                why = overflow_detail(error, size) if overflowed(error) else str(error)
                yield self._finished(partial or said, "error", why)
                return
            if turn is None:
                yield self._finished(said, "error", "the model's answer ended without a turn")
                return
            self._spend(turn.usage or Usage(unreported=1))  # answered, counted by no server
            if turn.usage is not None:
                yield UsageReport(turn.usage, self.usage)
            self.compaction.counted(request, turn.usage)
            message, compacted = turn.message, False
            self._record(message)
            said = message.content or said
            if not message.tool_calls:
                cut = turn.stop_reason == "max_tokens"
                yield self._finished(message.content, "answer", self._cut() if cut else "")
                return
            for call in message.tool_calls:
                async for step in self._run_call(call):
                    yield step
                for child_event in self.delegations.take_events():
                    yield child_event

    async def compact(self) -> AsyncIterator[AgentEvent]:
        """Compact now (``/compact``), between turns: all but the last exchange replaced by a
        summary, spending a fresh budget when turns do; no :class:`Compacted` when there is
        nothing to compact or :meth:`cancel` stopped it."""
        self._stop = asyncio.Event()
        if self._renew_budget:
            self.budget = Budget.from_config(self.agent.limits)
            self.budgets.append(self.budget)
        async for event in self.compaction.compact("asked"):
            yield event

    def _keep_cut(self, partial: str, why: str) -> None:
        """Keep an answer cut while it streamed as far as it came, saying so: the model reads
        the history later and must not take it for an answer it finished."""
        if partial:
            self._record(Message("assistant", f"{partial}\n\n[cut off here: {why}]"))

    def _cut(self) -> str:
        """Why an answer stopped short: the model reached ``model.max_output_tokens``."""
        cap = self.agent.model.max_output_tokens
        return (
            f"the answer was cut at model.max_output_tokens ({cap} tokens): "
            "raise it for longer ones"
        )

    def _spend(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.budget.spend(usage)

    def _deadline(self) -> float | None:
        left = self.budget.remaining_seconds()
        return None if left is None else asyncio.get_running_loop().time() + left

    async def _run_call(self, call: ModelToolCall) -> AsyncIterator[AgentEvent]:
        tools = real_tools(call)
        yield ToolStarted(call, tools)
        result = await self.agent.host.dispatch(call.name, call.arguments, self.session)
        text = result.model_text
        self._record(
            Message("tool", text, tool_call_id=call.id, name=call.name, is_error=result.is_error)
        )
        yield ToolFinished(call, tools, text, result.error_code if result.is_error else None)

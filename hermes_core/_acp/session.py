"""One ACP session: a hermes conversation whose events become ``session/update`` notifications.

A ``session/prompt`` runs one turn of the conversation (:meth:`AcpSession.prompt`): the model's
text streams as ``agent_message_chunk``, its thinking (a reasoning model's, when the provider
streams it) as ``agent_thought_chunk``; each tool call is a ``tool_call`` (``pending``, with
its kind, locations and what it will do) then a ``tool_call_update`` ``in_progress`` as it is
handed to ``Host.dispatch`` (where hooks, approvals and the activity log see the real tool),
its tool's progress reports shown in it as they come, then ``completed`` or ``failed`` with
its text; each model request's tokens are a ``usage_update``; a retry is said as an
``agent_thought_chunk``; each subagent of ``delegate_task`` is a tool call of its own. Every
update is sent before the prompt is answered.

The session's slash commands (:data:`COMMANDS`, ``/compact`` and ``/usage``: the editor has
its own stop, new session and help, and its own view of the messages, which ``/retry`` and
``/undo`` would leave out of step) are advertised with an ``available_commands_update``
(:meth:`AcpSession.advertise`); a prompt that is one runs it instead of a turn.

Prompts on one session run one at a time (a lock, in arrival order): two loops never share a
history, and the editor's usual "cancel, then send the new message" waits for the cancelled
turn to end instead of being refused. ``session/cancel`` stops the running turn only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core._acp.toolcalls import (
    call_start,
    child_call_id,
    command_lines,
    fenced,
    result_content,
)
from hermes_core._progress import ProgressReport, listening_to_progress, progress_sender
from hermes_core._shown import printable
from hermes_core.agent._events import (
    AgentEvent,
    ChildCompacted,
    ChildFinished,
    ChildStarted,
    Compacted,
    Finished,
    Retrying,
    ToolFinished,
    ToolStarted,
    UsageReport,
)
from hermes_core.agent._settling import send_until_settled
from hermes_core.agent._wire import TextDelta, ThinkingDelta

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import PromptResponse, StopReason

    from hermes_core._acp.config_options import SessionChoices
    from hermes_core._acp.toolcalls import ToolContent
    from hermes_core._session import Session
    from hermes_core.agent._conversation import Conversation

STOP_REASONS: Final[dict[str, StopReason]] = {
    "answer": "end_turn",
    "max_tokens": "max_tokens",
    "max_turns": "max_turn_requests",
    "max_seconds": "max_turn_requests",
    "interrupted": "cancelled",
}
"""``Finished.stop`` as an ACP stop reason; ``error`` is a JSON-RPC error instead."""

COMMANDS: Final = {
    "compact": "replace all but the last exchange by a summary the model writes, to make room "
    "in the model's context window",
    "usage": "this conversation's model requests and tokens, and how full its context is",
}
"""The slash commands of an ACP session, by name (without the slash), and what each does."""


class ModelFailed(Exception):
    """The turn ended with ``stop="error"``: the model request failed for good."""


@dataclass
class TurnState:
    """What the permission prompt of a session needs from the running turn: the ACP id of the
    tool call being run and the cancel of the running prompt."""

    call_id: str = ""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


def prompt_text(blocks: Sequence[Any]) -> str:
    """The user's message from ACP content blocks: text as is, embedded text resources (the
    files an editor attaches) in a ``<context>`` element naming their URI, links by URI."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f'<context uri="{resource.uri}">\n{text}\n</context>')
            else:
                parts.append(f"[attached: {resource.uri} (binary, not shown)]")
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        else:
            parts.append(f"[{kind} omitted: hermes reads text only]")
    return "\n\n".join(parts)


def not_shown_again(result: str, outputs: Sequence[str]) -> str:
    """A finished call's ``result`` less the output an embedded terminal showed, which it
    starts with (a command's result is its output, then its exit code and any note on how it
    ended, which the call keeps). A result that does not start with it (a tool that ran
    commands in the terminal and says something else) is kept whole."""
    for output in outputs:
        shown = output.rstrip("\n")
        if result.startswith(shown):
            result = result[len(shown) :].lstrip("\n")
    return result


class AcpSession:
    """A hermes :class:`~hermes_core._session.Session` and its conversation, served to one
    ACP client. ``context_length`` is the model's (the ``size`` of ``usage_update``);
    ``choices`` its config options (the editor's model and thinking-level pickers)."""

    def __init__(
        self,
        client: Client,
        session: Session,
        conversation: Conversation,
        state: TurnState,
        *,
        context_length: int,
        choices: SessionChoices,
    ) -> None:
        self.client = client
        self.choices = choices
        self.session = session
        self.conversation = conversation
        self.state = state
        self.context_length = context_length
        self._lock = asyncio.Lock()
        self._numbers = itertools.count(1)
        self._shown: dict[str, list[ToolContent]] = {}
        self._commands: dict[str, frozenset[str]] = {}
        self._outputs: dict[str, list[str]] = {}
        self._progress: contextlib.AsyncExitStack | None = None

    @property
    def id(self) -> str:
        """The session id, hermes' and ACP's alike (the transcript's file name)."""
        return self.session.id

    @property
    def cwd(self) -> Path:
        """The session's working directory, which bounds its file and terminal tools."""
        return self.session.cwd

    @property
    def busy(self) -> bool:
        """Whether a prompt turn runs (or a command) on the session."""
        return self._lock.locked()

    def cancel(self) -> None:
        """Stop the running turn, if any (a waiting prompt still runs after it)."""
        if self._lock.locked():
            self.state.cancelled.set()
            self.conversation.cancel()

    async def advertise(self) -> None:
        """Tell the client the session's slash commands (:data:`COMMANDS`)."""
        from acp.schema import AvailableCommand, AvailableCommandsUpdate

        commands = [
            AvailableCommand(name=name, description=what) for name, what in COMMANDS.items()
        ]
        await self._update(
            AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            )
        )

    async def prompt(self, blocks: Sequence[Any]) -> PromptResponse:
        """Run one turn for ``blocks`` (or the command they are), streaming updates; the stop
        reason. A model that failed for good raises :class:`ModelFailed`."""
        from acp.schema import PromptResponse

        async with self._lock:
            self.state.cancelled = asyncio.Event()
            if prompt_text(blocks).strip() == "/compact":
                return await self._compact()
            if prompt_text(blocks).strip() == "/usage":
                return await self._usage()
            finished: Finished | None = None
            # Background delegations' results are sent as the next message when they arrive:
            # an editor has no turn the agent starts, so the prompt lasts until they have.
            events = send_until_settled(self.conversation, prompt_text(blocks))
            try:
                async for event in events:
                    if isinstance(event, Finished):
                        finished = event
                    await self._report(event)
            finally:
                await self._end_progress()
                # Also when an update cannot be sent (the client left mid-turn): the loop's
                # own cleanup runs now, not when the generator is collected.
                close = getattr(events, "aclose", None)
                if close is not None:
                    await close()
        assert finished is not None  # the loop always ends with Finished
        if finished.stop == "error":
            raise ModelFailed(finished.detail)
        # No ``usage`` in the answer: the schema marks it unstable, and hermes advertises no
        # unstable part of the protocol (the tokens went out as usage_update).
        cut = finished.stop == "answer" and finished.detail  # model.max_output_tokens cut it
        return PromptResponse(stop_reason="max_tokens" if cut else STOP_REASONS[finished.stop])

    async def _compact(self) -> PromptResponse:
        """``/compact``: the conversation compacted now, as ``hermes chat``'s (a cancel stops
        it, nothing changed); the compaction told as a thought, or that there was nothing to
        compact."""
        from acp import update_agent_message_text
        from acp.schema import PromptResponse

        compacted = False
        async for event in self.conversation.compact():
            compacted = compacted or isinstance(event, Compacted)
            await self._report(event)
        if self.state.cancelled.is_set():
            return PromptResponse(stop_reason="cancelled")
        if not compacted:
            await self._update(
                update_agent_message_text(
                    "Nothing to compact yet: only the last exchange is in the conversation."
                )
            )
        return PromptResponse(stop_reason="end_turn")

    async def _usage(self) -> PromptResponse:
        """``/usage``: the conversation's requests, tokens and context, as ``hermes chat``'s
        (:class:`~hermes_core.agent._conversation_usage.ConversationUsage`), as a message."""
        from acp import update_agent_message_text
        from acp.schema import PromptResponse

        from hermes_core.agent._conversation_usage import ConversationUsage

        lines = ConversationUsage.of(self.conversation).lines()
        text = "".join(f"{line[0].upper()}{line[1:]}.\n" for line in lines)
        await self._update(update_agent_message_text(text))
        return PromptResponse(stop_reason="end_turn")

    async def _update(self, update: Any) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    async def _report(self, event: AgentEvent) -> None:
        from acp import update_agent_message_text, update_agent_thought_text

        if isinstance(event, TextDelta):
            await self._update(update_agent_message_text(event.text))
        elif isinstance(event, ThinkingDelta):  # the editor's folded thinking area
            await self._update(update_agent_thought_text(event.text))
        elif isinstance(event, ToolStarted):
            await self._started(event)
        elif isinstance(event, ToolFinished):
            await self._finished(event)
        elif isinstance(event, UsageReport):
            from acp.schema import UsageUpdate

            used = event.usage.input_tokens + event.usage.output_tokens
            await self._update(
                UsageUpdate(session_update="usage_update", used=used, size=self.context_length)
            )
        elif isinstance(event, Retrying):
            await self._update(
                update_agent_thought_text(
                    f"The model request failed ({event.error}); trying again in "
                    f"{event.wait:g} s (attempt {event.attempt} of {event.attempts}).\n"
                )
            )
        elif isinstance(event, ChildStarted | ChildFinished):
            await self._child(event)
        elif isinstance(event, ChildCompacted):
            said = f"Subagent {event.label}: {event.compacted.said}"
            await self._update(update_agent_thought_text(f"{said}.\n"))
        elif isinstance(event, Compacted):
            said = event.said
            await self._update(update_agent_thought_text(f"{said[0].upper()}{said[1:]}.\n"))
        elif event.stop not in ("interrupted", "error") and event.detail:
            await self._update(update_agent_thought_text(f"\nStopped: {event.detail}.\n"))

    async def _child(self, event: ChildStarted | ChildFinished) -> None:
        """A subagent of ``delegate_task`` as a tool call of its own: started, then finished
        with its answer (its approvals name it: :func:`child_call_id`)."""
        from acp import text_block, tool_content
        from acp.schema import ToolCallProgress, ToolCallStart

        call_id = child_call_id(event.label)
        if isinstance(event, ChildStarted):
            await self._update(
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=call_id,
                    title=printable(f"subagent {event.label}: {event.goal}"),
                    kind="think",
                    status="in_progress",
                )
            )
            return
        await self._update(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="completed" if event.status.startswith("completed") else "failed",
                # The subagent's answer is Markdown a model wrote: shown as Markdown.
                content=[tool_content(text_block(f"[{event.status}]\n{event.text}"))],
            )
        )

    async def aclose(self) -> None:
        """Stop the conversation's subagents and wait for them to end, then close the
        providers built for its efforts."""
        await self.conversation.aclose()
        await self.choices.aclose()

    async def show(self, item: ToolContent) -> None:
        """Add ``item`` (an embedded terminal) to what the running tool call shows, now and
        when it ends. The editor shows a terminal with its command and output, so the call's
        ``$ cmd`` line goes: shown beside it, the command would be there twice."""
        from acp.schema import ToolCallProgress

        shown = self._shown.setdefault(self.state.call_id, [])
        if item.type == "terminal":
            lines = self._commands.get(self.state.call_id, frozenset())
            shown[:] = [
                kept
                for kept in shown
                if kept.type != "content" or getattr(kept.content, "text", None) not in lines
            ]
        shown.append(item)
        await self._update(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=self.state.call_id,
                content=list(shown),
            )
        )

    def showed(self, output: str) -> None:
        """Note ``output``, what a terminal embedded in the running tool call showed (the
        editor keeps showing it after the terminal is released): the call's end does not show
        it again below it."""
        self._outputs.setdefault(self.state.call_id, []).append(output)

    def _acp_id(self, call_id: str) -> str:
        # A model's ids repeat across requests (call_1 every turn): ACP's must not.
        return f"{next(self._numbers)}-{call_id}"

    async def _started(self, event: ToolStarted) -> None:
        from acp.schema import ToolCallProgress

        acp_id = self._acp_id(event.call.id)
        self.state.call_id = acp_id
        start = call_start(self.cwd, event.call, event.tools, acp_id, "pending")
        # What the call does (a diff, a command) stays shown as it runs and once it has ended,
        # as a session loaded from its transcript shows it.
        self._shown[acp_id] = list(start.content or [])
        self._commands[acp_id] = command_lines(event.call)
        await self._update(start)
        await self._update(
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=acp_id, status="in_progress"
            )
        )
        await self._listen_to_progress(acp_id)

    async def _listen_to_progress(self, acp_id: str) -> None:
        """Until the call ends, the reports of its tool (``report_progress``: a command's
        output so far, an MCP server's progress, a delegation's children) are shown in it.

        The listener is bound in this task's context, which the loop's generator runs in when
        it dispatches the call; :meth:`_end_progress` unbinds it (the last report sent
        first)."""
        stack = contextlib.AsyncExitStack()

        async def send(report: ProgressReport) -> None:
            await self._progressed(acp_id, report)

        listener = await stack.enter_async_context(progress_sender(send, min_interval=0.25))
        stack.enter_context(listening_to_progress(listener))
        self._progress = stack

    async def _end_progress(self) -> None:
        stack, self._progress = self._progress, None
        if stack is not None:
            await stack.aclose()

    async def _progressed(self, acp_id: str, report: ProgressReport) -> None:
        from acp import text_block, tool_content
        from acp.schema import ToolCallProgress

        if report.message:
            said = report.message
        elif report.total:
            said = f"{report.progress:g} of {report.total:g}"
        else:
            said = f"{report.progress:g}"
        shown = [*self._shown.get(acp_id, []), tool_content(text_block(fenced(said)))]
        await self._update(
            ToolCallProgress(session_update="tool_call_update", tool_call_id=acp_id, content=shown)
        )

    async def _finished(self, event: ToolFinished) -> None:
        from acp.schema import ToolCallProgress

        await self._end_progress()
        self._commands.pop(self.state.call_id, None)
        text = not_shown_again(event.text, self._outputs.pop(self.state.call_id, []))
        content = [*self._shown.pop(self.state.call_id, []), *result_content(text)]
        await self._update(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=self.state.call_id,
                status="failed" if event.is_error else "completed",
                content=content or None,
                raw_output={"error_code": event.error_code} if event.is_error else None,
            )
        )

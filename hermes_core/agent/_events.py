"""What a conversation reports while it runs: the events a UI shows and ``hermes run --json``
writes, one JSON object per line.

:class:`~hermes_core.agent._wire.TextDelta` (the model's text as it streams) and
:class:`~hermes_core.agent._wire.ThinkingDelta` (a reasoning model's thinking, when its
provider streams it: never in the history nor the answer) come from the provider unchanged;
the others are the loop's: a tool call started and finished (naming the real tools behind
``tool_call``), the usage of each model request, a retry, a subagent of ``delegate_task``
started, compacted or finished, the conversation compacted, and :class:`Finished`, always the
last, saying why the turn ended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core._tool_call_entries import ROUTER, carried_calls
from hermes_core.agent._wire import ModelToolCall, TextDelta, ThinkingDelta, Usage

StopReason = Literal["answer", "max_turns", "max_tokens", "max_seconds", "interrupted", "error"]
"""Why a turn ended: a final answer, a limit (each named), the user's stop, or an error."""


def bridged_calls(name: str, arguments: Any) -> list[tuple[str, Any]] | None:
    """The calls a bridge ``tool_call`` carries, as the bridge reads them in every shape it
    accepts (:func:`hermes_core._tool_call_entries.carried_calls`): each one's name and its
    arguments as sent. ``None`` for another tool, or for arguments the bridge would refuse."""
    entries = carried_calls(name, arguments)
    return None if entries is None else [(entry.name, entry.arguments) for entry in entries]


def real_tools(call: ModelToolCall) -> tuple[str, ...]:
    """The tools a call runs: its own name, or for the bridge's ``tool_call`` the names of the
    calls it carries (what hooks, approvals and the activity log see too)."""
    if call.name != ROUTER:
        return (call.name,)
    try:
        arguments = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return (call.name,)
    calls = bridged_calls(call.name, arguments)
    return tuple(name for name, _ in calls) if calls else (call.name,)


@dataclass(frozen=True)
class ToolStarted:
    """The model asked for a tool call, which now runs through ``Host.dispatch``."""

    call: ModelToolCall
    tools: tuple[str, ...]
    """The real tools (the bridge's ``tool_call`` names the deferred tools it runs)."""


@dataclass(frozen=True)
class ToolFinished:
    """A tool call ended: its text as the model will read it, and its error code if it failed
    (``INTERRUPTED`` for calls the user's stop kept from starting)."""

    call: ModelToolCall
    tools: tuple[str, ...]
    text: str
    error_code: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether the call failed."""
        return self.error_code is not None


@dataclass(frozen=True)
class UsageReport:
    """The tokens of one model request, and of the conversation so far."""

    usage: Usage
    total: Usage


@dataclass(frozen=True)
class Retrying:
    """A model request failed in a way that may pass (429, 5xx, a lost connection): it is sent
    again after ``wait`` seconds (attempt ``attempt`` of ``attempts``)."""

    error: str
    wait: float
    attempt: int
    attempts: int


CompactionReason = Literal["size", "overflow", "asked"]
"""Why a conversation was compacted: the next request's estimate passed ``agent.compact_at``,
the server refused a request for its size, or the person asked (``/compact``)."""


@dataclass(frozen=True)
class Compacted:
    """The older part of the conversation, ``messages`` messages of about ``tokens`` tokens,
    was replaced by a summary of about ``summary_tokens`` the model wrote; or, when
    ``dropped`` says why no summary could be written, by a note that they were left out."""

    messages: int
    tokens: int
    summary_tokens: int
    reason: CompactionReason
    dropped: str = ""

    @property
    def said(self) -> str:
        """What happened, in words (``hermes chat`` writes it after ``hermes: ``)."""
        about = f"about {self.tokens:,} tokens"
        if self.dropped:
            return (
                f"dropped the {self.messages} oldest messages ({about}) of the conversation: "
                f"no summary of them could be written ({self.dropped})"
            )
        return (
            f"compacted {self.messages} messages ({about}) into a summary of "
            f"{self.summary_tokens:,} tokens"
        )


@dataclass(frozen=True)
class Finished:
    """The end of a turn: ``text`` is the final answer (or what was said before a limit or a
    stop: the partial answer), ``stop`` why it ended, ``detail`` the limit or error in words
    (for an ``answer``, empty unless ``model.max_output_tokens`` cut it). ``usage`` is the
    conversation's own tokens so far; ``turns`` and ``turn_usage`` are the model requests and
    tokens of the turn's budget, its subagents' included (what its limits count)."""

    text: str
    stop: StopReason
    usage: Usage
    turns: int
    detail: str = ""
    turn_usage: Usage = field(default_factory=Usage)

    @property
    def complete(self) -> bool:
        """Whether the model gave its final answer (no limit, stop or error cut it short)."""
        return self.stop == "answer"


@dataclass(frozen=True)
class ChildStarted:
    """A subagent of ``delegate_task`` started (``label``: ``d1.2``, task 2 of delegation
    ``d1``; a worker of an orchestrator child adds its own part, ``d1.2/d1.1``)."""

    label: str
    goal: str
    session_id: str


@dataclass(frozen=True)
class ChildFinished:
    """A subagent ended: ``status`` as its parent reads it (``completed``, ``completed with
    timeout``, ``stopped at a limit``, ``interrupted``, ``failed``) and its answer."""

    label: str
    goal: str
    session_id: str
    status: str
    text: str


@dataclass(frozen=True)
class ChildCompacted:
    """A subagent's conversation was compacted (``compacted`` says how); ``label`` names the
    subagent as :class:`ChildStarted`'s does."""

    label: str
    session_id: str
    compacted: Compacted


ChildEvent = ChildStarted | ChildFinished | ChildCompacted
"""What a conversation's subagents report to it (:class:`~hermes_core.agent.Delegations`)."""


def passed_on(event: object, label: str, session_id: str) -> ChildEvent | None:
    """What a parent reports of an event of its child ``label``: the child's compaction,
    labelled with it; its own children's events as they are; ``None`` for the rest."""
    if isinstance(event, Compacted):
        return ChildCompacted(label, session_id, event)
    return event if isinstance(event, ChildStarted | ChildFinished | ChildCompacted) else None


AgentEvent = (
    TextDelta
    | ThinkingDelta
    | ToolStarted
    | ToolFinished
    | UsageReport
    | Retrying
    | ChildStarted
    | ChildFinished
    | ChildCompacted
    | Compacted
    | Finished
)
"""What :meth:`~hermes_core.agent._conversation.Conversation.send` yields."""


def event_json(event: AgentEvent) -> dict[str, Any]:
    """``event`` as the JSON object ``hermes run --json`` writes."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ThinkingDelta):
        return {"type": "thinking", "text": event.text}
    if isinstance(event, ToolStarted):
        return {
            "type": "tool_call",
            "id": event.call.id,
            "name": event.call.name,
            "tools": list(event.tools),
            "arguments": event.call.arguments,
        }
    if isinstance(event, ToolFinished):
        return {
            "type": "tool_result",
            "id": event.call.id,
            "name": event.call.name,
            "tools": list(event.tools),
            "is_error": event.is_error,
            "error_code": event.error_code,
            "text": event.text,
        }
    if isinstance(event, UsageReport):
        return {
            "type": "usage",
            "input_tokens": event.usage.input_tokens,
            "output_tokens": event.usage.output_tokens,
            "cached_tokens": event.usage.cached_tokens,
            "total_tokens": event.total.total,
        }
    if isinstance(event, ChildStarted):
        return {
            "type": "child_started",
            "label": event.label,
            "goal": event.goal,
            "session": event.session_id,
        }
    if isinstance(event, ChildFinished):
        return {
            "type": "child_finished",
            "label": event.label,
            "goal": event.goal,
            "status": event.status,
            "text": event.text,
            "session": event.session_id,
        }
    if isinstance(event, ChildCompacted):
        return {
            "type": "child_compacted",
            "label": event.label,
            **_compacted(event.compacted),
            "session": event.session_id,
        }
    if isinstance(event, Compacted):
        return {"type": "compacted", **_compacted(event)}
    if isinstance(event, Retrying):
        return {
            "type": "retry",
            "error": event.error,
            "wait": event.wait,
            "attempt": event.attempt,
            "attempts": event.attempts,
        }
    return {
        "type": "final",
        "text": event.text,
        "stop": event.stop,
        "detail": event.detail,
        "turns": event.turns,
        **_counts(event.usage, ""),
        **_counts(event.turn_usage, "turn_"),
        "turn_unreported": event.turn_usage.unreported,
    }


def _counts(usage: Usage, prefix: str) -> dict[str, int | None]:
    """``usage``'s token counts; ``None`` each when its requests were answered with none (a
    0 there would be a count nobody made)."""
    unknown = usage.unreported > 0 and usage.total == 0
    keys = ("input_tokens", "output_tokens", "cached_tokens")
    return {prefix + key: None if unknown else getattr(usage, key) for key in keys}


def _compacted(event: Compacted) -> dict[str, Any]:
    return {
        "messages": event.messages,
        "tokens": event.tokens,
        "summary_tokens": event.summary_tokens,
        "reason": event.reason,
        "dropped": event.dropped,
    }

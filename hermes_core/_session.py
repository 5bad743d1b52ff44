"""A conversation's state as the tool layer sees it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(eq=False)
class Session:
    """One agent conversation: who it is, where it works, what it may use, where it is.

    ``granted_toolsets`` of ``None`` grants every enabled toolset; a set restricts the session to
    those toolsets (a tool outside the grant is invisible to search, describe and call).
    ``interactive`` records whether a person can answer (the CLI sets it when it attaches a
    terminal); it is informational: who answers approvals is the session's prompt transport,
    which the approval layer keeps (``host.new_session(prompt=...)``). ``turn`` counts model
    turns; per-turn limits (the search loop breaker) start again when it advances.

    A session holds conversation state only; what the pipeline remembers about it (approval
    answers, searches this turn) lives in the layer that owns it, keyed by the session. Sessions
    compare by identity. ``parent_id`` is the id of the session that delegated this one (a
    subagent's session; ``None`` for a conversation a person or a client started): hooks see it
    on the session, the activity log on each record.
    """

    cwd: Path
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    parent_id: str | None = None
    granted_toolsets: frozenset[str] | None = None
    interactive: bool = False
    turn: int = 0
    interrupted: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    """Per-session data owned by tools (the todo list, background processes...)."""

    def next_turn(self) -> None:
        """Start a new model turn: per-turn limits start again, the interrupt is cleared."""
        self.turn += 1
        self.interrupted = False

    def interrupt(self) -> None:
        """The user's stop: calls not yet started are not run."""
        self.interrupted = True

    def grants(self, toolset: str) -> bool:
        """Whether a tool of ``toolset`` is in this session's grant."""
        return self.granted_toolsets is None or toolset in self.granted_toolsets

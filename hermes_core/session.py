"""A conversation's state as the tool layer sees it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.approvals.prompt import PromptTransport


@dataclass
class Session:
    """One agent conversation.

    ``granted_toolsets`` of ``None`` grants every enabled toolset; a set restricts the session to
    those toolsets (a tool outside the grant is invisible to search, describe and call).
    ``interactive`` records whether a person can answer (the CLI and the host set it when they
    attach a terminal); it is informational: the dispatcher never reads it, because the
    ``prompt`` transport decides (its own ``interactive`` property says whether anyone answers;
    ``prompt=None``: the configured ``approvals.non_interactive`` answer applies).
    ``turn`` counts model turns; per-turn counters (the search loop breaker) reset when it
    advances. ``approved_for_session`` holds the patterns a "session" answer approved.
    """

    cwd: Path
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    granted_toolsets: frozenset[str] | None = None
    interactive: bool = False
    turn: int = 0
    interrupted: bool = False
    approved_for_session: set[str] = field(default_factory=set)
    searches_this_turn: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    """Per-session data owned by tools (the todo list, background processes...)."""
    prompt: PromptTransport | None = None

    def next_turn(self) -> None:
        """Start a new model turn: per-turn counters reset, the interrupt is cleared."""
        self.turn += 1
        self.searches_this_turn = 0
        self.interrupted = False

    def interrupt(self) -> None:
        """The user's stop: calls not yet started are not run."""
        self.interrupted = True

    def grants(self, toolset: str) -> bool:
        """Whether a tool of ``toolset`` is in this session's grant."""
        return self.granted_toolsets is None or toolset in self.granted_toolsets

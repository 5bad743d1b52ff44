"""What the approval layer remembers: who answers for each session, and what was approved.

Per session (keyed by the :class:`~hermes_core._session.Session` itself, forgotten with it): its
prompt transport and the patterns a *session* answer approved. For everyone: the patterns an
*always* answer approved, which are also written to ``approvals.allow`` in ``config.yaml``
(keeping the user's comments). The dispatcher asks; this module keeps the answers.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio.to_thread

from hermes_core._approvals.policy import GlobRules, call_subjects

if TYPE_CHECKING:
    from hermes_core._approvals.prompt import Answer, PromptTransport
    from hermes_core._paths import Environment
    from hermes_core._session import Session
    from hermes_core._specs import ToolCall

__all__ = ["ApprovalMemory", "SessionApprovals"]

log = logging.getLogger(__name__)


@dataclass
class SessionApprovals:
    """One session's part: its prompt transport (``None``: the non-interactive answer) and the
    patterns its *session* answers approved."""

    prompt: PromptTransport | None = None
    approved: set[str] = field(default_factory=set)


class ApprovalMemory:
    """The answers of every session of one dispatcher.

    ``allow_rules`` are the ``approvals.allow`` globs in effect; an *always* answer adds to them
    and to ``config.yaml`` (in ``env``'s configuration file).
    """

    def __init__(self, env: Environment, allow_rules: GlobRules) -> None:
        self.env = env
        self.allow_rules = allow_rules
        self._sessions: weakref.WeakKeyDictionary[Session, SessionApprovals] = (
            weakref.WeakKeyDictionary()
        )

    def of(self, session: Session) -> SessionApprovals:
        """``session``'s part (empty the first time)."""
        found = self._sessions.get(session)
        if found is None:
            found = self._sessions[session] = SessionApprovals()
        return found

    def attach(self, session: Session, prompt: PromptTransport | None) -> None:
        """Who answers ``session``'s approvals from now on."""
        self.of(session).prompt = prompt

    def prompt_of(self, session: Session) -> PromptTransport | None:
        """``session``'s prompt transport, or ``None``."""
        found = self._sessions.get(session)
        return found.prompt if found is not None else None

    def approved_in_session(self, call: ToolCall, session: Session) -> bool:
        """Whether a *session* answer of ``session`` approved this call (one of its subjects:
        the tool name and, for shell tools, ``<tool>:<command>``)."""
        found = self._sessions.get(session)
        if found is None or not found.approved:
            return False
        # Remembered patterns are escaped globs: match them as globs, as "always" ones are.
        return GlobRules(found.approved).match(call_subjects(call), exact_only=True) is not None

    async def remember(self, answer: Answer, pattern: str, session: Session) -> None:
        """Keep what ``answer`` approved: a *session* answer for ``session``, an *always* one
        for every session and in ``approvals.allow`` of ``config.yaml``."""
        if answer == "session":
            self.of(session).approved.add(pattern)
        elif answer == "always":
            self.of(session).approved.add(pattern)
            self.allow_rules.add(pattern)
            try:
                await anyio.to_thread.run_sync(self._write_allow, pattern)
            except Exception as exc:
                log.warning("could not save %r to approvals.allow in config.yaml: %s", pattern, exc)

    def _write_allow(self, pattern: str) -> None:
        from hermes_core._config import edit_config

        with edit_config(self.env) as document:
            document.add_to_list("approvals.allow", pattern)

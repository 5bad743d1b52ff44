"""A subagent's approval prompts go up to its parent's: the person (a terminal, ``serve``'s
client) is asked, told which subagent asks, instead of the call being denied because a
background child has no terminal of its own.

Siblings share one lock, so two children never ask at once on one terminal; the wait for the
lock counts in the approval's timeout.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from hermes_core._approvals.prompt import Answer, ApprovalRequest, PromptTransport


class ChildPrompt:
    """The prompt transport of a subagent's session: its parent's ``prompt``, each request's
    reason prefixed with ``asked by <label>``."""

    def __init__(self, parent: PromptTransport, label: str, lock: asyncio.Lock) -> None:
        self.parent = parent
        self.label = label
        self.lock = lock
        """Held while one child asks: shared by every child of one tree."""

    @property
    def interactive(self) -> bool:
        """Whether a person answers the parent's prompt."""
        return bool(getattr(self.parent, "interactive", False))

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """Ask the parent's prompt, once no sibling is asking, within ``timeout`` seconds."""
        reason = f"asked by {self.label}" + (f": {request.reason}" if request.reason else "")
        labelled = replace(request, reason=reason)
        started = time.monotonic()
        try:
            await asyncio.wait_for(self.lock.acquire(), timeout)
        except TimeoutError:
            return None
        try:
            left = max(0.0, timeout - (time.monotonic() - started))
            return await self.parent.ask(labelled, left)
        finally:
            self.lock.release()

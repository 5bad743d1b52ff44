"""The approval step of the call path: whether one call may run, and the denial when not.

In order (execution.md, "Dispatch"): a glob of ``approvals.deny`` refuses; unless a pre hook
asked for approval, a glob of ``approvals.allow`` or a *session* answer lets the call run; then
the selected :class:`~hermes_core._approvals.policy.ApprovalPolicy` decides (an exception, a
timeout or no decision counts as deny), and *ask* goes to the session's prompt transport (the
non-interactive answer when it has none).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import anyio

from hermes_core._approvals.memory import ApprovalMemory
from hermes_core._approvals.policy import (
    SHELL_COMMAND_META,
    ApprovalPolicy,
    Decision,
    GlobRules,
    call_subjects,
    matching_glob_every_segment_allows_any_segment_denies,
    remembered_subject,
)
from hermes_core._approvals.prompt import ApprovalRequest, NonInteractivePrompt, PromptTransport
from hermes_core._errors import raised_at
from hermes_core._redaction import redact
from hermes_core._timeouts import DeadlineExceeded, await_with_timeout, caller_cancelled
from hermes_core._tools import ToolResult

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._session import Session
    from hermes_core._specs import ToolCall

__all__ = ["ApprovalGate"]


class ApprovalGate:
    """The rules of the module docstring for one host: its ``policy``, the allow and deny globs
    of ``config.approvals``, and the :class:`~hermes_core._approvals.memory.ApprovalMemory` of
    each session's prompt transport and answers. A policy has ``decide_timeout`` seconds to
    decide (``plugins.hook_timeout``). ``policy_name`` is how messages name ``policy``
    (``approval policy 'manual' (plugin 'approvals')``); see :meth:`policy_label`."""

    def __init__(
        self,
        policy: ApprovalPolicy,
        config: Config,
        env: Environment,
        *,
        decide_timeout: float,
        policy_name: str | None = None,
    ) -> None:
        self.policy = policy
        self._named = (policy, policy_name) if policy_name else None
        self.config = config
        self.deny_rules = GlobRules(config.approvals.deny)
        self.allow_rules = GlobRules(config.approvals.allow)
        self.memory = ApprovalMemory(env, self.allow_rules)
        """Each session's prompt transport and answers, and the *always* answers."""
        self.decide_timeout = decide_timeout

    async def check(
        self, call: ToolCall, session: Session, approval_reason: str | None
    ) -> ToolResult | None:
        """``None`` when ``call`` may run, else the denial. ``approval_reason`` (a pre hook
        asked for approval) skips the allow globs and the session's answers: a person is
        asked."""
        force_ask = approval_reason is not None
        denied = matching_glob_every_segment_allows_any_segment_denies(
            self.deny_rules, call, deny=True
        )
        if denied is not None:
            return ToolResult.error(
                "DENIED",
                f"{call.name} was refused: it matches {denied.pattern!r} in approvals.deny"
                f"{denied.explanation()}.",
            )
        if not force_ask:
            if (
                matching_glob_every_segment_allows_any_segment_denies(
                    self.allow_rules, call, deny=False
                )
                is not None
            ):
                return None
            if self.memory.approved_in_session(call, session):
                return None
        decision = await self._policy_decision(call, session)
        if decision.action == "deny":
            return ToolResult.error(
                "DENIED", decision.message or f"{call.name} was refused by the approval policy."
            )
        if decision.action == "allow" and not force_ask:
            return None
        return await self._ask(call, session, approval_reason or decision.message)

    def policy_label(self) -> str:
        """The policy as a failure names it: the name given with it, or, for one handed in
        code without a name (or put in its place since), its class's qualified name."""
        if self._named is not None and self._named[0] is self.policy:
            return self._named[1]
        return f"approval policy {type(self.policy).__qualname__}"

    async def _policy_decision(self, call: ToolCall, session: Session) -> Decision:
        try:
            decision: Any = self.policy.decide(call, session)
            if inspect.iscoroutine(decision):
                decision = await await_with_timeout(decision, self.decide_timeout)
            elif inspect.isawaitable(decision):
                decision = await decision
        except DeadlineExceeded:
            return Decision.deny(
                f"{call.name} was refused: the {self.policy_label()} did not decide within "
                f"{self.decide_timeout:g} s."
            )
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            where = raised_at(exc)
            return Decision.deny(
                f"{call.name} was refused: the {self.policy_label()} failed "
                f"({type(exc).__name__}: {exc}" + (f" (at {where})" if where else "") + ")."
            )
        if not isinstance(decision, Decision) or decision.action not in ("allow", "deny", "ask"):
            return Decision.deny(
                f"{call.name} was refused: the {self.policy_label()} gave no decision "
                f"({decision!r})."
            )
        return decision

    async def _ask(self, call: ToolCall, session: Session, reason: str) -> ToolResult | None:
        transport: PromptTransport = self.memory.prompt_of(session) or NonInteractivePrompt(
            self.config.approvals.non_interactive
        )
        pattern = remembered_subject(call)
        request = ApprovalRequest(
            tool_name=call.name,
            arguments=redact(call.arguments),
            reason=reason,
            remember_as=pattern,
            shown_in_full=frozenset({str(call.tool.meta.get(SHELL_COMMAND_META) or "")} - {""}),
        )
        timeout = self.config.approvals.timeout
        answer = None
        try:
            with anyio.move_on_after(timeout):
                answer = await transport.ask(request, timeout)
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            return ToolResult.error(
                "DENIED", f"{call.name} was refused: the approval prompt failed ({exc})."
            )
        if answer in ("once", "session", "always"):
            await self.memory.remember(answer, pattern, session)
            return None
        if not getattr(transport, "interactive", False):
            # Only shell tools have a "<tool>:<command>" subject; for any other tool the name
            # itself is the pattern that allows it.
            shell = len(call_subjects(call)) > 1
            broader = f" (or a broader glob such as {call.name + ':*'!r})" if shell else ""
            why = f" Asked because: {reason.rstrip('.')}." if reason else ""
            return ToolResult.error(
                "DENIED",
                f"{call.name} needs approval and nobody can answer in this session "
                f"(approvals.non_interactive: {self.config.approvals.non_interactive}).{why} "
                f"To allow it, add {pattern!r}{broader} to approvals.allow in config.yaml, or "
                "choose another approvals.policy.",
            )
        if answer is None:
            return ToolResult.error(
                "DENIED",
                f"{call.name} was refused: nobody answered the approval prompt within "
                f"{timeout:g} s.",
            )
        return ToolResult.error("DENIED", f"{call.name} was refused by the user.")

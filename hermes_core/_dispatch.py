"""The one call path: every tool call, however it arrives, runs through :class:`Dispatcher`.

Steps (execution.md, "Dispatch"): resolve the real tool (past the interrupt check, a catalog
tool answers that it cannot run, before its arguments are read), coerce and validate them,
``hermes_pre_tool_call`` hooks (last registered first; block, approve, modify; an exception or a
timeout blocks), the approval policy with the allow and deny globs and the session's prompt
transport, the handler under its timeout, post observers and result transforms (isolated per
plugin), and an activity event to ``hermes_tool_activity`` and the activity log. Whatever goes
wrong becomes an error :class:`~hermes_core._tools.ToolResult`; nothing raises out of
:meth:`Dispatcher.dispatch`.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import pluggy

from hermes_core._activity import ACTIVITY_LOG_NAME, ActivityLog, preview
from hermes_core._approvals.gate import ApprovalGate
from hermes_core._availability import Availability
from hermes_core._call_path import CALLER_PARAMETER, CallerFactory
from hermes_core._call_shape import (
    PreparedTool,
    check_arguments,
    check_in_thread,
    handler_result,
    prepare_tool,
)
from hermes_core._generation_cache import GenerationCache
from hermes_core._hook_calls import Blocked, HookCalls
from hermes_core._registry import Registry
from hermes_core._specs import ActivityEvent, ActivityStatus, ToolCall
from hermes_core._timeouts import (
    DeadlineExceeded,
    await_with_timeout,
    caller_cancelled,
    run_sync_with_timeout,
)
from hermes_core._tools import Tool, ToolResult

if TYPE_CHECKING:
    from hermes_core._approvals.memory import ApprovalMemory
    from hermes_core._approvals.policy import ApprovalPolicy, GlobRules
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._session import Session

log = logging.getLogger(__name__)

_STATUS_BY_CODE: Final[dict[str, ActivityStatus]] = {
    "BLOCKED": "blocked",
    "DENIED": "denied",
    "INTERRUPTED": "interrupted",
}


@dataclass(slots=True)
class PlannedCall:
    """One real call a router tool asks for: the tool (already resolved for the session; ``None``
    when the dispatcher resolves ``name`` itself, as for a connector tool) and its arguments
    (a dict the router read, or as sent), or the ``refusal`` that stands for it."""

    name: str
    arguments: Any = None
    tool: Tool | None = None
    refusal: ToolResult | None = None


@dataclass(slots=True)
class CallPlan:
    """What a router tool's handler returns: the calls to run, in order, and how to answer
    from their results. In a ``batch``, calls not yet started when the session is interrupted
    are not run: ``finish`` gets ``None`` for them."""

    calls: Sequence[PlannedCall]
    finish: Callable[[Sequence[ToolResult | None]], ToolResult]
    batch: bool = False


class Dispatcher:
    """Runs tool calls through the pipeline of the specification.

    ``hooks`` is a pluggy ``PluginManager`` or its ``hook`` relay; ``policy`` the selected
    :class:`~hermes_core._approvals.policy.ApprovalPolicy`. The activity log goes to
    ``env.log_dir/activity.jsonl`` unless ``activity_log`` is given. ``availability`` says why a
    name cannot run (by default over ``registry`` and ``config.tools``, knowing no MCP reasons).
    ``callers`` makes what a handler declaring a ``caller`` parameter receives (the host gives
    an :class:`~hermes_core._execution.caller.ToolCallers`); without it such a handler is refused.

    It is the only router: a direct call runs its tool; a *router* tool (``tool_call``, marked
    ``meta["router"]``) is never run as itself: its handler returns a :class:`CallPlan` of the
    real calls, each of which runs through the pipeline under its real name.
    """

    def __init__(
        self,
        registry: Registry,
        hooks: pluggy.PluginManager | pluggy.HookRelay,
        policy: ApprovalPolicy,
        config: Config,
        env: Environment,
        *,
        activity_log: ActivityLog | None = None,
        availability: Availability | None = None,
        callers: CallerFactory | None = None,
        policy_name: str | None = None,
    ) -> None:
        self.registry = registry
        self.availability = availability or Availability(registry, config.tools)
        self.hook_calls = HookCalls(hooks, config.plugins.hook_timeout)
        self.hooks = self.hook_calls.hooks
        self.gate = ApprovalGate(
            policy,
            config,
            env,
            decide_timeout=config.plugins.hook_timeout,
            policy_name=policy_name,
        )
        """The approval step: the policy, the allow and deny globs, the sessions' answers."""
        self.callers = callers
        self.config = config
        self.env = env
        self.activity_log = activity_log or ActivityLog(env.log_dir / ACTIVITY_LOG_NAME)
        self._prepared: GenerationCache[str, PreparedTool] = GenerationCache(registry)
        self._call_ids = itertools.count(1)

    @property
    def policy(self) -> ApprovalPolicy:
        """The selected approval policy."""
        return self.gate.policy

    @policy.setter
    def policy(self, policy: ApprovalPolicy) -> None:
        self.gate.policy = policy

    @property
    def approvals(self) -> ApprovalMemory:
        """Each session's prompt transport and answers, and the *always* answers."""
        return self.gate.memory

    @property
    def allow_rules(self) -> GlobRules:
        """The globs of ``approvals.allow`` (with the *always* answers added)."""
        return self.gate.allow_rules

    @property
    def deny_rules(self) -> GlobRules:
        """The globs of ``approvals.deny``."""
        return self.gate.deny_rules

    # Resolution -------------------------------------------------------------------------------

    @property
    def prepared_tools(self) -> int:
        """How many tools of the current registry generation have had their schema compiled:
        validators are built on a tool's first call, never up front."""
        return len(self._prepared)

    def resolve(self, name: str, session: Session | None = None) -> Tool | None:
        """The tool called ``name`` if it exists, its toolset is enabled and ``session`` is
        granted that toolset; otherwise ``None``."""
        return self.availability.resolve(name, session)

    def _prepare(self, tool: Tool) -> PreparedTool:
        prepared = self._prepared.get(tool.name)
        if prepared is None or prepared.tool is not tool:
            prepared = self._prepared.put(tool.name, prepare_tool(tool))
        return prepared

    # The pipeline -----------------------------------------------------------------------------

    async def dispatch(self, name: str, arguments: Any, session: Session) -> ToolResult:
        """Run one call of the tool ``name`` for ``session`` and return its result."""
        started = time.perf_counter()  # a wait for the tool's server counts in the call's time
        try:
            found = self.availability.check(name, session)
            if not isinstance(found, Tool) and await self.availability.settle(name):
                found = self.availability.check(name, session)
        except BaseException as exc:  # the last line of defence: never raises
            if caller_cancelled(exc):
                raise
            log.exception("resolving %r failed", name)
            found = ToolResult.error(
                "INTERNAL_ERROR", f"hermes-core failed while calling {name!r}: {exc}"
            )
        if isinstance(found, Tool) and found.meta.get("router"):
            return await self._route(found, arguments, session)
        if not isinstance(found, Tool):
            result = found or ToolResult.error("UNKNOWN_TOOL", f"There is no tool named {name!r}.")
            await self._record(name, None, arguments, result, session, started)
            return result
        return await self._dispatch(found, arguments, session, started)

    async def _route(self, router: Tool, arguments: Any, session: Session) -> ToolResult:
        """Run what a router tool asks: its handler plans the real calls (or refuses), and each
        planned call runs through the pipeline, in order. Only the real calls are hooked,
        approved and logged."""
        try:
            handler = router.handler
            if handler is None:
                return ToolResult.error("TOOL_ERROR", f"{router.name} has no handler.")
            plan: Any = handler(arguments, session)
            if inspect.isawaitable(plan):
                plan = await plan
            if isinstance(plan, ToolResult):
                return plan
            if not isinstance(plan, CallPlan):
                return ToolResult.error(
                    "TOOL_ERROR", f"{router.name} planned {type(plan).__name__}, not a CallPlan."
                )
            outcomes: list[ToolResult | None] = []
            for planned in plan.calls:
                if planned.refusal is not None:
                    outcomes.append(planned.refusal)
                elif plan.batch and session.interrupted:
                    outcomes.append(None)  # not started: the user stopped the turn
                elif planned.tool is None:
                    outcomes.append(await self.dispatch(planned.name, planned.arguments, session))
                else:
                    outcomes.append(await self._dispatch(planned.tool, planned.arguments, session))
            return plan.finish(outcomes)
        except BaseException as exc:  # the last line of defence: never raises
            if caller_cancelled(exc):
                raise
            log.exception("routing %r failed", router.name)
            return ToolResult.error(
                "INTERNAL_ERROR", f"hermes-core failed while running {router.name!r}: {exc}"
            )

    async def _dispatch(
        self, tool: Tool, arguments: Any, session: Session, started: float | None = None
    ) -> ToolResult:
        if started is None:
            started = time.perf_counter()
        call: ToolCall | None = None
        try:
            call, result = await self._run(tool, arguments, session)
        except BaseException as exc:  # the last line of defence: never raises
            if caller_cancelled(exc):
                self._record_interrupted(tool.name, arguments, session, started)
                raise
            log.exception("dispatch of %r failed", tool.name)
            result = ToolResult.error(
                "INTERNAL_ERROR", f"hermes-core failed while calling {tool.name!r}: {exc}"
            )
        await self._record(tool.name, call, arguments, result, session, started)
        return result

    async def _run(
        self, tool: Tool, arguments: Any, session: Session
    ) -> tuple[ToolCall | None, ToolResult]:
        prepared = self._prepare(tool)
        if session.interrupted:
            return None, _interrupted(tool.name)
        if tool.source == "catalog":
            # A catalog tool cannot run at all; its handler only says so, whatever the arguments.
            # That comes first: judging, hooking or approving arguments of a call that will not
            # run would only hide it behind an error the caller fixes in vain.
            listed = ToolCall(tool.name, {}, tool, str(next(self._call_ids)))
            return None, await self._call_handler(prepared, listed, session)
        checked = (
            await check_in_thread(prepared, arguments)
            if prepared.patterned
            else check_arguments(prepared, arguments)
        )
        if isinstance(checked, ToolResult):
            return None, checked
        call = ToolCall(tool.name, checked, tool, str(next(self._call_ids)))
        try:
            recheck = partial(_recheck, prepared)
            approval_reason = await self.hook_calls.pre_call(call, session, recheck)
            denied = await self.gate.check(call, session, approval_reason)
            if denied is not None:
                result = denied
            elif _interrupted_now(session):
                result = _interrupted(tool.name)
            else:
                result = await self._call_handler(prepared, call, session)
        except Blocked as blocked:
            result = blocked.result
        result = await self.hook_calls.post_call(call, result, session)
        return call, result

    async def _call_handler(
        self, prepared: PreparedTool, call: ToolCall, session: Session
    ) -> ToolResult:
        tool = prepared.tool
        handler = tool.handler
        if handler is None:
            return ToolResult.error("TOOL_ERROR", f"{tool.name} has no handler.")
        kwargs = dict(call.arguments)
        if prepared.wants_session:
            kwargs["session"] = session
        if prepared.wants_caller:
            if self.callers is None:
                return ToolResult.error(
                    "TOOL_ERROR", f"{tool.name} asks for a caller, and this host gives none."
                )
            kwargs[CALLER_PARAMETER] = self.callers(self, tool, session)
        try:
            if prepared.is_async:
                coroutine: Any = handler(**kwargs)
                value = await await_with_timeout(coroutine, tool.timeout)
            else:
                value = await run_sync_with_timeout(partial(handler, **kwargs), tool.timeout)
        except DeadlineExceeded:
            return ToolResult.error(
                "TIMEOUT", f"{tool.name} did not finish within {tool.timeout:g} s and was stopped."
            )
        except BaseException as exc:  # a handler's sys.exit() or Ctrl-C must not end the host
            if caller_cancelled(exc):
                raise
            return ToolResult.error(
                "TOOL_ERROR", f"{tool.name} failed: {type(exc).__name__}: {exc}"
            )
        return handler_result(tool.name, value)

    async def notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call the observer hook ``hook_name`` (``hermes_session_start``...) of every plugin,
        each isolated: a failure or a timeout is logged once and never stops the others."""
        await self.hook_calls.notify(hook_name, **kwargs)

    async def _record(
        self,
        name: str,
        call: ToolCall | None,
        arguments: Any,
        result: ToolResult,
        session: Session,
        started: float,
    ) -> None:
        try:
            event = self._event(name, call, arguments, result, session, started)
            self.activity_log.write(event)
            await self.hook_calls.activity(event)
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            log.exception("recording the activity of %r failed", name)

    def _event(
        self,
        name: str,
        call: ToolCall | None,
        arguments: Any,
        result: ToolResult,
        session: Session,
        started: float,
    ) -> ActivityEvent:
        shown = call.arguments if call is not None else arguments
        tool = call.tool if call is not None else self.resolve(name)
        return ActivityEvent(
            name=name if isinstance(name, str) else repr(name),
            arguments=preview(shown) if isinstance(shown, Mapping) else {"raw": preview(shown)},
            status=_status(result),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            session_id=session.id,
            source=(tool.source_name or tool.source) if tool is not None else "",
            message=preview(result.error_message),
            parent_id=session.parent_id,
        )

    def _record_interrupted(
        self, name: str, arguments: Any, session: Session, started: float
    ) -> None:
        """Log a call its caller cancelled (Ctrl-C, a client's cancel) as ``interrupted``, in
        the activity log only: the cancellation is on its way out, and an observer hook would
        have to be awaited inside the cancelled scope."""
        try:
            result = ToolResult.error("INTERRUPTED", f"{name} was interrupted while it ran.")
            self.activity_log.write(self._event(name, None, arguments, result, session, started))
        except Exception:
            log.exception("recording the interruption of %r failed", name)

    # Lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Write the queued activity events and stop the log writer."""
        self.activity_log.close()


def _interrupted_now(session: Session) -> bool:
    # Read again after the awaits above: the user may have interrupted meanwhile.
    return session.interrupted


def _interrupted(name: str) -> ToolResult:
    return ToolResult.error("INTERRUPTED", f"{name} was not run: the user interrupted the turn.")


def _status(result: ToolResult) -> ActivityStatus:
    if not result.is_error:
        return "ok"
    return _STATUS_BY_CODE.get(result.error_code or "", "error")


async def _recheck(prepared: PreparedTool, arguments: Any, who: str) -> dict[str, Any] | ToolResult:
    """A pre hook's *modify* arguments, checked as the model's are (naming the hook)."""
    if prepared.patterned:
        return await check_in_thread(prepared, arguments, who=who)
    return check_arguments(prepared, arguments, who=who)

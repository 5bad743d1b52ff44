"""The one call path: every tool call, however it arrives, runs through :class:`Dispatcher`.

Steps (execution.md, "Dispatch"): resolve the real tool, coerce and validate the arguments,
``hermes_pre_tool_call`` hooks (last registered first; block, approve, modify; an exception or a
timeout blocks), the approval policy with the allow and deny globs and the session's prompt
transport, the handler under its timeout, post observers and result transforms (isolated per
plugin), and an activity event to ``hermes_tool_activity`` and the activity log. Whatever goes
wrong becomes an error :class:`~hermes_core.tools.ToolResult`; nothing raises out of
:meth:`Dispatcher.dispatch`.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread
import pluggy

from hermes_core.activity import ACTIVITY_LOG_NAME, ActivityLog, preview
from hermes_core.approvals.memory import ApprovalMemory
from hermes_core.approvals.policy import (
    SHELL_COMMAND_META,
    ApprovalPolicy,
    Decision,
    GlobRules,
    call_subjects,
    matching_glob_every_segment_allows_any_segment_denies,
    remembered_subject,
)
from hermes_core.approvals.prompt import ApprovalRequest, NonInteractivePrompt, PromptTransport
from hermes_core.arguments import ArgumentsProblem, read_arguments
from hermes_core.availability import Availability
from hermes_core.coercion import coerce_arguments
from hermes_core.execution.caller import CALLER_PARAMETER, ToolCaller
from hermes_core.execution.environment import ScriptPassthrough
from hermes_core.generation_cache import GenerationCache
from hermes_core.redaction import redact
from hermes_core.shown import shown
from hermes_core.specs import ActivityEvent, ActivityStatus, PreCallDirective, ToolCall
from hermes_core.timeouts import (
    DeadlineExceeded,
    await_with_timeout,
    caller_cancelled,
    run_sync_with_timeout,
)
from hermes_core.tools import Registry, Tool, ToolResult
from hermes_core.validation import argument_error, build_validator, has_patterns

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from hermes_core.config import Config
    from hermes_core.paths import Environment
    from hermes_core.session import Session

log = logging.getLogger(__name__)

_INJECTED: Final = frozenset({"session", CALLER_PARAMETER})
"""Handler parameters the dispatcher fills itself; never arguments of the call."""

_STATUS_BY_CODE: Final[dict[str, ActivityStatus]] = {
    "BLOCKED": "blocked",
    "DENIED": "denied",
    "INTERRUPTED": "interrupted",
}


@dataclass(frozen=True)
class _Hook:
    """One hook implementation, prepared once: its plugin name, how messages name it
    (``plugin 'audit'``, ``hook directory 'audit'``), its timeout and how to call it."""

    plugin: str
    who: str
    timeout: float
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    is_async: bool


@dataclass(frozen=True)
class _PreparedTool:
    """What the dispatcher computes once per tool: the compiled validator and the call shape."""

    tool: Tool
    validator: Validator | None
    """``None`` when the schema cannot judge (broken, non-local ``$ref``), or for a bridge tool:
    the call is not blocked for it."""
    is_async: bool
    wants_session: bool
    wants_caller: bool
    accepted: frozenset[str] | None
    patterned: bool = False
    """Whether checking the arguments runs the schema's regular expressions (up to
    ``PATTERN_BUDGET``): then it runs in a worker thread."""


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


class _Blocked(Exception):
    """A pre hook stopped the call."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


class Dispatcher:
    """Runs tool calls through the pipeline of the specification.

    ``hooks`` is a pluggy ``PluginManager`` or its ``hook`` relay; ``policy`` the selected
    :class:`~hermes_core.approvals.policy.ApprovalPolicy`. The activity log goes to
    ``env.log_dir/activity.jsonl`` unless ``activity_log`` is given. ``availability`` says why a
    name cannot run (by default over ``registry`` and ``config.tools``, knowing no MCP reasons).
    ``plugin_variables`` are the ``requires_env`` of the loaded plugins: with
    ``code_execution.env_passthrough`` they pass the scrub of a script's environment.

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
        plugin_variables: Sequence[str] = (),
    ) -> None:
        self.registry = registry
        self.availability = availability or Availability(registry, config.tools)
        self.hooks = hooks.hook if isinstance(hooks, pluggy.PluginManager) else hooks
        self.policy = policy
        self.config = config
        self.env = env
        self.deny_rules = GlobRules(config.approvals.deny)
        self.allow_rules = GlobRules(config.approvals.allow)
        self.approvals = ApprovalMemory(env, self.allow_rules)
        """Each session's prompt transport and answers, and the *always* answers."""
        self.passthrough = ScriptPassthrough(
            [*config.code_execution.env_passthrough, *plugin_variables]
        )
        """The variable names that pass the scrub of a script's environment, per session."""
        self.activity_log = activity_log or ActivityLog(env.log_dir / ACTIVITY_LOG_NAME)
        self._hook_timeout = config.plugins.hook_timeout
        self._prepared: GenerationCache[str, _PreparedTool] = GenerationCache(registry)
        self._hook_cache: dict[str, tuple[list[Any], tuple[_Hook, ...]]] = {}
        self._call_ids = itertools.count(1)
        self._logged_failures: set[tuple[str, str, str]] = set()

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

    def _prepare(self, tool: Tool) -> _PreparedTool:
        prepared = self._prepared.get(tool.name)
        if prepared is None or prepared.tool is not tool:
            prepared = self._prepared.put(tool.name, _prepare_tool(tool))
        return prepared

    def _hook_impls(self, hook_name: str) -> tuple[_Hook, ...]:
        caller = getattr(self.hooks, hook_name, None)
        if caller is None:
            return ()
        impls = caller.get_hookimpls()
        cached = self._hook_cache.get(hook_name)
        if cached is not None and cached[0] == impls:
            return cached[1]
        # pluggy calls the last registered implementation first; so do we.
        prepared = tuple(
            _Hook(
                plugin=impl.plugin_name,
                who=_hook_owner(impl.plugin, impl.plugin_name),
                timeout=_hook_timeout(impl.plugin, self._hook_timeout),
                function=impl.function,
                argnames=tuple(impl.argnames),
                is_async=inspect.iscoroutinefunction(impl.function),
            )
            for impl in reversed(impls)
            if not (impl.hookwrapper or impl.wrapper)
        )
        self._hook_cache[hook_name] = (impls, prepared)
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
        checked = (
            await _check_in_thread(prepared, arguments)
            if prepared.patterned
            else _check_arguments(prepared, arguments)
        )
        if isinstance(checked, ToolResult):
            return None, checked
        call = ToolCall(tool.name, checked, tool, str(next(self._call_ids)))
        try:
            approval_reason = await self._pre_hooks(call, prepared, session)
            denied = await self._approve(call, session, approval_reason)
            if denied is not None:
                result = denied
            elif _interrupted_now(session):
                result = _interrupted(tool.name)
            else:
                result = await self._call_handler(prepared, call, session)
        except _Blocked as blocked:
            result = blocked.result
        result = await self._post_hooks(call, result, session)
        return call, result

    async def _pre_hooks(
        self, call: ToolCall, prepared: _PreparedTool, session: Session
    ) -> str | None:
        """Run the pre hooks; return the reason when one requires approval, else ``None``."""
        approval_reason: str | None = None
        for hook in self._hook_impls("hermes_pre_tool_call"):
            try:
                directive = await self._call_hook(hook, {"call": call, "session": session})
            except DeadlineExceeded:
                raise _Blocked(
                    ToolResult.error(
                        "BLOCKED",
                        f"{call.name} was blocked: the pre_tool_call hook of {hook.who} "
                        f"did not answer within {hook.timeout:g} s.",
                    )
                ) from None
            except BaseException as exc:  # a plugin's sys.exit() or Ctrl-C must not end the host
                if caller_cancelled(exc):
                    raise
                raise _Blocked(
                    ToolResult.error(
                        "BLOCKED",
                        f"{call.name} was blocked: the pre_tool_call hook of {hook.who} "
                        f"failed ({type(exc).__name__}: {exc}).",
                    )
                ) from None
            if directive is None:
                continue
            returned = directive
            directive = _as_directive(returned)
            if directive is None or directive.action == "block":
                reason = (
                    directive.message
                    if directive is not None
                    else f"it returned {shown(returned)}, which is not a PreCallDirective"
                )
                raise _Blocked(
                    ToolResult.error(
                        "BLOCKED",
                        f"{call.name} was blocked by {hook.who}: {reason or 'no reason given'}",
                    )
                )
            if directive.action == "approve":
                approval_reason = directive.message or f"{hook.who} asks for approval"
            elif directive.action == "modify":
                given: Any = directive.arguments  # a dataclass does not check its field types
                if not isinstance(given, Mapping):
                    raise _Blocked(
                        ToolResult.error(
                            "BLOCKED",
                            f"{call.name} was blocked: {hook.who} returned a modify "
                            f"directive without a mapping of arguments ({given!r:.80}).",
                        )
                    )
                checked = (
                    await _check_in_thread(prepared, directive.arguments, who=hook.who)
                    if prepared.patterned
                    else _check_arguments(prepared, directive.arguments, who=hook.who)
                )
                if isinstance(checked, ToolResult):
                    raise _Blocked(checked)
                call.arguments = checked
        return approval_reason

    async def _approve(
        self, call: ToolCall, session: Session, approval_reason: str | None
    ) -> ToolResult | None:
        """``None`` when the call may run, else the denial."""
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
            if self.approvals.approved_in_session(call, session):
                return None
        decision = await self._policy_decision(call, session)
        if decision.action == "deny":
            return ToolResult.error(
                "DENIED", decision.message or f"{call.name} was refused by the approval policy."
            )
        if decision.action == "allow" and not force_ask:
            return None
        return await self._ask(call, session, approval_reason or decision.message)

    async def _policy_decision(self, call: ToolCall, session: Session) -> Decision:
        try:
            decision: Any = self.policy.decide(call, session)
            if inspect.iscoroutine(decision):
                decision = await await_with_timeout(decision, self._hook_timeout)
            elif inspect.isawaitable(decision):
                decision = await decision
        except DeadlineExceeded:
            return Decision.deny(
                f"{call.name} was refused: the approval policy did not decide within "
                f"{self._hook_timeout:g} s."
            )
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            return Decision.deny(
                f"{call.name} was refused: the approval policy failed "
                f"({type(exc).__name__}: {exc})."
            )
        if not isinstance(decision, Decision) or decision.action not in ("allow", "deny", "ask"):
            return Decision.deny(
                f"{call.name} was refused: the approval policy gave no decision ({decision!r})."
            )
        return decision

    async def _ask(self, call: ToolCall, session: Session, reason: str) -> ToolResult | None:
        transport: PromptTransport = self.approvals.prompt_of(session) or NonInteractivePrompt(
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
            await self.approvals.remember(answer, pattern, session)
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

    async def _call_handler(
        self, prepared: _PreparedTool, call: ToolCall, session: Session
    ) -> ToolResult:
        tool = prepared.tool
        handler = tool.handler
        if handler is None:
            return ToolResult.error("TOOL_ERROR", f"{tool.name} has no handler.")
        kwargs = dict(call.arguments)
        if prepared.wants_session:
            kwargs["session"] = session
        if prepared.wants_caller:
            kwargs[CALLER_PARAMETER] = ToolCaller(self, tool, session)
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
        return _to_result(tool.name, value)

    async def notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call the observer hook ``hook_name`` (``hermes_session_start``...) of every plugin,
        each isolated: a failure or a timeout is logged once and never stops the others."""
        for hook in self._hook_impls(hook_name):
            await self._observe(hook, kwargs)

    async def _post_hooks(self, call: ToolCall, result: ToolResult, session: Session) -> ToolResult:
        for hook in self._hook_impls("hermes_post_tool_call"):
            await self._observe(hook, {"call": call, "result": result, "session": session})
        for hook in self._hook_impls("hermes_transform_tool_result"):
            kwargs = {"call": call, "result": result, "session": session}
            replacement = await self._observe(hook, kwargs)
            if isinstance(replacement, ToolResult):
                result = replacement
            elif replacement is not None:
                self._log_failure(
                    hook, "hermes_transform_tool_result", f"returned {type(replacement).__name__}"
                )
        return result

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
            for hook in self._hook_impls("hermes_tool_activity"):
                await self._observe(hook, {"event": event})
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

    # Hooks ------------------------------------------------------------------------------------

    async def _call_hook(self, hook: _Hook, kwargs: Mapping[str, Any]) -> Any:
        args = [kwargs[argname] for argname in hook.argnames]
        if hook.is_async:
            return await await_with_timeout(hook.function(*args), hook.timeout)
        return await run_sync_with_timeout(partial(hook.function, *args), hook.timeout)

    async def _observe(self, hook: _Hook, kwargs: Mapping[str, Any]) -> Any:
        """Call an observer hook; its failure is logged once and never stops the call."""
        try:
            return await self._call_hook(hook, kwargs)
        except DeadlineExceeded:
            self._log_failure(hook, "observer", f"no answer within {hook.timeout:g} s")
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            self._log_failure(hook, "observer", f"{type(exc).__name__}: {exc}")
        return None

    def _log_failure(self, hook: _Hook, where: str, what: str) -> None:
        key = (hook.plugin, where, what)
        if key not in self._logged_failures:
            self._logged_failures.add(key)
            log.warning("%s: %s hook failed: %s", hook.who, where, what)

    # Lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Write the queued activity events and stop the log writer."""
        self.activity_log.close()


def _hook_owner(plugin: object, name: str) -> str:
    """How messages name a hook's owner: a plugin object may say what it is in a
    ``hermes_hook_owner`` attribute (shell hooks and hook directories do); any other is
    ``plugin '<name>'``."""
    owner = getattr(plugin, "hermes_hook_owner", None)
    return owner if isinstance(owner, str) and owner else f"plugin {name!r}"


def _hook_timeout(plugin: object, default: float) -> float:
    """A plugin object's own timeout for its hooks (``hermes_hook_timeout``: a shell hook's
    ``timeout``), else ``plugins.hook_timeout``."""
    timeout = getattr(plugin, "hermes_hook_timeout", None)
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout)
    return default


def _prepare_tool(tool: Tool) -> _PreparedTool:
    # A bridge tool parses its own arguments, accepting more than its schema advertises (the
    # single shape of tool_call, a bare string of queries) and refusing with repair hints.
    validator = None if tool.meta.get("bridge") is True else build_validator(tool.parameters)
    handler = tool.handler
    wants_session = wants_caller = False
    accepted: frozenset[str] | None = None
    is_async = False
    if handler is not None:
        is_async = inspect.iscoroutinefunction(handler)
        parameters: Mapping[str, inspect.Parameter] | None
        try:
            parameters = inspect.signature(handler).parameters
        except (TypeError, ValueError):
            parameters = None
        if parameters is not None:
            wants_session = "session" in parameters
            wants_caller = CALLER_PARAMETER in parameters
            if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
                accepted = frozenset(
                    name
                    for name, p in parameters.items()
                    if name not in _INJECTED
                    and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                )
    patterned = validator is not None and has_patterns(tool.parameters)
    return _PreparedTool(
        tool, validator, is_async, wants_session, wants_caller, accepted, patterned
    )


async def _check_in_thread(
    prepared: _PreparedTool, arguments: Any, *, who: str = "the model"
) -> dict[str, Any] | ToolResult:
    """:func:`_check_arguments` in a worker thread, for a schema with patterns: a pattern may
    take up to its budget, and the event loop serves other calls meanwhile. (Other schemas are
    checked in place: a thread hand-off would cost more than their check.)"""
    return await anyio.to_thread.run_sync(partial(_check_arguments, prepared, arguments, who=who))


def _check_arguments(
    prepared: _PreparedTool, arguments: Any, *, who: str = "the model"
) -> dict[str, Any] | ToolResult:
    """Coerced and validated arguments, or an ``INVALID_ARGUMENTS`` result naming the problem."""
    name = prepared.tool.name
    read = read_arguments(arguments)
    if isinstance(read, ArgumentsProblem):
        if read.kind == "not_object":
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                f"The arguments {who} gave for {name} must be a JSON object, not {read.type_name}.",
            )
        return ToolResult.error(
            "INVALID_ARGUMENTS",
            f"The arguments {who} gave for {name} are not a JSON object: {arguments[:80]!r}",
        )
    arguments = read
    try:
        coerced = coerce_arguments(arguments, prepared.tool.parameters)
        problem = argument_error(prepared.validator, prepared.tool, coerced)
    except RecursionError:
        return ToolResult.error(
            "INVALID_ARGUMENTS",
            f"The arguments {who} gave for {name} are nested too deeply to check.",
        )
    if problem is not None:
        if who != "the model":
            problem = dataclasses.replace(problem, source=who)
        return problem.to_tool_result()
    if prepared.accepted is not None:
        unknown = sorted(str(key) for key in coerced if key not in prepared.accepted)
        if unknown:
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                f"{name} does not take the argument(s) {', '.join(unknown)}; it takes "
                f"{', '.join(sorted(prepared.accepted)) or 'no arguments'}.",
            )
    return coerced


def _as_directive(value: Any) -> PreCallDirective | None:
    """A directive from a hook's return value (a ``PreCallDirective`` or an equivalent mapping)."""
    if isinstance(value, PreCallDirective):
        return value
    if isinstance(value, Mapping) and value.get("action") in ("block", "approve", "modify"):
        arguments = value.get("arguments")
        # A modify without a mapping stays unusable here, so the caller blocks the call.
        return PreCallDirective(
            value["action"],
            str(value.get("message") or ""),
            dict(arguments) if isinstance(arguments, Mapping) else arguments,
        )
    return None


def _to_result(name: str, value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        content: Any = value.content  # a dataclass does not check its field types
        if isinstance(content, list) and all(
            isinstance(item, dict) and isinstance(item.get("type"), str) for item in content
        ):
            return value
        return ToolResult.error(
            "TOOL_ERROR",
            f"{name} returned a ToolResult whose content is not a list of content blocks "
            '(dicts with a "type" key).',
        )
    if isinstance(value, str):
        return ToolResult.text(value)
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return ToolResult.error(
            "TOOL_ERROR",
            f"{name} returned {type(value).__name__}, which is not a ToolResult, a string or "
            "JSON data.",
        )
    return ToolResult.text(text, structured=value)


def _interrupted_now(session: Session) -> bool:
    # Read again after the awaits above: the user may have interrupted meanwhile.
    return session.interrupted


def _interrupted(name: str) -> ToolResult:
    return ToolResult.error("INTERRUPTED", f"{name} was not run: the user interrupted the turn.")


def _status(result: ToolResult) -> ActivityStatus:
    if not result.is_error:
        return "ok"
    return _STATUS_BY_CODE.get(result.error_code or "", "error")

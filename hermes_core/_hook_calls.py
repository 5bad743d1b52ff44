"""How the dispatcher calls plugin hooks: each implementation prepared once, the last registered
called first (as pluggy does), each under its own timeout.

``hermes_pre_tool_call`` hooks are policy and fail closed: an exception, a timeout or an answer
that is not a :class:`~hermes_core._specs.PreCallDirective` blocks the call (:class:`Blocked`).
Every other hook is an observer, isolated per plugin: its failure is logged once and never stops
the call or the other observers.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from hermes_core._errors import HermesError, raised_at
from hermes_core._shown import shown
from hermes_core._specs import PreCallDirective
from hermes_core._timeouts import (
    DeadlineExceeded,
    await_with_timeout,
    caller_cancelled,
    run_sync_with_timeout,
)
from hermes_core._tools import ToolResult

if TYPE_CHECKING:
    from hermes_core._session import Session
    from hermes_core._specs import ActivityEvent, ToolCall

__all__ = ["Blocked", "Hook", "HookCalls", "Recheck"]

# The logger the hook failures were always logged under: logging configs filter on it.
log = logging.getLogger("hermes_core._dispatch")

Recheck = Callable[[Any, str], Awaitable["dict[str, Any] | ToolResult"]]
"""How a pre hook's *modify* arguments are checked: ``recheck(arguments, who)`` gives the
coerced, validated arguments or the ``INVALID_ARGUMENTS`` result naming ``who``."""


@dataclass(frozen=True)
class Hook:
    """One hook implementation, prepared once: its plugin name, how messages name it
    (``plugin 'audit'``, ``hook directory 'audit'``), how a failure says to turn it off
    (``fix or disable it (hermes plugins disable audit)``), its timeout and how to call it."""

    plugin: str
    who: str
    remedy: str
    timeout: float
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    is_async: bool

    def failure(self, exc: BaseException) -> str:
        """``RuntimeError: why (at /plugin/__init__.py, line 4)``: what the hook raised, and
        where in the hook's own file (else outside hermes-core) when it can be told."""
        code = getattr(self.function, "__code__", None)
        where = raised_at(exc, Path(code.co_filename) if code is not None else None)
        return f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")


class Blocked(Exception):
    """A pre hook stopped the call; ``result`` is what the call answers."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


class HookCalls:
    """The hooks of one plugin manager as the dispatcher calls them.

    ``hooks`` is a pluggy ``PluginManager`` or its ``hook`` relay; ``default_timeout`` is
    ``plugins.hook_timeout``, for a plugin object without its own ``hermes_hook_timeout``.
    """

    def __init__(
        self, hooks: pluggy.PluginManager | pluggy.HookRelay, default_timeout: float
    ) -> None:
        self.hooks = hooks.hook if isinstance(hooks, pluggy.PluginManager) else hooks
        self.default_timeout = default_timeout
        self._cache: dict[str, tuple[list[Any], tuple[Hook, ...]]] = {}
        self._logged_failures: set[tuple[str, str, str]] = set()

    def impls(self, hook_name: str) -> tuple[Hook, ...]:
        """The implementations of ``hook_name`` in calling order (wrappers left out),
        prepared again only when the plugin manager's list changed."""
        caller = getattr(self.hooks, hook_name, None)
        if caller is None:
            return ()
        impls = caller.get_hookimpls()
        cached = self._cache.get(hook_name)
        if cached is not None and cached[0] == impls:
            return cached[1]
        # pluggy calls the last registered implementation first; so do we.
        prepared = tuple(
            Hook(
                plugin=impl.plugin_name,
                who=_hook_owner(impl.plugin, impl.plugin_name),
                remedy=_hook_remedy(impl.plugin, impl.plugin_name),
                timeout=_hook_timeout(impl.plugin, self.default_timeout),
                function=impl.function,
                argnames=tuple(impl.argnames),
                is_async=inspect.iscoroutinefunction(impl.function),
            )
            for impl in reversed(impls)
            if not (impl.hookwrapper or impl.wrapper)
        )
        self._cache[hook_name] = (impls, prepared)
        return prepared

    async def pre_call(self, call: ToolCall, session: Session, recheck: Recheck) -> str | None:
        """Run the ``hermes_pre_tool_call`` hooks; return the reason when one requires
        approval, else ``None``. A *modify* replaces ``call.arguments`` once ``recheck``
        accepts them; a block, a failure or a timeout raises :class:`Blocked`."""
        approval_reason: str | None = None
        for hook in self.impls("hermes_pre_tool_call"):
            try:
                directive = await self.call(hook, {"call": call, "session": session})
            except DeadlineExceeded:
                raise Blocked(
                    ToolResult.error(
                        "BLOCKED",
                        f"{call.name} was blocked: the pre_tool_call hook of {hook.who} "
                        f"did not answer within {hook.timeout:g} s.",
                    )
                ) from None
            except BaseException as exc:  # a plugin's sys.exit() or Ctrl-C must not end the host
                if caller_cancelled(exc):
                    raise
                raise Blocked(
                    ToolResult.error(
                        "BLOCKED",
                        f"{call.name} was blocked: the pre_tool_call hook of {hook.who} "
                        f"failed ({hook.failure(exc)}); {hook.remedy}.",
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
                raise Blocked(
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
                    raise Blocked(
                        ToolResult.error(
                            "BLOCKED",
                            f"{call.name} was blocked: {hook.who} returned a modify "
                            f"directive without a mapping of arguments ({given!r:.80}).",
                        )
                    )
                checked = await recheck(directive.arguments, hook.who)
                if isinstance(checked, ToolResult):
                    raise Blocked(checked)
                call.arguments = checked
        return approval_reason

    async def post_call(self, call: ToolCall, result: ToolResult, session: Session) -> ToolResult:
        """Run the ``hermes_post_tool_call`` observers, then the result transforms; return
        the result the last transform gave (a transform answering ``None`` keeps it)."""
        for hook in self.impls("hermes_post_tool_call"):
            await self.observe(hook, {"call": call, "result": result, "session": session})
        for hook in self.impls("hermes_transform_tool_result"):
            kwargs = {"call": call, "result": result, "session": session}
            replacement = await self.observe(hook, kwargs)
            if isinstance(replacement, ToolResult):
                result = replacement
            elif replacement is not None:
                self.log_failure(
                    hook, "hermes_transform_tool_result", f"returned {type(replacement).__name__}"
                )
        return result

    async def activity(self, event: ActivityEvent) -> None:
        """Tell every ``hermes_tool_activity`` observer about ``event``."""
        for hook in self.impls("hermes_tool_activity"):
            await self.observe(hook, {"event": event})

    async def notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call the observer hook ``hook_name`` (``hermes_session_start``...) of every plugin,
        each isolated: a failure or a timeout is logged once and never stops the others."""
        for hook in self.impls(hook_name):
            await self.observe(hook, kwargs)

    async def call(self, hook: Hook, kwargs: Mapping[str, Any]) -> Any:
        """Call ``hook`` with the arguments it names, under its timeout (raising
        :class:`~hermes_core._timeouts.DeadlineExceeded` past it)."""
        args = [kwargs[argname] for argname in hook.argnames]
        if hook.is_async:
            return await await_with_timeout(hook.function(*args), hook.timeout)
        return await run_sync_with_timeout(partial(hook.function, *args), hook.timeout)

    async def observe(self, hook: Hook, kwargs: Mapping[str, Any]) -> Any:
        """Call an observer hook; its failure is logged once and never stops the call."""
        try:
            return await self.call(hook, kwargs)
        except DeadlineExceeded:
            self.log_failure(hook, "observer", f"no answer within {hook.timeout:g} s")
        except BaseException as exc:
            if caller_cancelled(exc):
                raise
            said = isinstance(exc, HermesError)  # written to be read: no class name
            self.log_failure(hook, "observer", str(exc) if said else hook.failure(exc))
        return None

    def log_failure(self, hook: Hook, where: str, what: str) -> None:
        """Log a hook's failure, once per plugin, place and message, with how to turn the
        hook off (every observer's failure, whatever its hook)."""
        key = (hook.plugin, where, what)
        if key not in self._logged_failures:
            self._logged_failures.add(key)
            log.warning("%s: %s hook failed: %s; %s", hook.who, where, what, hook.remedy)


def _hook_owner(plugin: object, name: str) -> str:
    """How messages name a hook's owner: a plugin object may say what it is in a
    ``hermes_hook_owner`` attribute (shell hooks and hook directories do); any other is
    ``plugin '<name>'``."""
    owner = getattr(plugin, "hermes_hook_owner", None)
    return owner if isinstance(owner, str) and owner else f"plugin {name!r}"


def _hook_remedy(plugin: object, name: str) -> str:
    """What a failure of a hook says to do: a plugin object may say it in a
    ``hermes_hook_remedy`` attribute (shell hooks and hook directories do, which are not
    turned off as plugins are); any other plugin is disabled as plugins are."""
    remedy = getattr(plugin, "hermes_hook_remedy", None)
    if isinstance(remedy, str) and remedy:
        return remedy
    return f"fix or disable it (hermes plugins disable {name})"


def _hook_timeout(plugin: object, default: float) -> float:
    """A plugin object's own timeout for its hooks (``hermes_hook_timeout``: a shell hook's
    ``timeout``), else ``plugins.hook_timeout``."""
    timeout = getattr(plugin, "hermes_hook_timeout", None)
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout)
    return default


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

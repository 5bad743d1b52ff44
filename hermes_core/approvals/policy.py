"""Approval policies: who decides whether a call may run, and the allow and deny globs.

A policy answers :class:`Decision` ``allow``, ``deny`` or ``ask`` for every call. The dispatcher
applies ``approvals.deny`` before any policy (so no policy can let a denied call through) and
``approvals.allow`` before asking the policy.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from hermes_core.errors import RegistrationError
from hermes_core.specs import ApprovalPolicySpec, PluginContext, ToolCall

if TYPE_CHECKING:
    from hermes_core.session import Session

DecisionAction = Literal["allow", "deny", "ask"]

SHELL_COMMAND_META = "shell_command_argument"
"""``Tool.meta`` key naming the argument that holds a shell command (``terminal`` and
``process_manage`` set it). Such calls are also matched as ``terminal:<command>``."""


@dataclass(frozen=True)
class Decision:
    """A policy's answer for one call; ``message`` tells the user (or the model) why."""

    action: DecisionAction
    message: str = ""

    @classmethod
    def allow(cls, message: str = "") -> Decision:
        """Run the call."""
        return cls("allow", message)

    @classmethod
    def deny(cls, message: str) -> Decision:
        """Refuse the call with ``message``."""
        return cls("deny", message)

    @classmethod
    def ask(cls, message: str = "") -> Decision:
        """Ask a person through the session's prompt transport."""
        return cls("ask", message)


@runtime_checkable
class ApprovalPolicy(Protocol):
    """Decides for every call; an exception counts as deny."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Allow, deny or ask for ``call``."""
        ...


def call_subjects(call: ToolCall) -> tuple[str, ...]:
    """The strings the allow and deny globs are matched against.

    Always the tool name; for a tool running a shell command also ``<tool>:<command>`` and
    ``terminal:<command>``, so ``terminal:rm *`` covers every way of running ``rm``.
    """
    argument = call.tool.meta.get(SHELL_COMMAND_META)
    if not argument:
        return (call.name,)
    command = call.arguments.get(argument)
    if not isinstance(command, str):
        return (call.name,)
    command = command.strip()
    subjects = [call.name, f"{call.name}:{command}"]
    if call.name != "terminal":
        subjects.append(f"terminal:{command}")
    return tuple(subjects)


def remembered_subject(call: ToolCall) -> str:
    """What a "session" or "always" answer remembers: the exact command for shell tools,
    the tool name otherwise. Glob characters are escaped so the pattern matches only itself."""
    subjects = call_subjects(call)
    return glob_escape(subjects[1] if len(subjects) > 1 else subjects[0])


def glob_escape(text: str) -> str:
    """``text`` as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


class GlobRules:
    """Compiled ``approvals.allow`` or ``approvals.deny`` globs (``fnmatch``, case-sensitive)."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns: list[str] = []
        self._compiled: list[tuple[str, re.Pattern[str]]] = []
        for pattern in patterns:
            self.add(pattern)

    def add(self, pattern: str) -> None:
        """Add one glob (ignored when already present)."""
        if pattern in self.patterns:
            return
        self.patterns.append(pattern)
        self._compiled.append((pattern, re.compile(fnmatch.translate(pattern), re.DOTALL)))

    def match(self, subjects: Sequence[str]) -> str | None:
        """The first glob matching one of ``subjects``, or ``None``."""
        for pattern, regex in self._compiled:
            for subject in subjects:
                if regex.match(subject):
                    return pattern
        return None

    def __bool__(self) -> bool:
        return bool(self._compiled)


def select_policy(
    specs: Mapping[str, tuple[str, ApprovalPolicySpec]] | Iterable[tuple[str, ApprovalPolicySpec]],
    name: str,
    context: PluginContext,
) -> ApprovalPolicy:
    """Build the policy called ``name`` from ``(plugin, spec)`` pairs.

    Two plugins registering one name is an error naming both; an unknown name is an error listing
    the valid ones; a factory that fails or returns something without ``decide`` is an error
    naming the plugin.
    """
    pairs = list(specs.values()) if isinstance(specs, Mapping) else list(specs)
    by_name: dict[str, tuple[str, ApprovalPolicySpec]] = {}
    for plugin, spec in pairs:
        if spec.name in by_name:
            raise RegistrationError(
                f"approval policy {spec.name!r} is registered by both "
                f"{by_name[spec.name][0]!r} and {plugin!r}"
            )
        by_name[spec.name] = (plugin, spec)
    if name not in by_name:
        valid = ", ".join(sorted(by_name)) or "none registered"
        raise RegistrationError(f"approvals.policy: unknown policy {name!r} (valid: {valid})")
    plugin, spec = by_name[name]
    try:
        policy: Any = spec.factory(context)
    except Exception as exc:
        raise RegistrationError(
            f"approval policy {name!r} of plugin {plugin!r} failed to start: {exc}"
        ) from exc
    if not callable(getattr(policy, "decide", None)):
        raise RegistrationError(
            f"approval policy {name!r} of plugin {plugin!r} has no decide(call, session) method"
        )
    result: ApprovalPolicy = policy
    return result

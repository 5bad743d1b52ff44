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


_SEGMENT_SEPARATORS = re.compile(r"\|\||&&|;|&|\||\$\(|`|\n|\(|\)")
_REDIRECTION = re.compile(r"[<>]")


def shell_segments(command: str) -> list[str]:
    """The simple commands of a shell command line: split at ``;`` ``&`` ``|`` ``&&`` ``||``
    ``$(`` ``(`` ``)`` backquotes and newlines, stripped, empty ones dropped.

    Quotes are not parsed: ``echo "a;b"`` gives two segments, which only makes an allow glob
    less likely and a deny glob more likely to match (the safe side for both).
    """
    return [part.strip() for part in _SEGMENT_SEPARATORS.split(command) if part.strip()]


def matching_glob_every_segment_allows_any_segment_denies(
    rules: GlobRules, call: ToolCall, *, deny: bool
) -> str | None:
    """The glob of ``rules`` matching ``call``, with shell commands matched per segment.

    A tool name glob (``terminal``) matches every call of that tool. For a shell command:

    - **deny** (``deny=True``): a glob matches when it matches the whole command or ANY of its
      segments, so ``terminal:rm *`` refuses ``ls; rm -rf x``.
    - **allow**: a glob that matches only one text (a remembered exact command) approves that
      exact command; ``<tool>:*`` approves every command; any other wildcard glob approves only
      when EVERY segment matches an allow glob and the command has no ``<`` or ``>``
      redirection, so ``terminal:ls *`` does not approve ``ls . && rm x`` nor ``ls > ~/.bashrc``.
    """
    subjects = call_subjects(call)
    if len(subjects) == 1:
        return rules.match(subjects)
    named = rules.match(subjects[:1])
    if named is not None:
        return named
    command = subjects[1][len(call.name) + 1 :]
    prefixes = (call.name,) if call.name == "terminal" else (call.name, "terminal")
    segments = shell_segments(command)
    if deny:
        found = rules.match(subjects[1:])
        for segment in segments:
            if found is not None:
                break
            found = rules.match([f"{prefix}:{segment}" for prefix in prefixes])
        return found
    exact = rules.match(subjects[1:], exact_only=True)
    if exact is not None or _REDIRECTION.search(command) or not segments:
        return exact
    first: str | None = None
    for segment in segments:
        found = rules.match([f"{prefix}:{segment}" for prefix in prefixes])
        if found is None:
            return None
        first = first or found
    return first


def remembered_subject(call: ToolCall) -> str:
    """What a "session" or "always" answer remembers: the exact command for shell tools,
    the tool name otherwise. Glob characters are escaped so the pattern matches only itself."""
    subjects = call_subjects(call)
    return glob_escape(subjects[1] if len(subjects) > 1 else subjects[0])


def glob_escape(text: str) -> str:
    """``text`` as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _is_exact_or_catch_all(pattern: str) -> bool:
    if pattern.endswith(":*") and not re.search(r"[*?\[]", pattern[:-2]):
        return True
    return not re.search(r"[*?\[]", re.sub(r"\[[^\]]\]", "", pattern))


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
        # No DOTALL: ``*`` does not span a newline, which separates shell commands.
        self._compiled.append((pattern, re.compile(fnmatch.translate(pattern))))

    def match(self, subjects: Sequence[str], *, exact_only: bool = False) -> str | None:
        """The first glob matching one of ``subjects``, or ``None``.

        ``exact_only`` considers only globs that match a single text (no wildcard, or escaped
        ones like ``[*]``) and the catch-all ``<name>:*``.
        """
        for pattern, regex in self._compiled:
            if exact_only and not _is_exact_or_catch_all(pattern):
                continue
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

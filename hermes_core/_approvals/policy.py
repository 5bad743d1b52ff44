"""Approval policies: who decides whether a call may run, and the allow and deny globs.

A policy answers :class:`Decision` ``allow``, ``deny`` or ``ask`` for every call. The dispatcher
applies ``approvals.deny`` before any policy (so no policy can let a denied call through) and
``approvals.allow`` before asking the policy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from hermes_core._specs import ToolCall

if TYPE_CHECKING:
    from hermes_core._session import Session

DecisionAction = Literal["allow", "deny", "ask"]

SHELL_COMMAND_META = "shell_command_argument"
"""``Tool.meta`` key naming the argument that holds a shell command (``terminal`` and
``process_manage`` set it). Such calls are also matched as ``terminal:<command>``."""

SHELL_GLOB_PREFIX = "terminal"
"""The tool part under which every shell command is also matched, whatever tool runs it (a
tool marked with :data:`SHELL_COMMAND_META`): ``terminal:rm *`` refuses ``rm`` however it is
run. It is a word of the glob language, named after the bundled shell tool, not a tool the
rules look for: a call's own name is matched as well, and a call of a tool named so is
matched under it once."""


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
    if call.name != SHELL_GLOB_PREFIX:
        subjects.append(f"{SHELL_GLOB_PREFIX}:{command}")
    return tuple(subjects)


@dataclass(frozen=True)
class GlobMatch:
    """The glob of ``approvals.allow`` or ``approvals.deny`` that matched a call."""

    pattern: str
    unparseable: str = ""
    """For a deny glob matched only because the command line cannot be read, why it cannot
    (``"command substitution"``); empty otherwise."""

    def explanation(self) -> str:
        """What follows the pattern in a denial: why an unreadable command line matched."""
        if not self.unparseable:
            return ""
        return (
            f": the command line has {self.unparseable}, so a deny rule cannot tell which "
            "commands it runs and counts as matching it"
        )


def matching_glob_every_segment_allows_any_segment_denies(
    rules: GlobRules, call: ToolCall, *, deny: bool
) -> GlobMatch | None:
    """The glob of ``rules`` matching ``call``, with shell commands matched per segment.

    A tool name glob (``terminal``) matches every call of that tool. For a shell command, read
    by :func:`~hermes_core._approvals.shell.read_command_line`:

    - **deny** (``deny=True``): a glob matches when it matches the whole command, ANY segment
      as written, or any command a segment runs (quotes removed, path reduced to its name,
      assignments and wrappers looked through, also with no arguments), so ``terminal:rm *``
      refuses ``ls; rm -rf x``, ``/bin/rm x``, ``sudo rm x`` and ``xargs rm``. A command line
      that cannot be read (command substitution, ``eval``, here-documents ...) matches the
      first deny glob written for commands of this tool.
    - **allow**: ``<tool>:*`` approves every command, and a glob without wildcards (a remembered
      exact command) approves exactly that command line; any other glob approves only when
      EVERY segment, as written, matches an allow glob, the line has no ``<`` or ``>``
      redirection and can be read, so ``terminal:ls *`` approves neither ``ls . && rm x`` nor
      ``ls > ~/.bashrc`` nor ``ls $(rm x)``.
    """
    subjects = call_subjects(call)
    named = rules.match(subjects[:1])
    if named is not None or len(subjects) == 1:
        return None if named is None else GlobMatch(named)
    command = subjects[1][len(call.name) + 1 :]
    prefixes = (call.name,) if call.name == SHELL_GLOB_PREFIX else (call.name, SHELL_GLOB_PREFIX)
    # Imported here: only a shell command's call needs the reader, not a command that loads
    # policies and checks other tools (a warm ``hermes tools search``).
    from hermes_core._approvals.shell import read_command_line

    line = read_command_line(command)
    if deny:
        found = rules.match(subjects[1:])
        for segment in line.segments:
            if found is not None:
                break
            # "rm" alone also counts as "rm " so that "terminal:rm *" covers "xargs rm".
            texts = (segment.text, *segment.commands, *(f"{c} " for c in segment.commands))
            found = rules.match([f"{prefix}:{text}" for text in texts for prefix in prefixes])
        if found is not None:
            return GlobMatch(found)
        if line.unparseable:
            rule = rules.command_rule(prefixes)
            return None if rule is None else GlobMatch(rule, line.unparseable)
        return None
    whole = rules.catch_all(prefixes) or rules.match(subjects[1:], exact_only=True)
    if whole is not None:
        return GlobMatch(whole)
    if line.unparseable or line.redirects or not line.segments:
        return None
    first: str | None = None
    for segment in line.segments:
        found = rules.match([f"{prefix}:{segment.text}" for prefix in prefixes])
        if found is None:
            return None
        first = first or found
    return None if first is None else GlobMatch(first)


def remembered_subject(call: ToolCall) -> str:
    """What a "session" or "always" answer remembers: the exact command for shell tools,
    the tool name otherwise. Glob characters are escaped so the pattern matches only itself."""
    subjects = call_subjects(call)
    return glob_escape(subjects[1] if len(subjects) > 1 else subjects[0])


def glob_escape(text: str) -> str:
    """``text`` as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


@functools.lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` in ``fnmatch`` syntax (``*``, ``?``, ``[seq]``, ``[!seq]``) as a regular
    expression to ``fullmatch``, in which no wildcard matches a newline: a newline separates
    shell commands, so ``terminal:git status*`` must not reach the next line.

    As in ``fnmatch``, the text between two stars is matched atomically at its first
    occurrence, so a glob with many stars costs linear time on a long command line instead of
    backtracking through every way of splitting it.
    """
    chunks: list[list[str]] = [[]]  # the pattern split at its stars, each as regex pieces
    index, end = 0, len(pattern)
    while index < end:
        char = pattern[index]
        index += 1
        if char == "*":
            if chunks[-1] or len(chunks) == 1:
                chunks.append([])
        elif char == "?":
            chunks[-1].append(r"[^\n]")
        elif char == "[":
            close = index + (pattern[index : index + 1] == "!")
            close = pattern.find("]", close + 1)  # a "]" first in the set is one of its members
            if close < 0:
                chunks[-1].append(r"\[")
                continue
            members = pattern[index:close]
            index = close + 1
            negate = members.startswith("!")
            chunks[-1].append(_glob_set(members[negate:], negate))
        else:
            chunks[-1].append(re.escape(char))
    parts = ["".join(chunk) for chunk in chunks]
    if len(parts) > 1:
        middle = "".join(rf"(?>[^\n]*?{part})" for part in parts[1:-1] if part)
        parts = [parts[0], middle, r"[^\n]*", parts[-1]]
    return re.compile("".join(parts))


def _glob_set(members: str, negate: bool) -> str:
    """A glob's ``[seq]`` (``negate``: ``[!seq]``) as a regex set; ``a-z`` is a range, a
    reversed range matches nothing (as with ``fnmatch``), every other character itself."""
    items: list[str] = []
    index = 0
    while index < len(members):
        if index + 2 < len(members) and members[index + 1] == "-":
            low, high = members[index], members[index + 2]
            if low <= high:
                items.append(f"{re.escape(low)}-{re.escape(high)}")
            index += 3
        else:
            items.append(re.escape(members[index]))
            index += 1
    if negate:
        return rf"[^\n{''.join(items)}]"
    return f"[{''.join(items)}]" if items else "(?!)"


def _is_exact(pattern: str) -> bool:
    """Whether ``pattern`` matches a single text (no wildcard, or only escaped ones ``[*]``)."""
    return not re.search(r"[*?\[]", re.sub(r"\[[^\]]\]", "", pattern))


class GlobRules:
    """Compiled ``approvals.allow`` or ``approvals.deny`` globs (``fnmatch`` syntax,
    case-sensitive, no wildcard matching a newline: see :func:`glob_regex`)."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns: list[str] = []
        self._compiled: list[tuple[str, re.Pattern[str], bool]] = []
        self._any: re.Pattern[str] | None = None
        """Every glob as one alternation: one test per subject rejects most calls."""
        for pattern in patterns:
            self.add(pattern)

    def add(self, pattern: str) -> None:
        """Add one glob (ignored when already present)."""
        if pattern in self.patterns:
            return
        self.patterns.append(pattern)
        self._compiled.append((pattern, glob_regex(pattern), _is_exact(pattern)))
        self._any = None

    def match(self, subjects: Sequence[str], *, exact_only: bool = False) -> str | None:
        """The first glob matching one of ``subjects``, or ``None``.

        ``exact_only`` considers only globs that match a single text (no wildcard, or escaped
        ones like ``[*]``).
        """
        if not self._compiled:
            return None
        if not exact_only:
            if self._any is None:
                alternatives = [f"(?:{regex.pattern})" for _, regex, _ in self._compiled]
                self._any = re.compile("|".join(alternatives) or "(?!)")
            if not any(self._any.fullmatch(subject) for subject in subjects):
                return None
        for pattern, regex, exact in self._compiled:
            if exact_only and not exact:
                continue
            for subject in subjects:
                if regex.fullmatch(subject):
                    return pattern
        return None

    def catch_all(self, prefixes: Sequence[str]) -> str | None:
        """The glob ``<prefix>:*`` (every command of that tool) for one of ``prefixes``."""
        for prefix in prefixes:
            if f"{prefix}:*" in self.patterns:
                return f"{prefix}:*"
        return None

    def command_rule(self, prefixes: Sequence[str]) -> str | None:
        """The first glob written for commands of a tool named in ``prefixes``: one whose part
        before the first ``:`` matches a prefix (``terminal:rm *``, ``*:rm *``)."""
        for pattern, _, _ in self._compiled:
            tool, colon, _ = pattern.partition(":")
            if colon and any(glob_regex(tool).fullmatch(prefix) for prefix in prefixes):
                return pattern
        return None

    def __bool__(self) -> bool:
        return bool(self._compiled)

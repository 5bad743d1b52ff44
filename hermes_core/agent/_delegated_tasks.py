"""What ``delegate_task`` is asked to do: its tasks, read and checked before any child starts.

A subagent knows nothing of the conversation that delegates to it: its first request holds the
system prompt, its goal and its context, nothing else. So a task whose goal or context cannot
stand alone is refused, with the advice the model needs to write a better one (the seed's
``delegate_task(goal="Fix the error")`` is the documented bad use). The rule, in one place
(:func:`vagueness`): a goal of fewer than :data:`MIN_GOAL_WORDS` words, or a context of fewer
than :data:`MIN_CONTEXT_WORDS` words (an empty one included), is refused.

This module also decides what a child may use (:func:`child_grant`): the task's toolsets, or
everything its parent has, never the tools that need the person or outlive the child
(``clarify``, ``memory``, ``cron``, ``messaging``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_core._connector_names import CONNECTORS_TOOLSET
from hermes_core._registry import Registry
from hermes_core._toolsets import registered_toolsets

MIN_GOAL_WORDS: Final = 4
"""A goal says what to do and on what: ``"Fix the error"`` (3 words) cannot."""
MIN_CONTEXT_WORDS: Final = 6
"""A context carries what the child cannot know: paths, the error text, what was tried."""

DELEGATION_TOOLSET: Final = "delegation"
"""The toolset of ``delegate_task``: withheld from children that may not delegate."""
WITHHELD_TOOLSETS: Final = frozenset({"clarify", "memory", "cron", "messaging"})
"""Toolsets a child never gets: they ask the person, or outlive the child."""
WITHHELD_TOOLS: Final = frozenset({"clarify", "memory", "cronjob", "send_message"})
"""Tools a child never gets, whatever their toolset: grants are by toolset, so the toolset
holding one of them is withheld whole (failing closed)."""

ADVICE: Final = (
    "A subagent knows nothing of this conversation: it sees only its goal and its context. "
    'delegate_task(goal="Fix the error") is the classic bad call: which error, in which file, '
    "and how is success checked? A good goal says what to do and how to tell it is done "
    '("Make tests/test_parser.py pass without changing the tests"); a good context holds '
    "everything the subagent needs: file paths, the exact error text, what was tried, "
    "constraints, the form of the answer you want back."
)


@dataclass(frozen=True)
class DelegatedTask:
    """One child's task: its goal, its context, the toolsets it may use (``None``: what its
    parent has; empty: none) and its working directory (``None``: its parent's)."""

    goal: str
    context: str
    toolsets: tuple[str, ...] | None = None
    cwd: str | None = None

    def message(self) -> str:
        """The child's first (and only) user message."""
        return f"{self.goal.strip()}\n\nContext:\n{self.context.strip()}"


class TaskError(ValueError):
    """Arguments of ``delegate_task`` that cannot be run, in words the model can act on."""


def _words(text: str) -> int:
    return len(text.split())


def vagueness(task: DelegatedTask) -> str | None:
    """Why ``task`` cannot stand alone (its goal or context too short), or ``None``."""
    problems = []
    goal_words = _words(task.goal)
    if goal_words < MIN_GOAL_WORDS:
        shown = f"{task.goal.strip()!r} " if goal_words else ""
        problems.append(
            f"its goal {shown}has {goal_words} word{'s' * (goal_words != 1)} "
            f"(at least {MIN_GOAL_WORDS})"
        )
    context_words = _words(task.context)
    if context_words < MIN_CONTEXT_WORDS:
        what = "is empty" if not context_words else f"has {context_words} words"
        problems.append(f"its context {what} (at least {MIN_CONTEXT_WORDS} words)")
    return " and ".join(problems) or None


def _task(entry: Any, where: str) -> DelegatedTask:
    if not isinstance(entry, dict):
        raise TaskError(f"{where} must be an object with goal and context")
    goal, context = entry.get("goal") or "", entry.get("context") or ""
    toolsets, cwd = entry.get("toolsets"), entry.get("cwd")
    if not isinstance(goal, str) or not isinstance(context, str):
        raise TaskError(f"{where}: goal and context must be text")
    if toolsets is not None and not (
        isinstance(toolsets, list) and all(isinstance(name, str) for name in toolsets)
    ):
        raise TaskError(f"{where}: toolsets must be a list of toolset names")
    if cwd is not None and not isinstance(cwd, str):
        raise TaskError(f"{where}: cwd must be a path")
    # [] asks for no tools (a child that only reasons): only a missing list means its parent's.
    granted = tuple(toolsets) if toolsets is not None else None
    return DelegatedTask(goal, context, granted, cwd or None)


def read_tasks(arguments: dict[str, Any]) -> list[DelegatedTask]:
    """The tasks of ``delegate_task``'s arguments (``tasks``, or one ``goal``/``context``
    pair), each checked by :func:`vagueness`; a :class:`TaskError` says what to change."""
    single = {key: arguments[key] for key in ("goal", "context", "toolsets", "cwd")}
    given = {key: value for key, value in single.items() if value is not None}
    entries = arguments.get("tasks")
    if entries is not None and given:
        raise TaskError("give either tasks, or one goal and context, not both")
    if entries is None:
        entries = [given]
    if not isinstance(entries, list) or not entries:
        raise TaskError("tasks must be a non-empty list of {goal, context, toolsets} objects")
    tasks = [_task(entry, f"tasks[{n}]") for n, entry in enumerate(entries)]
    refusals = [
        f"task {number}: {problem}"
        for number, task in enumerate(tasks, start=1)
        if (problem := vagueness(task)) is not None
    ]
    if refusals:
        raise TaskError(
            "delegate_task refused (no subagent was started): "
            + "; ".join(refusals)
            + ". "
            + ADVICE
        )
    return tasks


def child_grant(
    registry: Registry,
    parent: frozenset[str] | None,
    wanted: Iterable[str] | None,
    *,
    may_delegate: bool,
) -> frozenset[str]:
    """The toolsets a child may use: ``wanted`` (each must be among its parent's) or all its
    parent's (``parent`` ``None``: every registered toolset), less those it never gets (and
    ``delegation`` when it may not delegate)."""
    if parent is None:
        available = registered_toolsets(registry.tools()) | {CONNECTORS_TOOLSET}
    else:
        available = parent
    withheld = set(WITHHELD_TOOLSETS)
    for name in WITHHELD_TOOLS:
        tool = registry.get(name)
        if tool is not None:
            withheld.add(tool.toolset)
    if not may_delegate:
        withheld.add(DELEGATION_TOOLSET)
    if wanted is None:
        return frozenset(available - withheld)
    chosen = frozenset(wanted)
    unknown = sorted(chosen - available)
    if unknown:
        known = ", ".join(sorted(available - withheld)) or "none"
        raise TaskError(f"unknown or not granted toolsets {unknown}; this session has: {known}")
    refused = sorted(chosen & withheld)
    if refused:
        raise TaskError(f"subagents cannot use the toolsets {refused}")
    return chosen


def child_cwd(parent: Path, cwd: str | None) -> Path:
    """The child's working directory: its parent's, or ``cwd`` (relative to it), which must
    be an existing directory inside it (the session's directory bounds its file tools, so a
    child cannot be sent out of its parent's)."""
    if cwd is None:
        return parent
    path = (parent / cwd).resolve()
    if not path.is_relative_to(parent.resolve()):
        raise TaskError(f"cwd {cwd!r} is outside the parent's working directory ({parent})")
    if not path.is_dir():
        raise TaskError(f"cwd {cwd!r} is not a directory (relative to {parent})")
    return path

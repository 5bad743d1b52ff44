"""Claude Code's hook events and entry shape, as a ``hooks:`` section pasted from
``.claude/settings.json`` has them, in hermes's words: the problems say what to write instead."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core._config.problems import Loc, Problem

__all__ = [
    "CLAUDE_CODE_EVENTS",
    "claude_entry_problem",
    "claude_event_hint",
    "claude_event_problems",
]

CLAUDE_CODE_EVENTS: Final[Mapping[str, str | None]] = {
    "PreToolUse": "pre_tool_call",
    "PostToolUse": "post_tool_call",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": None,
    "Stop": None,
    "SubagentStop": None,
    "Notification": None,
    "PreCompact": None,
}
"""Each Claude Code hook event and the hermes event to write instead (``None``: there is none)."""


def claude_event_hint(name: object, events: Sequence[str], written: str) -> str | None:
    """What to write instead of the Claude Code event ``name``, hermes having ``events`` and
    ``written`` showing how one is written (``"hooks.{}"``); ``None`` for any other name."""
    if not isinstance(name, str) or name not in CLAUDE_CODE_EVENTS:
        return None
    hermes = CLAUDE_CODE_EVENTS[name]
    if hermes is None:
        return f"Claude Code's {name} has no hermes event (hermes's events: {', '.join(events)})"
    return f"Claude Code's {name} is hermes's {hermes!r}, write {written.format(hermes)}"


def claude_event_problems(
    problems: list[Problem], loc: Loc, events: Sequence[str]
) -> list[Problem]:
    """``problems`` of the ``hooks`` section at ``loc``, an unknown key that is a Claude Code
    event saying what to write instead."""
    return [
        Problem(where, f"unknown key: {hint}")
        if len(where) == len(loc) + 1
        and message.startswith("unknown key")
        and (hint := claude_event_hint(where[-1], events, "hooks.{}")) is not None
        else Problem(where, message)
        for where, message in problems
    ]


def claude_entry_problem(values: Mapping[Any, Any], loc: Loc) -> Problem | None:
    """The problem of a hook entry of Claude Code's shape (``matcher`` and a ``hooks`` list)
    saying the shape hermes reads; ``None`` for any other entry."""
    if "command" in values or not ({"matcher", "hooks"} & set(values)):
        return None
    return Problem(
        loc,
        "this is a Claude Code hook entry (matcher, hooks); hermes runs one command per entry: "
        "write each as '- command: ...' with 'match:' a glob over hermes tool names (such as "
        "'terminal') and 'timeout:' in seconds",
    )

"""What returns of a subagent: its status, its answer (partial unless it completed), why it
stopped, and the files it wrote; in the words the parent's model reads.

A child that reached a limit of the tree's budget returns what it had said so far, marked:
``completed with timeout`` (the wall time), ``stopped at a limit`` (turns or tokens),
``interrupted`` (the user's stop, its parent's cancel) or ``failed`` (the model's error).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_core.agent._events import Finished, ToolFinished, bridged_calls

WRITE_TOOLS: Final = frozenset({"write_file", "patch"})
"""The tools whose ``path`` a child reports as a file it wrote."""

_STATUS: Final = {
    "answer": "completed",
    "max_seconds": "completed with timeout",
    "max_turns": "stopped at a limit",
    "max_tokens": "stopped at a limit",
    "interrupted": "interrupted",
    "error": "failed",
}


@dataclass(frozen=True)
class ChildOutcome:
    """What returns of one child: its status, its answer (partial unless ``completed``), why
    it stopped, and the files it wrote."""

    label: str
    goal: str
    status: str
    text: str
    detail: str = ""
    files: tuple[str, ...] = ()
    session_id: str | None = None

    @property
    def partial(self) -> bool:
        """Whether the answer is partial (a limit, a stop or an error cut the child short)."""
        return self.status != "completed"

    def render(self) -> str:
        """The outcome as the parent's model reads it."""
        status = self.status + (f" ({self.detail})" if self.detail else "")
        if self.partial and self.text:
            status += "; its partial answer follows"
        lines = [f"## {self.label}: {self.goal.strip()}", f"status: {status}"]
        if self.files:
            lines.append("files written: " + ", ".join(self.files))
        lines.append(self.text.strip() or "(no answer)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The outcome as structured content."""
        return {
            "label": self.label,
            "goal": self.goal,
            "status": self.status,
            "partial": self.partial,
            "detail": self.detail,
            "answer": self.text,
            "files": list(self.files),
            "session_id": self.session_id,
        }


def outcome_of(
    label: str, goal: str, end: Finished | None, files: list[str], sid: str
) -> ChildOutcome:
    """The outcome of a child whose last turn ended with ``end``."""
    if end is None:
        return ChildOutcome(label, goal, "failed", "", "the conversation ended without an end")
    detail = end.detail  # an answer's says model.max_output_tokens cut it, else it is empty
    unique = tuple(dict.fromkeys(files))
    return ChildOutcome(label, goal, _STATUS[end.stop], end.text, detail, unique, sid)


def written_files(event: ToolFinished, cwd: Path, base: Path) -> list[str]:
    """The files a successful ``write_file`` or ``patch`` call wrote (direct or through
    ``tool_call``), relative to ``base`` when inside it."""
    if event.is_error:
        return []
    try:
        arguments = json.loads(event.call.arguments)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return []
    calls = bridged_calls(event.call.name, arguments) or [(event.call.name, arguments)]
    found = []
    for name, given in calls:
        if isinstance(given, str):  # a model may send a call's arguments as JSON text
            try:
                given = json.loads(given)
            except (ValueError, RecursionError):
                continue
        path = given.get("path") if isinstance(given, dict) and name in WRITE_TOOLS else None
        if isinstance(path, str) and path:
            written = (cwd / path).resolve()
            found.append(
                str(written.relative_to(base)) if written.is_relative_to(base) else str(written)
            )
    return found


def report(outcomes: list[ChildOutcome]) -> str:
    """Every outcome, as the parent's model reads them."""
    return "\n\n".join(outcome.render() for outcome in outcomes)

"""The ``todo`` toolset: ``todo_list``, the session's task list (deferred by default).

Called without ``todos`` it returns the list; with ``todos`` it replaces the list, or with
``merge: true`` updates items by ``id`` and appends new ones. The list lives in the session, so
it ends with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.plugin import Session, Tool, ToolAnnotations, ToolResult, hookimpl

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_STATE_KEY = "todo.items"
CONTENT_MAX_CHARS = 2000
"""The longest item (the schema's ``maxLength``): each call shows the whole list back."""
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


def todo_list(
    session: Session, todos: list[dict[str, Any]] | None = None, merge: bool = False
) -> ToolResult:
    """Read, replace or merge the session's task list."""
    items: list[dict[str, Any]] = session.state.setdefault(_STATE_KEY, [])
    if todos is not None:
        kept = items if merge else []
        used = {item["id"] for item in kept}
        by_id = {item["id"]: item for item in kept}
        for given in todos:
            item_id = str(given.get("id") or _free_id(used))
            used.add(item_id)
            item = {
                "id": item_id,
                "content": given["content"],
                "status": given.get("status", "pending"),
            }
            if item_id in by_id:
                by_id[item_id].update(item)
            else:
                kept.append(item)
                by_id[item_id] = item
        items[:] = kept
    lines = [f"{_MARKS[item['status']]} {item['id']}. {item['content']}" for item in items]
    done = sum(item["status"] == "completed" for item in items)
    summary = f"{done}/{len(items)} completed" if items else "the task list is empty"
    return ToolResult.text("\n".join([*lines, summary]), structured=[dict(i) for i in items])


def _free_id(used: set[str]) -> str:
    number = len(used) + 1
    while str(number) in used:
        number += 1
    return str(number)


TODO_TOOL = Tool(
    name="todo_list",
    description=(
        "The task list of this session. Without `todos`: show it. With `todos`: replace it, or "
        "with merge=true update items by id and append new ones. Status: pending, in_progress, "
        "completed or cancelled."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        # Every call shows the whole list back: a task, not a document.
                        "content": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": CONTENT_MAX_CHARS,
                        },
                        "status": {"enum": list(_MARKS)},
                    },
                    "required": ["content"],
                    "additionalProperties": False,
                },
            },
            "merge": {"type": "boolean", "default": False},
        },
        "additionalProperties": False,
    },
    handler=todo_list,
    toolset="todo",
    source="builtin",
    source_name="todo",
    annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=True),
    timeout=10.0,
)


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The todo tool."""
    return [TODO_TOOL]

"""The tool ``delegate_task``: its schema, its handler (the calling session's conversation
delegates, :class:`~hermes_core.agent._delegation.Delegations`), and its registration by the
agent on the host it runs on (``hermes serve`` without a model does not offer it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from hermes_core._path_arguments import path_refusal
from hermes_core._session import Session
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.agent._delegated_tasks import (
    DELEGATION_TOOLSET,
    MIN_CONTEXT_WORDS,
    MIN_GOAL_WORDS,
    TaskError,
    read_tasks,
)
from hermes_core.agent._delegation import STATE_KEY, Delegations

if TYPE_CHECKING:
    from hermes_core._registry import Registry

TOOL_NAME: Final = "delegate_task"
_WAIT_SECONDS: Final = 24 * 3600.0
"""The tool's timeout: an orchestrator waits for its workers; the budget bounds the tree."""

_TEXT = {"type": ["string", "null"]}
_TOOLSETS = {"type": ["array", "null"], "items": {"type": "string"}}
_TASK_FIELDS: dict[str, Any] = {
    "goal": {**_TEXT, "description": "What to do and how to tell it is done."},
    "context": {
        **_TEXT,
        "description": "Everything the subagent needs: paths, error text, what was tried.",
    },
    "toolsets": {**_TOOLSETS, "description": "The toolsets it may use ([]: none; omitted: yours)."},
    "cwd": {**_TEXT, "description": "Its working directory, relative to yours (default: yours)."},
}
PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "tasks": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "properties": _TASK_FIELDS,
                "required": ["goal", "context"],
                "additionalProperties": False,
            },
        },
        **_TASK_FIELDS,
    },
    "additionalProperties": False,
}
DESCRIPTION: Final = (
    "Delegate tasks to subagents, each a fresh conversation with its own terminal session that "
    "knows NOTHING of this conversation: it sees only its goal and its context. Give a goal "
    f"(at least {MIN_GOAL_WORDS} words: what to do and how to tell it is done) and a context "
    f"(at least {MIN_CONTEXT_WORDS} words: file paths, exact error text, constraints). "
    "`tasks` runs several at once. Only each subagent's final answer (and the files it wrote) "
    "comes back."
)


async def delegate_task(
    session: Session,
    tasks: list[Any] | None = None,
    goal: str | None = None,
    context: str | None = None,
    toolsets: list[str] | None = None,
    cwd: str | None = None,
) -> ToolResult:
    """The handler of ``delegate_task``: the delegations of the calling session's
    conversation run the tasks."""
    delegations = session.state.get(STATE_KEY)
    if not isinstance(delegations, Delegations):
        return ToolResult.error(
            "NOT_AVAILABLE", "delegate_task runs only inside an agent's conversation."
        )
    arguments = {"tasks": tasks, "goal": goal, "context": context, "toolsets": toolsets, "cwd": cwd}
    try:
        found = read_tasks(arguments)
    except TaskError as exc:
        return ToolResult.error("INVALID_ARGUMENTS", str(exc))
    where = ["cwd"] if tasks is None else [f"tasks[{n}].cwd" for n in range(len(found))]
    cwds = {name: task.cwd for name, task in zip(where, found, strict=True)}
    if (refused := path_refusal(TOOL_NAME, **cwds)) is not None:
        return refused
    return await delegations.delegate(found)


def register_delegate_task(registry: Registry) -> None:
    """Register ``delegate_task`` (a core tool, never deferred) unless it already is."""
    if TOOL_NAME in registry:
        return
    tool = Tool(
        TOOL_NAME,
        DESCRIPTION,
        PARAMETERS,
        handler=delegate_task,
        toolset=DELEGATION_TOOLSET,
        source="builtin",
        source_name="agent",
        annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=False),
        timeout=_WAIT_SECONDS,
        core=True,
    )
    registry.register(tool, owner="agent")

"""The ``clarify`` toolset: ``clarify``, a core tool (never deferred) that asks the person a
question and returns the answer as text.

Who is asked is the session's question transport (``hermes chat`` / ``hermes run``: the
terminal; ``hermes serve``: the client, with an elicitation form; an embedder's own). When
nobody can answer (no terminal, a client without elicitation, no answer within
``plugins.entries.clarify.timeout`` seconds) the result says so, and tells the model to decide
for itself and say what it assumed: a question never hangs a conversation. When the person
stopped the turn at the question, the result says so and tells the model to follow their next
message instead. A session whose
grant leaves out the ``clarify`` toolset (a child of ``delegate_task``) has no such tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Final

from annotated_types import Ge

from hermes_core.plugin import PluginContext, Session, Tool, ToolAnnotations, ToolResult, hookimpl

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_PLUGIN: Final = "clarify"
_MARGIN: Final = 30.0
"""Seconds the tool's own timeout leaves beyond the question's, so the question's timeout is
what ends an unanswered question (with its clear result), not the dispatcher's."""

NOBODY_ANSWERS: Final = "No answer: {why}. Decide yourself and say what you assumed."
"""The result when the question could not be answered (a result, not an error: the model is to
go on without the answer)."""
STOPPED: Final = (
    "No answer: {why}. Do not decide it yourself or go on with the task: follow the person's "
    "next message."
)
"""The result when the person stopped the turn at the question (Ctrl-C, ``/stop``): the model
reads it with their next message, which is what it is to act on."""


@dataclass(frozen=True)
class ClarifyEntry:
    """What ``plugins.entries.clarify`` may set (checked by ``PluginContext.settings_as``)."""

    timeout: Annotated[float, Ge(1)] = 600.0
    """Seconds the person has to answer a question."""


def build_tool(entry: ClarifyEntry) -> Tool:
    """The clarify tool, asking within ``entry.timeout`` seconds."""

    async def clarify(
        session: Session, question: str, choices: list[str] | None = None
    ) -> ToolResult:
        # Here, not at the top: the question transports are for a call, not for every start.
        from hermes_core._plugin_support import Question, questions_of

        asked = Question(question.strip(), tuple(str(c) for c in choices or ()))
        reply = await questions_of(session).ask(asked, entry.timeout)
        if reply.answer is None and reply.stopped:
            note = STOPPED.format(why=reply.why)
            shape = {"answered": False, "why": reply.why, "stopped": True}
            return ToolResult.text(note, structured=shape)
        if reply.answer is None:
            note = NOBODY_ANSWERS.format(why=reply.why)
            return ToolResult.text(note, structured={"answered": False, "why": reply.why})
        return ToolResult.text(reply.answer, structured={"answered": True, "answer": reply.answer})

    return Tool(
        name="clarify",
        description=(
            "Ask the user a question when you cannot go on without their answer (an ambiguous "
            "request, a choice only they can make). Give `choices` when the answer is one of a "
            "few options. Returns their answer as text; when nobody can answer, decide yourself "
            "and say what you assumed."
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 1},
                "choices": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            },
            "required": ["question"],
            "additionalProperties": False,
        },
        handler=clarify,
        toolset="clarify",
        source="builtin",
        source_name=_PLUGIN,
        annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=False),
        timeout=entry.timeout + _MARGIN,
        core=True,
    )


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The clarify tool, configured from ``plugins.entries.clarify``."""
    return [build_tool(PluginContext.of(_PLUGIN, config, env).settings_as(ClarifyEntry))]

"""Approvals asked of the person in the editor: a prompt transport over ACP's
``session/request_permission``.

The dispatcher decides when to ask and what an answer does (a *session* answer remembered, an
*always* answer written to ``approvals.allow``); this transport only asks. The client is shown
the real tool (for a bridge ``tool_call``, the tool it runs), the question every hermes prompt
asks (each argument, the shell command whole, non-printable characters escaped) and, for a
file write or a patch, the diff. Its options are hermes' four answers: *once* (``allow_once``),
*session* and *always* (both ``allow_always``: the names tell them apart) and *deny*
(``reject_once``). A ``cancelled`` outcome, an unknown option, a failed request or the
session's cancel while the question is open are all a denial: only a person's choice allows.
The request's ``toolCall`` puts the call back to ``pending`` (awaiting approval); an allowed
call is said ``in_progress`` again before it runs.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from hermes_core._acp.toolcalls import (
    child_call_id,
    fenced,
    locations_of,
    started_content,
    title_of,
    tool_kind,
)
from hermes_core._approvals.prompt import Answer, ApprovalRequest, question_text

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import PermissionOption, PermissionOptionKind, RequestPermissionResponse

    from hermes_core._acp.toolcalls import ToolContent

_log = logging.getLogger(__name__)

OPTIONS: Final[tuple[tuple[Answer, str, PermissionOptionKind], ...]] = (
    ("once", "Allow once", "allow_once"),
    ("session", "Allow for this session", "allow_always"),
    ("always", "Always allow (saved to approvals.allow)", "allow_always"),
    ("deny", "Deny", "reject_once"),
)
"""hermes' answers as permission options: (option id, name, ACP kind)."""


def permission_options() -> list[PermissionOption]:
    """The options every permission request offers."""
    from acp.schema import PermissionOption

    return [
        PermissionOption(option_id=answer, name=name, kind=kind) for answer, name, kind in OPTIONS
    ]


_ASKED_BY: Final = re.compile(r"asked by ([^:\s]+)")
"""How a subagent's prompt names it in the reason (``agent._child_prompt``)."""


def _asking_call(request: ApprovalRequest) -> str | None:
    """The tool call of the subagent asking, when a subagent asks (it runs beside its parent's
    calls, a background one after its ``delegate_task`` call has ended)."""
    found = _ASKED_BY.match(request.reason)
    return child_call_id(found.group(1)) if found is not None else None


class AcpPermissionPrompt:
    """Asks the client of one ACP session. ``call_id`` gives the id of the tool call being run
    (the one the editor already shows); ``cancelled`` is the session's cancel of the running
    prompt, which denies a question still open."""

    interactive = True

    def __init__(
        self,
        client: Client,
        session_id: str,
        cwd: Path,
        call_id: Callable[[], str],
        cancelled: Callable[[], asyncio.Event],
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._cwd = cwd
        self._call_id = call_id
        self._cancelled = cancelled

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """Send the question and wait for the person's choice (the dispatcher enforces
        ``timeout``)."""
        from acp import text_block, tool_content
        from acp.schema import ToolCallUpdate

        entries = [(request.tool_name, dict(request.arguments))]
        content: list[ToolContent] = [tool_content(text_block(fenced(question_text(request))))]
        content.extend(started_content(self._cwd, entries))
        tool_call = ToolCallUpdate(
            tool_call_id=_asking_call(request) or self._call_id(),
            title=title_of((request.tool_name,), entries),
            kind=tool_kind((request.tool_name,)),
            status="pending",
            content=content,
            locations=locations_of(self._cwd, entries) or None,
            raw_input=dict(request.arguments),
        )
        cancelled = self._cancelled()
        if cancelled.is_set():
            return "deny"
        asked = asyncio.ensure_future(
            self._client.request_permission(
                session_id=self._session_id, tool_call=tool_call, options=permission_options()
            )
        )
        stopped = asyncio.ensure_future(cancelled.wait())
        try:
            await asyncio.wait({asked, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not asked.done():
                asked.cancel()
            elif not asked.cancelled():
                # Taken here too when this task is cancelled (the client left): its failure
                # is no news then, and asyncio would log it as never retrieved.
                asked.exception()
        if not asked.done() or asked.cancelled():
            return "deny"
        try:
            response = asked.result()
        except Exception as exc:  # the client failed or left: nobody allowed the call
            _log.warning("the permission request failed (%s): denied", exc)
            return "deny"
        answer = _chosen(response)
        if answer != "deny":
            await self._running(tool_call.tool_call_id)
        return answer

    async def _running(self, call_id: str) -> None:
        """Say the allowed call runs: the request's ``toolCall`` set it back to ``pending``
        (awaiting approval, in ACP's words), and nothing else would until it has ended."""
        from acp.schema import ToolCallProgress

        update = ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
        )
        try:
            await self._client.session_update(session_id=self._session_id, update=update)
        except Exception as exc:  # the client left: the call's end will say so, or nothing
            _log.warning("the tool call's update could not be sent (%s)", exc)


def _chosen(response: RequestPermissionResponse) -> Answer:
    """The person's answer: the option they selected, else a denial."""
    outcome = response.outcome
    if outcome.outcome != "selected":
        return "deny"
    chosen = getattr(outcome, "option_id", None)
    for answer, _name, _kind in OPTIONS:
        if chosen == answer:
            return answer
    return "deny"

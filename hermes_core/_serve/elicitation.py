"""Approval prompts for the person behind a served MCP client.

Every served session has a :class:`ClientPrompt` as its prompt transport, and a
:class:`ClientQuestions` for ``clarify`` (the same route, a form with the question). For each
``tools/call`` the server works out how the client can be asked (:func:`asking_route`) and binds
an :class:`~hermes_core._approvals.prompt.ElicitationPrompt` to the request being served
(:func:`asking_through`); the dispatcher's ``ask`` goes to it.

- ``request``: a 2025-era client on a connection that carries requests to the client (stdio) is
  sent ``elicitation/create`` while the call waits for the answer.
- ``input_required``: a 2026-07-28 client (that era has no requests to the client) is answered
  with an ``input_required`` result holding the form, and sends the call again with the answer
  (:mod:`hermes_core._serve.parked`).
- no route: the client declared no form elicitation, or its connection cannot carry a request to
  it (a 2025-era client over stateless HTTP, whose answer would arrive as a new, unrelated HTTP
  request): ``approvals.non_interactive`` answers, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import mcp_types
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hermes_core._approvals.prompt import (
    Answer,
    ApprovalRequest,
    Elicit,
    ElicitationPrompt,
    ElicitReply,
    NonInteractivePrompt,
)
from hermes_core._approvals.questions import ElicitationQuestions, Question, Reply

__all__ = [
    "AskingRoute",
    "ClientPrompt",
    "ClientQuestions",
    "accepts_form_elicitation",
    "asking_route",
    "asking_through",
    "request_elicit",
]

AskingRoute = Literal["request", "input_required"]

_asking: ContextVar[ElicitationPrompt | None] = ContextVar("hermes_serve_asking", default=None)
"""The prompt of the request being served; a context variable because one stdio session serves
concurrent requests, each with its own channel to the client."""


class ClientPrompt:
    """The prompt transport of every served session: the prompt bound to the request being
    served when its client can be asked, else the ``approvals.non_interactive`` answer."""

    def __init__(self, non_interactive: Literal["deny", "allow"]) -> None:
        self._nobody = NonInteractivePrompt(non_interactive)

    @property
    def interactive(self) -> bool:
        """Whether the client of the request being served can be asked."""
        return _asking.get() is not None

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """Ask the client of the request being served, or answer for nobody."""
        prompt = _asking.get()
        if prompt is None:
            return await self._nobody.ask(request, timeout)
        return await prompt.ask(request, timeout)


class ClientQuestions:
    """The question transport (``clarify``) of every served session: an elicitation form to
    the client of the request being served when it takes one, else "nobody can answer".

    A question waits ``max_wait`` seconds at most (``approvals.timeout``): a 2026-era client's
    answer is refused after that, as an approval's is."""

    def __init__(self, max_wait: float) -> None:
        self._max_wait = max_wait

    async def ask(self, question: Question, timeout: float) -> Reply:
        """Ask the client of the request being served, or say why nobody can answer."""
        prompt = _asking.get()
        if prompt is None:
            return Reply(
                None, "nobody can answer questions here (the MCP client takes no elicitation form)"
            )
        wait = min(timeout, self._max_wait)
        return await ElicitationQuestions(prompt.elicit).ask(question, wait)


@contextmanager
def asking_through(prompt: ElicitationPrompt | None) -> Iterator[None]:
    """Within the block (and the tasks it starts), approvals of this request ask ``prompt``
    (``None``: nobody can be asked)."""
    token = _asking.set(prompt)
    try:
        yield
    finally:
        _asking.reset(token)


def accepts_form_elicitation(capabilities: mcp_types.ClientCapabilities | None) -> bool:
    """Whether a client with ``capabilities`` takes form elicitations: it declared
    ``elicitation.form``, or a bare ``elicitation`` (which means form before URL mode existed)."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def asking_route(ctx: ServerRequestContext[Any, Any]) -> AskingRoute | None:
    """How the client of this request can be asked to approve a call, if at all."""
    if not accepts_form_elicitation(ctx.session.client_capabilities):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    if ctx.session.can_send_request:
        return "request"
    return None


def request_elicit(ctx: ServerRequestContext[Any, Any]) -> Elicit:
    """Send the form as an ``elicitation/create`` request tied to this request (2025 era)."""

    async def elicit(message: str, schema: dict[str, Any]) -> ElicitReply:
        return await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)

    return elicit

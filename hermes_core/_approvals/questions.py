"""Questions put to a person (the ``clarify`` tool), and who can answer them in a session.

A :class:`QuestionTransport` is attached to a session (:func:`attach_questions`) by whoever
runs it, as its approval prompt is: ``hermes chat`` and ``hermes run`` attach the terminal
(:class:`TerminalQuestions`, when stdin is one), ``hermes serve`` the client of the request
being served (an elicitation form, :class:`ElicitationQuestions`), an embedder its own.
A session with none attached has nobody to ask: :func:`questions_of` then answers at once that
nobody can, so a question never hangs. A transport says why there was no answer (nobody is
there, the person declined, nobody answered in time) so the model can decide for itself, or
that the person stopped the turn there (then it is not to).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from hermes_core._approvals.prompt import Elicit, read_line, write_flushed
from hermes_core._shown import printable, printable_lines

if TYPE_CHECKING:
    from hermes_core._session import Session

_STATE_KEY: Final = "hermes.questions"
ANSWER_FIELD: Final = "answer"
"""The one field of the question form: the person's answer (free text, or one of the choices)."""


@dataclass(frozen=True)
class Question:
    """What the person is asked: ``text``, and the ``choices`` offered (none: any answer)."""

    text: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reply:
    """The person's ``answer``, or ``None`` with ``why`` nobody answered (in words the model
    reads: "nobody answered within 300 s"); ``stopped``: the person stopped the whole turn at
    the question (the model is not to go on deciding for them)."""

    answer: str | None
    why: str = ""
    stopped: bool = False


@runtime_checkable
class QuestionTransport(Protocol):
    """Puts a :class:`Question` to a person and brings back the :class:`Reply`."""

    async def ask(self, question: Question, timeout: float) -> Reply:
        """The answer, or a reply saying why there is none, within ``timeout`` seconds."""
        ...


@dataclass(frozen=True)
class NobodyToAsk:
    """The transport of a session nobody can answer for: every question is answered at once
    with ``why``."""

    why: str = "nobody can answer questions here (no terminal or client is attached)"

    async def ask(self, question: Question, timeout: float) -> Reply:
        """No answer, and why."""
        return Reply(None, self.why)


def attach_questions(session: Session, transport: QuestionTransport | None) -> None:
    """``transport`` answers ``session``'s questions from now on (``None``: nobody)."""
    if transport is None:
        session.state.pop(_STATE_KEY, None)
    else:
        session.state[_STATE_KEY] = transport


def questions_of(session: Session) -> QuestionTransport:
    """Who answers ``session``'s questions (:class:`NobodyToAsk` when nobody was attached)."""
    found = session.state.get(_STATE_KEY)
    return found if isinstance(found, QuestionTransport) else NobodyToAsk()


def question_lines(question: Question) -> str:
    """What a terminal shows: the question on its lines (the later ones indented), then the
    choices numbered, every other non-printable character escaped (a model's text must not
    move the cursor or hide a line)."""
    text = printable_lines(question.text).replace("\n", "\n  ")
    lines = [f"hermes: the agent asks: {text}"]
    lines += [f"  {number}. {printable(c)}" for number, c in enumerate(question.choices, 1)]
    return "\n".join(lines)


class TerminalQuestions:
    """Asks on a terminal: writes the question to ``output`` and reads one line from ``input``
    (a file object with a descriptor, or the descriptor), with a deadline, as
    :class:`~hermes_core._approvals.prompt.TerminalPrompt` does. With choices, a number picks
    one and any other text is the answer as typed. End of input is "the person did not
    answer"."""

    def __init__(self, input: IO[Any] | int, output: IO[str]) -> None:
        self._fd = input if isinstance(input, int) else input.fileno()
        self._output = output

    async def ask(self, question: Question, timeout: float) -> Reply:
        """Ask until a non-empty answer, end of input or ``timeout`` seconds."""
        import anyio.to_thread

        deadline = time.monotonic() + timeout
        return await anyio.to_thread.run_sync(
            self._ask_blocking, question, deadline, timeout, abandon_on_cancel=True
        )

    def _ask_blocking(self, question: Question, deadline: float, timeout: float) -> Reply:
        hint = "a number or your own words" if question.choices else "your answer"
        write_flushed(self._output, f"\n{question_lines(question)}\n{hint}: ")
        while True:
            line = read_line(self._fd, deadline)
            if line is None:
                write_flushed(self._output, "\nno answer\n")
                return Reply(None, f"nobody answered within {timeout:g} s")
            if line == "\x04":
                write_flushed(self._output, "\nend of input: no answer\n")  # Ctrl-D ends no line
                return Reply(None, "the person closed the question without answering")
            text = line.strip()
            if text:
                return Reply(_chosen(text, question.choices))
            write_flushed(self._output, f"{hint}: ")


def _chosen(text: str, choices: tuple[str, ...]) -> str:
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text


class ElicitationQuestions:
    """Asks the person behind an MCP client with one form elicitation: the question as the
    message, one required field ``answer``, free text or a single choice among the choices.
    A declined or dismissed form is "the person declined to answer"."""

    def __init__(self, elicit: Elicit) -> None:
        self._elicit = elicit

    @staticmethod
    def requested_schema(question: Question) -> dict[str, Any]:
        """The form: one required string field, ``answer`` (a choice when there are choices)."""
        field: dict[str, Any] = {"type": "string", "title": "Your answer"}
        if question.choices:
            field["title"] = "Your choice"
            field["oneOf"] = [{"const": choice, "title": choice} for choice in question.choices]
        return {
            "type": "object",
            "properties": {ANSWER_FIELD: field},
            "required": [ANSWER_FIELD],
        }

    async def ask(self, question: Question, timeout: float) -> Reply:
        """Send the form and wait ``timeout`` seconds at most for the reply."""
        import anyio

        message = f"The agent asks (hermes clarify):\n{printable(question.text)}"
        with anyio.move_on_after(timeout):
            reply = await self._elicit(message, self.requested_schema(question))
            if reply.action != "accept" or reply.content is None:
                return Reply(None, "the person declined to answer")
            answer = reply.content.get(ANSWER_FIELD)
            if not isinstance(answer, str) or not answer.strip():
                return Reply(None, "the person gave no answer")
            return Reply(answer.strip())
        return Reply(None, f"nobody answered within {timeout:g} s")

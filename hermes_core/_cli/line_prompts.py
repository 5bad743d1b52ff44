"""The prompts a turn opens on the terminal (an approval, ``clarify``'s question, an MCP
server's form), each reading its answer from the one reader of the terminal,
:class:`~hermes_core._cli.terminal_lines.TerminalLines`, through a pipe of its own."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import mcp_types

    from hermes_core._approvals.prompt import Answer, ApprovalRequest
    from hermes_core._approvals.questions import Question, Reply
    from hermes_core._cli.terminal_lines import TerminalLines


class LinePrompt:
    """An approval prompt on the terminal, reading its answer from :class:`TerminalLines`."""

    interactive = True

    def __init__(self, lines: TerminalLines, output: IO[str]) -> None:
        self._lines = lines
        self._output = output

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        """The terminal prompt's answer (end of input or a stopped turn: deny)."""
        from hermes_core._approvals.prompt import TerminalPrompt

        with self._lines.answering() as fd:
            return await TerminalPrompt(fd, self._output).ask(request, timeout)


class LineQuestions:
    """``clarify``'s questions on the terminal, reading the answer from :class:`TerminalLines`."""

    def __init__(self, lines: TerminalLines, output: IO[str]) -> None:
        self._lines = lines
        self._output = output

    async def ask(self, question: Question, timeout: float) -> Reply:
        """The person's answer, or why there is none."""
        from hermes_core._approvals.questions import Reply, TerminalQuestions

        with self._lines.answering() as fd:
            reply = await TerminalQuestions(fd, self._output).ask(question, timeout)
        if reply.answer is None and self._lines.turn_stopped:
            # Not "closed the question": the whole turn ends; the model reads this next turn.
            return Reply(None, "the person stopped the turn at this question", stopped=True)
        return reply


class LineForms:
    """An MCP server's form (elicitation during a call) asked on the terminal, field by field
    (:class:`~hermes_core._mcp.terminal_form.TerminalForms`), reading from ``lines`` once it is
    set: the form answerer is bound before the host connects its servers (so they are told a
    person can answer), the reader starts with the conversation."""

    def __init__(self, output: IO[str]) -> None:
        self._output = output
        self.lines: TerminalLines | None = None

    async def answer(
        self, server: str, form: mcp_types.ElicitRequestFormParams
    ) -> mcp_types.ElicitResult | None:
        """The person's reply, or ``None`` before the terminal is read."""
        from hermes_core._mcp.terminal_form import TerminalForms

        if self.lines is None:
            return None
        with self.lines.answering() as fd:
            return await TerminalForms(fd, self._output).answer(server, form)

"""``hermes run "PROMPT"``: one turn of a conversation with the configured model, printed as it
streams (see :mod:`hermes_core._cli.agent_events`), then exit. The prompt may come from stdin,
or be followed by what is piped in (:mod:`hermes_core._cli.piped_prompt`).

The host is built as for every command (``--config``, ``HERMES_HOME``); the model is the
``model`` section's (``model.provider`` names the provider plugin). With a terminal on stdin,
approvals and ``clarify`` questions are asked there (:mod:`hermes_core._cli.terminal_lines`);
without one, ``approvals.non_interactive`` answers and nobody answers questions. Ctrl-C stops
the turn (the end says ``interrupted``); a second Ctrl-C exits at once.

Exit status: 0 an answer, 1 a model error, 2 a configuration problem, 3 a limit (turns, tokens,
time), 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from hermes_core._cli.agent_events import EventPrinter, exit_status, thinking_option
from hermes_core._cli.chat_commands import model_option
from hermes_core._cli.resuming import agent_resuming, resume_options

if TYPE_CHECKING:
    from hermes_core._cli.line_prompts import LineForms
    from hermes_core._cli.terminal_lines import TerminalLines
    from hermes_core._host import Host
    from hermes_core._session import Session
    from hermes_core.agent._agent import Agent
    from hermes_core.agent._events import Finished

INTERRUPTED_STATUS = 130
STOPPING = "hermes: stopping the turn (Ctrl-C again exits at once)"
"""What the first Ctrl-C says on stderr."""
T = TypeVar("T")


def build_agent(host: Host) -> Agent:
    """The agent of the host's ``model`` section (:meth:`Agent.from_host`): a ``ConfigError``
    (exit 2) naming the key to set when no model is, and the provider's ``RegistrationError``
    (listing the valid names) when ``model.provider`` names none."""
    from hermes_core.agent._agent import Agent

    return Agent.from_host(host)


def session_fields(host: Host, lines: TerminalLines | None) -> dict[str, Any]:
    """Who answers the session's approvals and questions: the terminal ``lines`` reads, else
    the ``approvals.non_interactive`` answer and nobody."""
    from hermes_core._approvals.prompt import NonInteractivePrompt
    from hermes_core._cli.line_prompts import LinePrompt

    if lines is None:
        answer = host.config.approvals.non_interactive
        return {"interactive": False, "prompt": NonInteractivePrompt(answer)}
    return {"interactive": True, "prompt": LinePrompt(lines, sys.stderr)}


def attach_terminal_questions(
    session: Session, lines: TerminalLines | None, *, stdin: str = "stdin is not a terminal"
) -> None:
    """``clarify`` asks on the terminal ``lines`` reads (none: nobody can answer, ``stdin``
    saying why)."""
    from hermes_core._approvals.questions import NobodyToAsk, attach_questions
    from hermes_core._cli.line_prompts import LineQuestions

    if lines is None:
        attach_questions(session, NobodyToAsk(f"nobody can answer questions here ({stdin})"))
    else:
        attach_questions(session, LineQuestions(lines, sys.stderr))


def terminal_lines(forms: LineForms | None) -> TerminalLines | None:
    """The reader of stdin when it is a terminal, started, and given to ``forms`` (a line
    typed outside a prompt is dropped: nothing else reads it); else ``None``."""
    from hermes_core._cli.terminal_lines import TerminalLines

    if not sys.stdin.isatty():
        return None
    lines = TerminalLines(sys.stdin.fileno(), lambda line: True)
    lines.start()
    if forms is not None:
        forms.lines = lines
    return lines


def run_agent_host(work: Callable[[Host, LineForms | None], Awaitable[T]]) -> T:
    """Start the host as every command does, every MCP server waited for (the model's first
    request lists all their tools), and run ``work`` with ``sys.stdout`` sent to stderr (make
    the answer's printer before). With a terminal on stdin, an MCP
    server's forms are asked there (``work`` gets the answerer to give the terminal's reader
    to); Ctrl-C before the work has begun exits with status 130."""
    from hermes_core._cli.host_runs import run_with_host
    from hermes_core._cli.line_prompts import LineForms
    from hermes_core._mcp.elicitation import answering_forms

    forms = LineForms(sys.stderr) if sys.stdin.isatty() else None

    async def started(host: Host) -> T:
        return await work(host, forms)

    try:
        # stdout is the answer's: the printers keep the stream they were made with, and what
        # a hook or plugin prints while the host runs goes to stderr (run_with_host).
        with answering_forms(forms):
            return run_with_host(started)
    except KeyboardInterrupt:  # Ctrl-C while the host was starting
        interrupted_exit()


def interrupted_exit(*, at_once: bool = False) -> NoReturn:
    """Say ``interrupted`` and exit with status 130; ``at_once``: without unwinding (a second
    Ctrl-C must not wait for what is still running)."""
    from hermes_core._cli.terminal_lines import restore_terminals

    restore_terminals()
    sys.stderr.write("\nhermes: interrupted\n")
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    if at_once:
        os._exit(INTERRUPTED_STATUS)
    sys.exit(INTERRUPTED_STATUS)


@contextmanager
def ctrl_c(stop: Callable[[], bool], quietly: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """In the block, Ctrl-C (SIGINT) calls ``stop`` and says :data:`STOPPING`; when ``stop``
    returns ``False`` (nothing left to stop: a second Ctrl-C, or nothing running), ``quietly``
    (the chat's: a line typed is thrown away), and when that returns ``False`` too the process
    exits at once, status 130."""
    import asyncio  # here, not at the top: hermes --help imports this module

    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        if not stop():
            if not quietly():
                interrupted_exit(at_once=True)
            return
        with suppress(OSError, ValueError):
            sys.stderr.write(f"\n{STOPPING}\n")
            sys.stderr.flush()

    loop.add_signal_handler(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


@click.command("run")
@click.argument("prompt", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON event per line on stdout.")
@thinking_option("on stderr (with --json: as thinking events)")
@model_option
@resume_options
def run(
    prompt: str | None,
    as_json: bool,
    show_thinking: bool,
    last: bool,
    session: str | None,
    model: str | None,
) -> None:
    """Send PROMPT to the configured model (model.provider, model.model) and print its answer.

    Tool calls run through the host as every call does (hooks, approvals, the activity log);
    each is shown on stderr with the real tool's name. With a terminal on stdin, approvals and
    the model's questions (clarify) are asked there; without one, approvals.non_interactive
    applies. Ctrl-C stops the turn; a second Ctrl-C exits at once. Exit status: 0 an answer,
    1 a model error, 2 a configuration problem, 3 a limit, 130 interrupted. --continue and
    --resume SESSION send PROMPT to an earlier conversation, as hermes chat's do. -m/--model
    NAME asks model NAME of the configured provider this time (not saved), as chat's /model.
    --show-thinking shows a reasoning model's thinking on stderr, dimmed at a terminal (with
    --json: as "thinking" events, left out otherwise).

    PROMPT "-" (or none, stdin not a terminal) reads the prompt from stdin; PROMPT with text
    piped or redirected in sends PROMPT, a blank line, then that text (UTF-8, at most 64 MiB).
    A program running hermes run PROMPT with a pipe as its stdin gives it < /dev/null when
    nothing is meant to be piped in.
    """
    from hermes_core._cli.output import refuse_closed_stdout

    refuse_closed_stdout("run")
    prompt, piped = _prompt(prompt)
    printer = EventPrinter(as_json=as_json, show_thinking=show_thinking)

    async def work(host: Host, forms: LineForms | None) -> int:
        from hermes_core.agent._events import Finished
        from hermes_core.agent._settling import send_until_settled

        agent, taken_up = await agent_resuming(
            host, last=last, session=session, command="run", model=model
        )
        lines = terminal_lines(forms)
        finished: Finished | None = None
        held: Finished | None = None
        stopping = False
        fields = session_fields(host, lines)
        if taken_up is not None:
            fields["id"] = taken_up.session_id
            for line in taken_up.summary:
                printer.note(line)
        try:
            async with host.session(**fields) as opened:
                attach_terminal_questions(opened, lines, stdin=piped)
                conversation = agent.conversation(opened)
                if taken_up is not None:
                    conversation.messages.extend(taken_up.messages)

                def stop() -> bool:
                    nonlocal stopping
                    printer.end_line()  # now: a second Ctrl-C exits before the turn's end
                    if stopping:
                        return False
                    stopping = True
                    conversation.cancel()
                    if lines is not None:
                        lines.stop_turn()
                    return True

                try:
                    with ctrl_c(stop):
                        async for event in send_until_settled(conversation, prompt):
                            if held is not None:  # a turn the run went on after
                                printer.turn_ended(held)
                                held = None
                            if isinstance(event, Finished):
                                # the last is the run's end, shown after its subagents' ends
                                finished = held = event
                            else:
                                printer.show(event)
                finally:
                    await conversation.aclose()
                for child_event in conversation.delegations.take_events():
                    printer.show(child_event)
                if held is not None:
                    printer.show(held)
        finally:
            if lines is not None:
                lines.close()
            await agent.aclose()
        if stopping:
            if finished is None or finished.stop != "interrupted":  # after the last turn ended
                printer.note("hermes: stop: interrupted: stopped by the user")
            return INTERRUPTED_STATUS
        return exit_status(finished)

    sys.exit(run_agent_host(work))


def _prompt(given: str | None) -> tuple[str, str]:
    """The prompt ``hermes run`` sends (:mod:`hermes_core._cli.piped_prompt`: ``-`` or none
    read from stdin, what is piped in after PROMPT) and why nobody answers questions on stdin
    when it is not a terminal; a usage error for an empty prompt."""
    from hermes_core._cli.piped_prompt import stdin_has_data, whole_prompt, with_piped_text

    terminal = sys.stdin is not None and sys.stdin.isatty()
    read = "stdin is the prompt's text, not a terminal: answers are not read from it"
    try:
        if given == "-" or (given is None and not terminal):
            return whole_prompt(), read
        if given is None:
            raise click.UsageError(
                "missing PROMPT: hermes run PROMPT, or pipe it in (hermes run -)"
            )
        if not given.strip():  # `hermes run "$PROMPT"` with PROMPT unset: nothing to ask
            raise click.UsageError("PROMPT is empty: give the model something to do")
        sent = with_piped_text(given) if not terminal and stdin_has_data() else given
    except KeyboardInterrupt:  # Ctrl-C while stdin is read
        interrupted_exit()
    return sent, read if sent != given else "stdin is not a terminal"

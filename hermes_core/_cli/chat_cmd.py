"""``hermes chat``: a conversation with the configured model on the terminal.

A ``you> `` prompt (on a terminal; piped, none) reads a message; the answer streams to
stdout and tool calls are short lines on stderr, as in ``hermes run``. Commands: ``/help``
(or ``/?``) lists them, ``/stop`` stops the running turn, ``/compact`` replaces all but the
last exchange by a summary the model writes, ``/new`` starts a new conversation
(a new session), ``/resume`` lists this directory's recent conversations and
``/resume NUMBER`` or ``/resume ID`` switches to one
(:class:`~hermes_core._cli.resuming.ResumeCommand`), ``/usage``, ``/model``, ``/retry`` and
``/undo`` act on the conversation between turns (:mod:`hermes_core._cli.chat_commands`, which
holds the list of commands), ``/exit`` (or end of input) quits. The
results of a background delegation (``delegate_task``) that arrive while the chat waits for a
line are sent to the model as the next message at once; its subagents' started and finished
lines are shown as they come, also while the chat waits. Leaving a conversation (``/new``,
``/resume``, ``/exit``) stops its subagents still running, saying how many when there were some.

stdin has one reader (:class:`~hermes_core._cli.terminal_lines.TerminalLines`): while an
approval prompt or a question is open, the line typed is its answer; while a turn runs
otherwise, a line is not sent (it says so); when idle, a line is the next message. ``/stop``,
typed anywhere, and Ctrl-C stop the running turn (an open prompt ends as denied); Ctrl-C with
nothing running, or a second one before the turn has stopped, exits at once.

At a terminal, lines pasted together are one message (the reader's bursts; a prompt takes no
paste), and a message whose last line ends in a backslash goes on on the next line (a
``...> `` prompt): a message of several lines is never a command. Piped, each line is a
message, as typed.

At a terminal a line editor reads the keys (:mod:`hermes_core._cli.line_editor`: arrows, Emacs
keys, Tab completing a command, Up/Down and Ctrl-R through the messages sent, also those of
earlier chats, kept in ``$HERMES_HOME/chat_history`` by :mod:`hermes_core._cli.chat_history`),
and what a turn prints leaves the line being typed whole (:mod:`hermes_core._cli.edited_output`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from hermes_core._cli.agent_events import EventPrinter, exit_status, thinking_option
from hermes_core._cli.chat_commands import (
    COMMANDS,
    ConversationCommands,
    busy_refusal,
    model_option,
)
from hermes_core._cli.resuming import (
    ResumeCommand,
    Resumed,
    ResumeError,
    agent_resuming,
    resume_options,
)
from hermes_core._cli.run_cmd import (
    attach_terminal_questions,
    ctrl_c,
    run_agent_host,
    session_fields,
)

if TYPE_CHECKING:
    from hermes_core._cli.edited_output import EditedOutput
    from hermes_core._cli.line_prompts import LineForms
    from hermes_core._cli.terminal_lines import TerminalLines
    from hermes_core._host import Host
    from hermes_core.agent._agent import Agent
    from hermes_core.agent._conversation import Conversation
    from hermes_core.agent._events import ChildEvent, Finished

PROMPT = "you> "
CONTINUED = "...> "
"""The prompt for the next line of a message whose line ended in a backslash."""
HELP = "/help lists the commands"
SEVERAL_LINES = (
    "a line ending in \\ goes on on the next line; lines pasted at once are one message",
    "(on a terminal; a message of several lines is never a command)",
)


class _Chat:
    """The state of one ``hermes chat``: the running turn's conversation, if any."""

    def __init__(
        self,
        host: Host,
        agent: Agent,
        lines: TerminalLines,
        printer: EventPrinter,
        resumed: Resumed | None = None,
    ) -> None:
        self.host = host
        self.agent = agent
        self.lines = lines
        self.running: Conversation | None = None
        self.stopping = False
        self.printer = printer
        self.last: Finished | None = None
        self._results: list[str] = []
        self._resumed = resumed
        self._resume = ResumeCommand.of(agent.transcripts, agent.model)
        self.commands = ConversationCommands(printer, lines, self._turn, self._switched)

    def _switched(self, model: str) -> None:
        self._resume.model = model  # a conversation /resume takes up goes on with it

    def stop(self) -> bool:
        """Stop the running turn (``/stop``, Ctrl-C); ``False`` when there is nothing left to
        stop (then Ctrl-C exits)."""
        if self.running is None or self.stopping:
            return False
        self.stopping = True
        self.running.cancel()
        self.lines.stop_turn()
        return True

    def discard(self) -> bool:
        """Ctrl-C with no turn running: throw away the line being typed; ``False`` when none
        is (then Ctrl-C exits)."""
        return self.running is None and self.lines.discard_line()

    def busy_line(self, line: str) -> bool:
        """A line typed while no prompt is open: dropped, saying so, when a turn runs on a
        terminal; else left for the next message (piped input is a list of messages, each
        waiting for the previous answer)."""
        if self.running is None or not sys.stdin.isatty():
            return False
        refused = busy_refusal(line)
        if refused is not None:
            self.printer.note(f"{refused} (/stop stops the turn)")
            return True
        if "\n" in line:
            what = f"those {len(line.splitlines())} lines were not sent (/stop stops it)"
        elif line.strip():
            what = "that line was not sent (Up brings it back at the prompt; /stop stops it)"
        else:
            return True
        self.printer.note(f"hermes: a turn is running: {what}")
        return True

    async def talk(self) -> None:
        """Read messages until ``/exit`` or end of input."""
        while True:
            fields = session_fields(self.host, self._asking())
            taken_up, self._resumed = self._resumed, None  # /new starts afresh
            if taken_up is not None:
                fields["id"] = taken_up.session_id
                for line in taken_up.summary:
                    self.printer.note(line)
            async with self.host.session(**fields) as session:
                attach_terminal_questions(session, self._asking())
                conversation = self.agent.conversation(session)
                if taken_up is not None:
                    conversation.messages.extend(taken_up.messages)
                try:
                    again = await self._conversation(conversation)
                finally:
                    stopped = conversation.delegations.unfinished
                    await conversation.aclose()  # stops the subagents still running
                    unsent = conversation.delegations.pending  # held since a stop
            if stopped:
                noun = "subagent" if stopped == 1 else "subagents"
                self.printer.note(f"hermes: stopped {stopped} {noun} of the last conversation")
            elif unsent:
                noun = "delegation's" if unsent == 1 else "delegations'"
                self.printer.note(
                    f"hermes: {unsent} stopped {noun} results were not sent to the model "
                    f"(hermes sessions show {session.id} names its subagents)"
                )
            if not again:
                return
            if self._resumed is None:
                self.printer.note("hermes: a new conversation")

    def _asking(self) -> TerminalLines | None:
        return self.lines if sys.stdin.isatty() else None

    async def _next(self, conversation: Conversation) -> tuple[str | None, bool]:
        """The person's next line, or first the results of a background delegation that
        arrive while the chat waits for it (then ``True``: they are sent as the next
        message, as ``delegate_task`` promises the model), unless the person stopped the last
        turn: then they wait for the person's next message. Its subagents' events are shown
        meanwhile."""
        if self._results:
            return self._results.pop(0), True
        delegations = conversation.delegations
        self._show_idle(delegations.take_events())
        if not delegations.pending:
            return await self.lines.next_line(), False
        import asyncio  # here, not at the top: hermes --help imports this module

        line = asyncio.ensure_future(self.lines.next_line())
        if self.stopping:  # no request the person did not ask for after they stopped one
            async for events in delegations.events_until(line):
                self._show_idle(events)
            return await line, False
        results = asyncio.ensure_future(delegations.next_message())
        async for events in delegations.events_until(line, results):
            self._show_idle(events)
        if not results.done():
            results.cancel()  # a queue's get: cancelled before it took anything
        elif results.result() is not None:
            self._results.append(str(results.result()))
        if line.done() or not self._results:
            return await line, False
        line.cancel()  # the line typed later waits for the next call
        return self._results.pop(0), True

    def _stop_subagents(self, conversation: Conversation) -> None:
        """``/stop`` at the prompt: the background subagents, if any run."""
        running = conversation.delegations.unfinished
        if not running:
            self.printer.note("hermes: nothing is running")
            return
        conversation.delegations.cancel()
        self.stopping = True  # their results wait for the next message
        its = "1 subagent: its" if running == 1 else f"{running} subagents: their"
        self.printer.note(f"hermes: stopping {its} results go to the model after your next message")

    def _show_idle(self, events: list[ChildEvent]) -> None:
        """Subagents' events that came while no turn runs, below the open prompt."""
        if not events:
            return
        at_terminal = sys.stdin.isatty()
        if at_terminal:
            click.echo("")  # ends the prompt's line
        for event in events:
            self.printer.show(event)
        if at_terminal:
            click.echo(PROMPT, nl=False)

    async def _conversation(self, conversation: Conversation) -> bool:
        """Run turns of ``conversation``; ``True`` when ``/new`` or ``/resume`` asks for
        another."""
        at_terminal = sys.stdin.isatty()  # piped, stdout holds the answers alone
        while True:
            if at_terminal:
                click.echo(PROMPT, nl=False)
            line, arrived = await self._next(conversation)
            if arrived:
                self.printer.note("\nhermes: a delegation's results arrived: sent to the model")
                await self._turn(conversation, line or "")
                continue
            if at_terminal and line is not None and line.endswith("\\"):
                line = await self._continued(line)
                if line is None:
                    self.printer.note("hermes: the unfinished message was not sent")
                    return False
            if line is None or line.strip() == "/exit":
                if line is None and at_terminal:
                    click.echo("")  # after the prompt Ctrl-D left open
                return False
            text = line.strip()
            if not text:
                continue
            if "\n" in text:
                if at_terminal:
                    self.printer.note(f"hermes: {len(text.splitlines())} lines sent as one message")
                await self._turn(conversation, line.strip("\n"))
                continue
            if text == "/new":
                return True
            if text == "/stop":
                self._stop_subagents(conversation)
                continue
            if text in ("/help", "/?"):
                self.printer.note("commands:")
                for command, what in COMMANDS:
                    self.printer.note(f"  {command} {what}")
                for note in SEVERAL_LINES:
                    self.printer.note(note)
                continue
            if text == "/compact":
                await self._compact(conversation)
                continue
            if text.split()[0] == "/resume":
                if self._resume_command(text[len("/resume") :].strip(), conversation):
                    return True
                continue
            if await self.commands.run(text, conversation):
                continue
            if text.startswith("/") and " " not in text:
                self.printer.note(f"hermes: unknown command {text}; {HELP}")
                continue
            await self._turn(conversation, line)

    async def _continued(self, line: str) -> str | None:
        """``line`` (ending in a backslash) and the next lines, up to one that does not end in
        one, joined with newlines, the backslashes dropped; ``None`` at end of input."""
        parts = [line[:-1]]
        while True:
            click.echo(CONTINUED, nl=False)
            more = await self.lines.next_line(command=False)
            if more is None:
                click.echo("")
                return None
            if not more.endswith("\\"):
                parts.append(more)
                return "\n".join(parts)
            parts.append(more[:-1])

    def _resume_command(self, argument: str, conversation: Conversation) -> bool:
        """``/resume`` (the listing) or ``/resume NUMBER|ID``: ``True`` when a conversation was
        taken up (the next one :meth:`talk` opens); its refusal is said, and the chat goes on."""
        current = conversation.session.id
        try:
            if not argument:
                for line in self._resume.listing(current):
                    self.printer.note(line)
                return False
            self._resumed = self._resume.take_up(argument, current)
        except ResumeError as exc:
            self.printer.note(f"hermes: {exc}")
            return False
        return True

    async def _compact(self, conversation: Conversation) -> None:
        """``/compact``: the conversation compacted now (``/stop`` and Ctrl-C stop it, and
        nothing changes)."""
        from hermes_core.agent._events import Compacted

        self.running, self.stopping = conversation, False
        compacted = False
        try:
            async for event in conversation.compact():
                self.printer.show(event)
                compacted = compacted or isinstance(event, Compacted)
        finally:
            self.running = None
        if self.stopping:
            self.printer.note("hermes: /compact stopped: the conversation is as it was")
        elif not compacted:
            self.printer.note("hermes: nothing to compact yet")

    async def _turn(self, conversation: Conversation, message: str) -> None:
        from hermes_core.agent._events import Finished

        self.running, self.stopping = conversation, False
        try:
            async for event in conversation.send(message):
                if isinstance(event, Finished):
                    self.last = event
                self.printer.show(event)
        finally:
            self.running = None


@click.command("chat")
@thinking_option("above the answer")
@model_option
@resume_options
def chat(show_thinking: bool, last: bool, session: str | None, model: str | None) -> None:
    """Talk with the configured model (model.provider, model.model) on the terminal.

    Type a message and press Enter; the answer streams, tool calls are shown on stderr and
    approvals are asked on the terminal. /help lists the commands: /stop (or Ctrl-C) stops
    the running turn, /compact replaces all but the last exchange by a summary the model
    writes, /new starts a new conversation, /resume lists this directory's recent
    conversations (/resume NUMBER or /resume ID takes one up), /usage counts the requests and
    tokens and says how full the context is, /model shows the model (/model NAME switches to
    NAME for the rest of the chat, not saved), /title NAME titles the conversation (/title
    --clear takes its title away), /retry sends your last message again, /undo takes it back
    with what followed, /exit or Ctrl-D quits. While a turn runs, a line other than /stop is
    not sent; at an approval prompt or a question, the line is the answer (/stop stops the
    turn there too). On a terminal, lines pasted together are one message, and a line ending
    in a backslash goes on on the next line. Piped, each line is a message, and it exits with
    the status hermes run gives its last turn (1 a model error); at a terminal, 0.

    At a terminal the line is edited as in a shell: arrows, Ctrl-A/Ctrl-E, Alt-B/Alt-F, Up and
    Down through the messages sent (kept in $HERMES_HOME/chat_history; HERMES_NO_CHAT_HISTORY=1
    keeps no file), Ctrl-R to search them, Tab to complete a command.

    --continue takes up the last conversation of this working directory, --resume SESSION
    the one SESSION names (an id, a title or a unique prefix of an id): the model gets its
    messages and the terminal shows where it left off; the conversation goes on in the same
    transcript. -m/--model NAME chats with model NAME of the configured provider (not saved),
    as /model NAME from the start. --show-thinking shows the model's thinking, dimmed.
    """
    from hermes_core._cli.chat_history import ChatHistory, history_file
    from hermes_core._cli.edited_output import EditedOutput, edited
    from hermes_core._cli.output import refuse_closed_stdout
    from hermes_core._cli.terminal_lines import TerminalLines

    refuse_closed_stdout("chat")
    at_terminal = sys.stdin.isatty()
    terminals = [stream for stream in (sys.stdout, sys.stderr) if at_terminal and stream.isatty()]
    outputs = [EditedOutput(stream) for stream in terminals]  # a file gets no escapes
    with edited(outputs):
        printer = EventPrinter.for_chat(show_thinking)  # before the host sends stdout to stderr

        async def work(host: Host, forms: LineForms | None) -> int:
            history = ChatHistory(history_file(host.env)) if at_terminal else None
            commands = [command for command, _ in COMMANDS]
            lines = TerminalLines(sys.stdin.fileno(), history=history, commands=commands)
            try:
                return await _chat(host, forms, lines, printer, outputs, last, session, model)
            finally:
                lines.close()

        status = run_agent_host(work)
    sys.exit(status)


async def _chat(
    host: Host,
    forms: LineForms | None,
    lines: TerminalLines,
    printer: EventPrinter,
    outputs: list[EditedOutput],
    last: bool,
    session: str | None,
    model: str | None,
) -> int:
    """``hermes chat`` once its host runs: the conversation, read from ``lines``."""
    agent, taken_up = await agent_resuming(host, last=last, session=session, model=model)
    state = _Chat(host, agent, lines, printer, taken_up)
    lines.on_busy = state.busy_line
    if sys.stdin.isatty():
        lines.on_stop = state.stop
    if forms is not None:
        forms.lines = lines
    lines.start()
    for output in outputs:
        output.editor = lines.editor
    if sys.stdin.isatty():
        click.echo(f"hermes chat with {agent.model.model} ({HELP})", err=True)
    try:
        with ctrl_c(state.stop, quietly=state.discard):
            await state.talk()
    finally:
        for output in outputs:
            output.editor = None
        lines.close()
        await agent.aclose()
    # Piped, a script reads the status as it reads run's: of the last turn. A person at
    # the terminal saw every failure and went on: that is no failure of the chat.
    if sys.stdin.isatty() or state.last is None:
        return 0
    return exit_status(state.last)

"""The commands of ``hermes chat``: :data:`COMMANDS`, the one list ``/help`` shows and Tab
completes from, and the everyday ones that act on the conversation between turns
(:class:`ConversationCommands`):

- ``/usage``: the conversation's model requests and tokens, its subagents' included, and how
  full its context is (:class:`~hermes_core.agent._conversation_usage.ConversationUsage`);
- ``/model`` shows the provider and the model, ``/model NAME`` switches to NAME (same
  provider) for the rest of the chat (:meth:`~hermes_core.agent.Conversation.use_model`:
  the transcript gets a header naming it); a name the provider does not know is its error at
  the next request, as with ``model.model``. ``-m/--model NAME`` of ``hermes run`` and
  ``hermes chat`` (:func:`model_option`) is the same switch from the start, by the same rule
  (:func:`model_refusal`, :func:`switched_note`);
- ``/title`` shows the conversation's title, ``/title NAME`` gives it one, ``/title
  --clear`` takes it away (:mod:`hermes_core.agent._titles`: a record appended to its
  transcript, its header first when no message was sent yet);
- ``/retry`` sends the person's last message again, what followed it dropped, and ``/undo``
  drops it with what followed, putting it back in the line being typed
  (:mod:`hermes_core.agent._undo`: the transcript records it, so a conversation taken up
  again starts where the chat left it).

While a turn runs each is refused, saying why (:func:`busy_refusal`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from hermes_core._shown import printable

if TYPE_CHECKING:
    from hermes_core._cli.agent_events import EventPrinter
    from hermes_core._cli.terminal_lines import TerminalLines
    from hermes_core.agent._conversation import Conversation
    from hermes_core.agent._undo import TakenBack

COMMANDS: Final = (
    ("/help", "lists these commands (/? too)"),
    ("/stop", "stops the running turn (Ctrl-C too), or at the prompt the subagents"),
    ("/usage", "this conversation's model requests and tokens, and how full its context is"),
    ("/model", "shows the model; /model NAME switches to NAME for the rest of this chat"),
    ("/title", "shows this conversation's title; /title NAME gives it one (--clear: none)"),
    ("/retry", "sends your last message again, its answer dropped"),
    ("/undo", "takes your last message and what followed back (the message back in the line)"),
    ("/compact", "replaces all but the last exchange by a summary the model writes"),
    ("/new", "starts a new conversation"),
    ("/resume", "lists this directory's conversations; /resume NUMBER or ID takes one up"),
    ("/exit", "quits (Ctrl-D too)"),
)
"""Every command of ``hermes chat`` and what it does, as ``/help`` lists them."""

_BETWEEN_TURNS: Final = {
    "/usage": "its counts are the conversation's between turns",
    "/model": "a turn's requests all go to one model",
    "/title": "the conversation's transcript is being written",
    "/retry": "the turn is still adding to the conversation",
    "/undo": "the turn is still adding to the conversation",
}
"""The commands of :class:`ConversationCommands`, and why each waits for the turn's end."""
F = TypeVar("F", bound=Callable[..., Any])


def model_refusal(name: str, usage: str) -> str | None:
    """Why ``name`` is no model name to switch to, in the words of ``usage`` (``/model NAME``,
    ``--model NAME``); ``None`` for a name: the one rule of a model name
    (:func:`~hermes_core.agent._model_names.model_problem`)."""
    from hermes_core.agent._model_names import model_problem

    problem = model_problem(name)
    if problem is None:
        return None
    why = "" if len(name.split()) != 1 else f" ({problem})"
    return f"{usage.split()[0]} takes one name{why}: {usage}"


def switched_note(name: str, provider: str, span: str) -> str:
    """What switching to model ``name`` of ``provider`` for ``span`` (``the rest of this
    chat``, ``this run``) says: nothing saved, an unknown name the provider's error."""
    shown = printable(provider)
    return (
        f"hermes: the model is now {printable(name)} (provider {shown}) for {span}, not saved "
        f"in the configuration; a name {shown} does not know is its error at the next request"
    )


def model_option(command: F) -> F:
    """``-m/--model NAME`` (the keyword ``model``): this invocation asks model NAME of the
    configured provider, refused by :func:`model_refusal`'s rule (exit 2)."""
    return click.option(
        "-m",
        "--model",
        metavar="NAME",
        callback=checked_model,
        help="Ask model NAME of the configured provider (model.provider) this time; not saved.",
    )(command)


def checked_model(context: click.Context, option: click.Parameter, name: str | None) -> str | None:
    """The click callback of a ``--model NAME`` option: NAME without the space around it, or a
    usage error (exit 2) by :func:`model_refusal`'s rule (``hermes cron create --model`` too)."""
    refusal = None if name is None else model_refusal(name, "--model NAME")
    if name is not None and name.strip().startswith("-"):  # the name forgotten: -m --json
        what = "" if name.strip() == "-" else "the option "  # hermes run -m - (stdin's prompt)
        refusal = f"--model takes a model's name, not {what}{name.strip()!r}: --model NAME"
    if refusal is not None:
        raise click.BadParameter(refusal, context, option)
    return name if name is None else name.strip()


def busy_refusal(line: str) -> str | None:
    """The refusal of ``line`` typed while a turn runs when it is one of the commands that act
    between turns; else ``None``."""
    words = line.split()
    if "\n" in line.strip() or not words or words[0] not in _BETWEEN_TURNS:
        return None
    why = _BETWEEN_TURNS[words[0]]
    return f"hermes: {words[0]} is not run while a turn runs ({why}): type it again at the prompt"


class ConversationCommands:
    """``/usage``, ``/model``, ``/title``, ``/retry`` and ``/undo`` of one ``hermes chat``:
    notes go to ``printer``, a message taken back to the line editor of ``lines``; ``send``
    runs a turn (``/retry``), ``switched`` is told the model's new name."""

    def __init__(
        self,
        printer: EventPrinter,
        lines: TerminalLines,
        send: Callable[[Conversation, str], Awaitable[None]],
        switched: Callable[[str], None],
    ) -> None:
        self._printer = printer
        self._lines = lines
        self._send = send
        self._switched = switched

    async def run(self, text: str, conversation: Conversation) -> bool:
        """Run ``text`` when it is one of these commands (``True``); ``False`` otherwise."""
        word, *rest = text.split(maxsplit=1)
        if word not in _BETWEEN_TURNS:
            return False
        argument = rest[0].strip() if rest else ""
        if word == "/model":
            self._model(argument, conversation)
        elif word == "/title":
            self._title(argument, conversation)
        elif argument:
            self._printer.note(f"hermes: {word} takes no argument")
        elif word == "/usage":
            self._usage(conversation)
        elif word == "/undo":
            self._undo(conversation)
        else:
            await self._retry(conversation)
        return True

    def _usage(self, conversation: Conversation) -> None:
        from hermes_core.agent._conversation_usage import ConversationUsage

        for line in ConversationUsage.of(conversation).lines():
            self._printer.note(f"hermes: {line}")

    def _model(self, name: str, conversation: Conversation) -> None:
        from hermes_core._redaction import shown_url  # its patterns: not for `hermes --help`

        settings = conversation.agent.model
        provider = printable(settings.provider)
        if not name:
            at = f" at {printable(shown_url(settings.base_url))}" if settings.base_url else ""
            self._printer.note(
                f"hermes: model {printable(settings.model)} of the provider {provider}{at} "
                "(/model NAME switches to NAME)"
            )
            return
        refusal = model_refusal(name, "/model NAME")
        if refusal is not None:
            self._printer.note(f"hermes: {refusal} (/model shows it)")
            return
        if name == settings.model:
            self._printer.note(f"hermes: the model is {printable(name)} already")
            return
        conversation.use_model(name)
        self._switched(name)
        self._printer.note(switched_note(name, settings.provider, "the rest of this chat"))

    def _title(self, text: str, conversation: Conversation) -> None:
        from hermes_core.agent._titles import TitleError, checked_title, quoted, title_conversation

        if not text:
            self._printer.note(_titled(conversation))
            return
        if text == "--clear":
            self._untitle(conversation)
            return
        try:
            title = title_conversation(conversation, checked_title(text))
        except TitleError as error:
            self._printer.note(f"hermes: {error}; nothing changed")
            return
        except OSError as error:
            self._printer.note(f"hermes: the title was not kept: {error}")
            return
        redacted = "" if title == text else " (what looked like a secret redacted)"
        self._printer.note(f"hermes: this conversation is now titled {quoted(title)}{redacted}")

    def _untitle(self, conversation: Conversation) -> None:
        """``/title --clear``: a title record of none appended, when it has one."""
        from hermes_core.agent._titles import TitleError, quoted, title_conversation

        try:
            had = _title_of(conversation)
            if had is not None:
                title_conversation(conversation, None)
        except (TitleError, OSError) as error:
            self._printer.note(f"hermes: the title was not taken away: {error}")
            return
        if had is None:
            self._printer.note("hermes: this conversation has no title: nothing changed")
        else:
            self._printer.note(f"hermes: this conversation is no longer titled {quoted(had)}")

    def _undo(self, conversation: Conversation) -> None:
        from hermes_core.agent._undo import NothingToTakeBack, take_back

        try:
            taken = take_back(conversation)
        except NothingToTakeBack as exc:
            self._printer.note(f"hermes: nothing to undo: {exc}")
            return
        after = taken.dropped - 1
        what = f" and the {after} after it" if after > 1 else " and the one after it"
        gone = f"hermes: undone: your last message{what if after else ''}"
        if self._put_back(taken.text):
            self._printer.note(f"{gone}; the message is back in the line")
        else:
            self._printer.note(f"{gone}; it was:")
            for line in taken.text.splitlines() or [""]:
                self._printer.note(f"  {printable(line)}")
        self._stopped(taken)

    def _stopped(self, taken: TakenBack) -> None:
        """Say which background delegations the calls taken back had started were stopped."""
        if taken.delegations:
            noun = "delegation" if len(taken.delegations) == 1 else "delegations"
            self._printer.note(
                f"hermes: stopped the {noun} {', '.join(taken.delegations)} it had started "
                "(its results are not sent)"
            )

    def _put_back(self, text: str) -> bool:
        """Put ``text`` in the line being edited, as a paste of one line (the editor's own
        rules: control characters left out); ``False`` without a line editor, or for a
        message of several lines (the editor edits one)."""
        from hermes_core._cli.key_sequences import PASTE_END, PASTE_START

        editor = self._lines.editor
        if editor is None or "\n" in text or "\r" in text:
            return False
        editor.feed(PASTE_START + text.replace("\x1b", "") + PASTE_END)
        return True

    async def _retry(self, conversation: Conversation) -> None:
        from hermes_core.agent._undo import NothingToTakeBack, take_back

        try:
            taken = take_back(conversation)
        except NothingToTakeBack as exc:
            self._printer.note(f"hermes: nothing to retry: {exc}")
            return
        self._stopped(taken)
        first = printable(taken.text.strip().split("\n", 1)[0][:160])
        self._printer.note(f"hermes: sending your last message again: {first}")
        await self._send(conversation, taken.text)


def _title_of(conversation: Conversation) -> str | None:
    """``conversation``'s title, ``None`` when it has none (no message sent yet, or no
    transcripts kept); :class:`OSError` when it cannot be read."""
    from hermes_core.agent._titles import title_of

    store = conversation.agent.transcripts
    try:
        return None if store is None else title_of(store.open(conversation.session.id))
    except FileNotFoundError:  # no message sent yet
        return None


def _titled(conversation: Conversation) -> str:
    """What ``/title`` says: the conversation's title, or that it has none."""
    from hermes_core.agent._titles import quoted

    try:
        title = _title_of(conversation)
    except OSError as error:
        return f"hermes: the title cannot be read: {error}"
    if title is None:
        return "hermes: this conversation has no title (/title NAME gives it one)"
    return f"hermes: this conversation is titled {quoted(title)}"

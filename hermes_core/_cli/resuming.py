"""``--continue`` and ``--resume SESSION`` of ``hermes chat`` and ``hermes run``: which
transcript to take up again, the messages the model gets (as ``session/load`` gives them:
:meth:`~hermes_core.agent._transcripts.Transcript.history`) and the short summary of where it
left off that the terminal shows.

``--continue`` takes the conversation of this working directory appended to last (a subagent's
is never one); ``--resume`` an id, then a title (:mod:`hermes_core.agent._titles`: exactly, the
one appended to last when several share it, saying so), then a unique prefix of an id, as
``session_search`` shows them (a title that is also the start of an id says so too).
A transcript kept under another model goes on with the configured one (said on stderr); a
subagent's is refused, naming its parent session, which is the conversation to take up.
``/resume`` of ``hermes chat`` (:class:`ResumeCommand`) lists this directory's conversations,
numbered, and takes one up the same way.

A transcript's directory and model are its latest header's (the ones it last ran with; looked
for as ``hermes sessions list`` looks, from the file's ends only:
:func:`~hermes_core.agent._conversations.latest_header`); its
size counts the messages :func:`~hermes_core.agent._transcripts.counts_as_message` counts, as
``session_search`` does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hermes_core._errors import HermesError
from hermes_core._shown import printable

if TYPE_CHECKING:  # the agent is imported when a command runs, not when the CLI starts
    from hermes_core._host import Host
    from hermes_core.agent._agent import Agent
    from hermes_core.agent._transcripts import Transcript, TranscriptStore
    from hermes_core.agent._wire import Message, ModelSettings

F = TypeVar("F", bound=Callable[..., Any])
_LISTED = 5
LISTED_HERE = 10
"""The conversations ``/resume`` lists."""
_SHOWN = 160


class ResumeError(HermesError):
    """No conversation to take up: an unknown or ambiguous id, a damaged transcript, a
    subagent's (exit status 2)."""


@dataclass(frozen=True)
class Resumed:
    """A conversation taken up again: its session id and the messages it starts from."""

    session_id: str
    messages: list[Message]
    summary: list[str]
    model: str | None = None
    """The model its transcript was last kept under, when its header names one."""


def resume_options(command: F) -> F:
    """The ``--continue`` and ``--resume SESSION`` options (the keywords ``last`` and
    ``session``)."""
    command = click.option(
        "--resume",
        "session",
        metavar="SESSION",
        help="Take up the conversation SESSION (an id, a title or a unique prefix of an id).",
    )(command)
    return click.option(
        "--continue",
        "last",
        is_flag=True,
        help="Take up the last conversation of this working directory.",
    )(command)


async def agent_resuming(
    host: Host,
    *,
    last: bool,
    session: str | None,
    command: str = "chat",
    model: str | None = None,
) -> tuple[Agent, Resumed | None]:
    """The host's agent (:meth:`Agent.from_host`, the ``model`` section, ``model`` instead of
    ``model.model`` for ``--model``) and the conversation ``--continue`` or ``--resume`` names
    (:func:`resumed`: one kept under another model than ``--model``'s says that it goes on with
    it, as ``/model NAME`` does); when there is none to take up, the agent is closed again
    before the :class:`ResumeError` goes on."""
    from hermes_core._cli.chat_commands import switched_note
    from hermes_core.agent._agent import Agent

    agent = Agent.from_host(host, model=model)
    try:
        taken_up = resumed(
            agent.transcripts,
            last=last,
            session=session,
            model=agent.model.model,
            command=command,
            effort=agent.model.reasoning_effort,
        )
    except BaseException:
        await agent.aclose()
        raise
    if model is not None and taken_up is not None and taken_up.model not in (None, model):
        span = f"this {command}"
        taken_up.summary.append(switched_note(model, agent.model.provider, span))
    return agent, taken_up


def resumed(
    store: TranscriptStore | None,
    *,
    last: bool,
    session: str | None,
    model: str,
    command: str = "chat",
    effort: str | None = None,
) -> Resumed | None:
    """The conversation ``--continue`` (``last``) or ``--resume`` (``session``) names, or
    ``None`` when neither is given; :class:`ResumeError` when there is none to take up (its
    message names ``hermes COMMAND --resume``, and where the conversations written while the
    project gate was closed are, when it is open now: ``store.elsewhere()``)."""
    if not last and session is None:
        return None
    if last and session is not None:
        raise ResumeError("--continue and --resume are one or the other")
    if session is not None and not session.strip():
        raise ResumeError("--resume needs a session id (or a unique prefix of one)")
    if store is None:
        raise ResumeError("no transcripts are kept (agent transcripts are off)")
    _refuse(store)
    try:
        found = _named(store, session) if session is not None else _last_here(store, command)
    except ResumeError as error:
        raise ResumeError(f"{error}{store.elsewhere()}") from None
    return taken_up(found, model, effort)


def taken_up(transcript: Transcript, model: str, effort: str | None = None) -> Resumed:
    """``transcript`` taken up again with ``model`` and the reasoning ``effort`` (``None``:
    the model's default), each said on stderr when its header names another: its history
    (as ``session/load`` gives it: from its latest compaction, each call left unanswered
    answered as failed) and the summary of where it left off, from every message;
    :class:`ResumeError` for a subagent's or a damaged one."""
    from hermes_core._cli.sessions_cmd import mend_or_delete
    from hermes_core.agent._streamed_history import resumption
    from hermes_core.agent._transcripts import TranscriptError

    try:
        header = transcript.header()
        if header.get("parent"):
            raise ResumeError(
                f"{transcript.path.stem} is a subagent's conversation; take up its parent, "
                f"hermes chat --resume {header['parent']}"
            )
        found = resumption(transcript)  # never held whole: one compacted often is large
    except TranscriptError as exc:
        raise ResumeError(mend_or_delete(exc, transcript.path.stem)) from None
    except OSError as exc:
        raise ResumeError(str(exc)) from None
    name = f"{transcript.path.stem} {_title(transcript)}".rstrip()
    summary = [f"hermes: resuming {name} ({_about(transcript, found.counted)})"]
    kept = header.get("model")
    if isinstance(kept, str) and kept != model:
        summary.append(f"hermes: it was with {kept}; it goes on with {model}")
    if "reasoning_effort" in header and header["reasoning_effort"] != effort:  # not an older one
        was, now = _effort(header["reasoning_effort"]), _effort(effort)
        summary.append(f"hermes: it was with reasoning effort {was}; it goes on with {now}")
    summary.extend(_left_off(found.last_exchange))
    return Resumed(
        transcript.path.stem, found.history, summary, kept if isinstance(kept, str) else None
    )


def _effort(effort: object) -> str:
    return printable(effort) if isinstance(effort, str) else "the model's default"


def _refuse(store: TranscriptStore) -> None:
    if store.refusal is not None:
        raise ResumeError(f"no conversation is taken up: {store.refusal}")


def _named(store: TranscriptStore, session: str) -> Transcript:
    from hermes_core.agent._conversations import naming

    recent = store.recent()
    named = naming(store, session, recent)
    if named.exact is not None:
        return named.exact
    found, by_title = named.prefixed, named.titled
    if by_title:
        _say_which(session, by_title, [t for t in found if t.path != by_title[0].path])
        return by_title[0]
    if len(found) == 1:
        return found[0]
    if found:
        listed = "\n".join(_line(t) for t in found[:_LISTED])
        raise ResumeError(f"{session} is the start of {len(found)} conversations:\n{listed}")
    # lazily: a header is looked for from each file's end, and only five are listed
    roots = list(islice((t for t in recent if not _header(t).get("parent")), _LISTED))
    listed = "\n".join(_line(t) for t in roots) or "  (none yet)"
    raise ResumeError(
        f"no conversation {session} (an id, its start or a title); the recent ones:\n{listed}"
    )


def _say_which(session: str, by_title: list[Transcript], by_id: list[Transcript]) -> None:
    """Say, on stderr, which of several conversations titled ``session`` was taken, and which
    ids ``session`` is also the start of."""
    from hermes_core.agent._titles import quoted

    taken = by_title[0].path.stem
    if len(by_title) > 1:
        others = ", ".join(t.path.stem for t in by_title[1:_LISTED])
        click.echo(
            f"hermes: {len(by_title)} conversations are titled {quoted(session)}: took the "
            f"latest, {taken} (--resume ID takes another: {others})",
            err=True,
        )
    if len(by_id) == 1:
        other = by_id[0].path.stem
        click.echo(
            f"hermes: {printable(session)} is also the start of the id {other} "
            f"(--resume {other} takes it)",
            err=True,
        )
    elif by_id:
        click.echo(
            f"hermes: {printable(session)} is also the start of {len(by_id)} ids "
            "(--resume with more of one takes it)",
            err=True,
        )


def _last_here(store: TranscriptStore, command: str) -> Transcript:
    for transcript in _here(store):
        return transcript
    raise ResumeError(
        f"no earlier conversation in {Path.cwd().resolve()} (hermes {command} --resume SESSION "
        "takes up another)"
    )


def _here(store: TranscriptStore) -> Iterator[Transcript]:
    """The conversations (no subagent's, no cron job's run: ``--resume ID`` takes those up)
    whose latest header is of this working directory, the one appended to last first."""
    here = Path.cwd().resolve()
    for transcript in store.recent():
        header = _header(transcript)
        cwd = header.get("cwd")
        if header.get("parent") or header.get("job"):
            continue
        if isinstance(cwd, str) and Path(cwd).resolve() == here:
            yield transcript


class ResumeCommand:
    """``/resume`` of ``hermes chat``: :meth:`listing` numbers this directory's recent
    conversations, :meth:`take_up` takes one by its number there or by its id (a unique
    prefix, any directory, as ``--resume``)."""

    def __init__(
        self, store: TranscriptStore | None, model: str, effort: str | None = None
    ) -> None:
        self.store = store
        self.model = model
        self.effort = effort
        self._listed: list[Transcript] | None = None

    @classmethod
    def of(cls, store: TranscriptStore | None, settings: ModelSettings) -> ResumeCommand:
        """One taking conversations up with ``settings``' model and reasoning effort."""
        return cls(store, settings.model, settings.reasoning_effort)

    def _store(self) -> TranscriptStore:
        if self.store is None:
            raise ResumeError("no transcripts are kept (agent transcripts are off)")
        _refuse(self.store)
        return self.store

    def _recent_here(self, current: str) -> list[Transcript]:
        found = (t for t in _here(self._store()) if t.path.stem != current)
        self._listed = list(islice(found, LISTED_HERE))
        return self._listed

    def listing(self, current: str) -> list[str]:
        """The lines of ``/resume``: this directory's recent conversations but ``current``
        (the one the chat is in), numbered, the one appended to last first; then where
        those written while the project gate was closed are, when it is open now
        (:meth:`~hermes_core.agent._transcripts.TranscriptStore.elsewhere`)."""
        listed = self._recent_here(current)
        elsewhere = self._store().elsewhere()
        here = Path.cwd().resolve()
        if not listed:
            return [f"hermes: no other conversation in {here} (/resume ID takes one up){elsewhere}"]
        lines = [f"hermes: the recent conversations in {here} (/resume NUMBER takes one up):"]
        lines.extend(_line(t, f"{number}. ") for number, t in enumerate(listed, 1))
        if elsewhere:
            lines.append("hermes: " + elsewhere.removeprefix("; "))
        return lines

    def take_up(self, argument: str, current: str) -> Resumed:
        """The conversation ``argument`` names: a number of one or two digits, of the last
        listing shown (or of this directory's recent ones); else an id or a unique prefix
        of one. :class:`ResumeError` when there is none, or it is ``current``."""
        if argument.isascii() and argument.isdigit() and len(argument) <= 2:  # not "²"
            listed = self._listed if self._listed is not None else self._recent_here(current)
            if not 1 <= int(argument) <= len(listed):
                raise ResumeError(f"no conversation {argument} in the listing (/resume lists them)")
            transcript = listed[int(argument) - 1]
        else:
            store = self._store()
            try:
                transcript = _named(store, argument)
            except ResumeError as error:
                raise ResumeError(f"{error}{store.elsewhere()}") from None
        if transcript.path.stem == current:
            raise ResumeError(f"{current} is the conversation this chat is in")
        return taken_up(transcript, self.model, self.effort)


def _header(transcript: Transcript) -> dict[str, Any]:
    """Its latest header as ``hermes sessions list`` reads it, from the file's ends only."""
    from hermes_core.agent._conversations import latest_header

    try:
        return latest_header(transcript)
    except OSError:
        return {}


def _line(transcript: Transcript, number: str = "") -> str:
    """A conversation listed, read as ``hermes sessions list`` reads it: a large one's
    messages are not counted (its size is shown), so it is never read whole."""
    from hermes_core._cli.sessions_cmd import shown_bytes
    from hermes_core.agent._conversations import recorded
    from hermes_core.agent._titles import quoted

    try:
        found = recorded(transcript)
    except OSError:
        found = None
    if found is None or found.damaged:
        return f"  {number}{transcript.path.stem}  (unreadable)"
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(found.changed))
    if found.messages is None:
        about = f"{when}, {shown_bytes(found.size)}, not counted"
    else:
        about = f"{when}, {_messages(found.messages)}"
    title = f"{quoted(found.title)} " if found.title else ""
    return f"  {number}{transcript.path.stem}  {title}({about})  {_short(found.first_message)}"


def _title(transcript: Transcript) -> str:
    """Its title as a line shows it, ``""`` when it has none (or cannot be read)."""
    from hermes_core.agent._conversations import COUNTED_BYTES
    from hermes_core.agent._titles import quoted, title_of

    try:
        return quoted(title_of(transcript, COUNTED_BYTES))
    except OSError:
        return ""


def _about(transcript: Transcript, counted: int) -> str:
    try:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(transcript.path.stat().st_mtime))
    except OSError:
        when = "date unknown"
    return f"{when}, {_messages(counted)}"


def _messages(counted: int) -> str:
    return f"{counted} message{'' if counted == 1 else 's'}"


def _short(text: str) -> str:
    # What the person typed and the model wrote, read back: an escape sequence in it is shown,
    # never obeyed (as the live chat's tool lines, agent_events.call_lines).
    line = printable(" ".join(text.split()))
    return line if len(line) <= _SHOWN else line[: _SHOWN - 3] + "..."


def _left_off(messages: list[Message]) -> list[str]:
    """The last exchange: the person's last message and what followed it, the model's text
    and the names of the tools it called (never their output)."""
    from hermes_core.agent._events import real_tools

    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if start is None:
        return []
    shown = [f"  you> {_short(messages[start].content)}"]
    for message in messages[start + 1 :]:
        if message.role != "assistant":
            continue
        if message.tool_calls:
            # The real tools, as the live chat's tool lines named them (not the bridge).
            called = [name for call in message.tool_calls for name in real_tools(call)]
            names = printable(", ".join(called))
            shown.append(f"  (called {names})")
        if message.content.strip():
            shown.append(f"  {_short(message.content)}")
    return shown

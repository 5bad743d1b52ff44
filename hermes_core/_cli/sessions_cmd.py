"""``hermes sessions``: the user's conversations (their transcripts) listed, read, deleted and
pruned, without asking the model.

Each acts on the store hermes itself writes and reads (:meth:`TranscriptStore.of_home`): a
home inside the project while its gate is closed keeps the user's conversations in the user's
own folder for it, and the transcripts the repository holds are never listed, shown nor
deleted. Deleting takes a conversation's subagents' transcripts with it, then tells the
plugins enabled now which are gone (``hermes_transcripts_deleted``): ``session_search`` drops
their rows from its index before the command returns. Its index holds nothing but what the
transcripts hold, and drops the rows of any transcript gone at its next search too (one deleted
by hand, or while the plugin was not enabled: the transcripts are the truth).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment
from hermes_core._cli.output import columns, echo_shown
from hermes_core._errors import HermesError
from hermes_core._shown import printable

if TYPE_CHECKING:
    from hermes_core.agent._conversations import Recorded
    from hermes_core.agent._transcripts import Transcript, TranscriptError, TranscriptStore

_ASKED = 5
"""Ids the question of ``delete`` and ``prune`` names (then how many more)."""

_ID_SHOWN = 12
"""Characters of an id a listing shows (more when two ids share them)."""
_FIRST_SHOWN = 60
_AGE = re.compile(r"(\d+)([smhdw])\Z")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class SessionsError(HermesError):
    """A conversation that cannot be shown or deleted (exit status 2)."""


@click.group("sessions")
def sessions() -> None:
    """List, read, delete and prune your conversations (their transcripts)."""


def _store() -> TranscriptStore:
    """The transcripts hermes reads; refused as ``--resume`` refuses them (a home inside the
    project whose folder is the project's, its gate closed)."""
    from hermes_core.agent._transcripts import TranscriptStore

    store = TranscriptStore.of_home(environment())
    if store.refusal is not None:
        raise SessionsError(f"no conversation is read: {store.refusal}")
    return store


@sessions.command("list")
@click.option("--all", "every", is_flag=True, help="Every directory's conversations.")
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="Show the N most recent only."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def list_command(every: bool, limit: int | None, as_json: bool) -> None:
    """This directory's conversations (--all: every directory's), the latest first.

    A subagent's conversation is not listed on its own: its parent says how many it had.
    """
    from hermes_core.agent._conversations import conversations

    store = _store()
    found = conversations(store, None if every else Path.cwd())[:limit]
    if as_json:
        click.echo(json.dumps([_as_json(one) for one in found], indent=2, ensure_ascii=False))
    if not found:
        where = f"{store.directory}" if every else f"{Path.cwd().resolve()}"
        hint = "" if every else f" (--all lists every directory's; they are in {store.directory})"
        echo_shown(f"hermes: no conversation in {where}{hint}{store.elsewhere()}", err=True)
        return
    if not as_json:
        _table(store, found, every)


def _table(store: TranscriptStore, found: list[Recorded], every: bool) -> None:
    width = _id_width(store)
    rows = [
        ["ID", "CHANGED", "MODEL", "MESSAGES", "SUBAGENTS", "DIRECTORY", "TITLE", "FIRST MESSAGE"]
    ]
    rows.extend(
        [
            one.id[:width],
            _when(one.changed),
            one.model or "-",
            _counted(one),
            _subagents(one.subagents),
            one.cwd or "-",
            _one_line(one.title) if one.title else "",  # none, blank as no subagents
            "(damaged)" if one.damaged else _one_line(one.first_message),
        ]
        for one in found
    )
    if not every:  # every row's directory is this one
        rows = [row[:5] + row[6:] for row in rows]
    # The free text: (the directory,) the title, the first message; at a narrow terminal the
    # subagents go first, then the messages' count, then the model.
    free, drop = ((5, 6, 7), (4, 3, 2)) if every else ((5, 6), (4, 3, 2))
    click.echo(columns(rows, free=free, drop=drop))


def _as_json(one: Recorded) -> dict[str, Any]:
    return {
        "id": one.id,
        "started": one.started,
        "changed": one.changed,
        "model": one.model,
        "messages": one.messages,
        "subagents": one.subagents,
        "cwd": one.cwd,
        "job": one.job,
        "title": one.title,
        "first_message": one.first_message,
        "bytes": one.size,
        "damaged": one.damaged,
    }


def _id_width(store: TranscriptStore) -> int:
    """:data:`_ID_SHOWN`, or more when two ids of the store share their first that many
    characters: each id shown is a unique prefix, which ``show`` and ``delete`` take."""
    from hermes_core.agent._conversations import stored

    ids = sorted(transcript.path.stem for transcript in stored(store))
    width = _ID_SHOWN
    for before, after in itertools.pairwise(ids):
        shared = 0
        while shared < min(len(before), len(after)) and before[shared] == after[shared]:
            shared += 1
        width = max(width, shared + 1)
    return width


def _counted(one: Recorded) -> str:
    if one.damaged:
        return "damaged"
    return "-" if one.messages is None else str(one.messages)


def _subagents(count: int) -> str:
    return "" if not count else f"{count} subagent{'' if count == 1 else 's'}"


def _when(moment: float | None) -> str:
    if moment is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _FIRST_SHOWN else line[: _FIRST_SHOWN - 3] + "..."


def mend_or_delete(error: TranscriptError, session: str) -> str:
    """``error`` (a transcript's line that is no message) and what to do about it."""
    return f"{error}; mend that line, or delete the conversation: hermes sessions delete {session}"


def _named(store: TranscriptStore, session: str) -> Transcript:
    """The conversation ``session`` names (its id, its title, a unique start of its id: the
    rule of ``--resume``, :class:`~hermes_core.agent._conversations.Naming`), saying on stderr
    which ids it is also the start of when taken by its title."""
    from hermes_core.agent._conversations import ConversationError, named

    try:
        transcript, also = named(store, session)
    except ConversationError as error:
        raise SessionsError(f"{error}{store.elsewhere()}") from None
    if len(also) == 1:
        echo_shown(
            f"hermes: {session} is also the start of the id {also[0].path.stem} "
            "(give it whole to take that one)",
            err=True,
        )
    elif also:
        echo_shown(
            f"hermes: {session} is also the start of {len(also)} ids (give one whole to take it)",
            err=True,
        )
    return transcript


@sessions.command("show")
@click.argument("session")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a message, exact.")
def show_command(session: str, as_json: bool) -> None:
    """The conversation SESSION (its id, its title or a unique start of its id) as the model
    would get it back: from its latest compaction on, the messages /undo took back left out."""
    from hermes_core._cli.transcript_shown import shown_message
    from hermes_core.agent._streamed_history import streamed_history
    from hermes_core.agent._titles import quoted
    from hermes_core.agent._transcripts import TranscriptError

    transcript = _named(_store(), session)
    try:
        history = streamed_history(transcript)  # read a message at a time: a file of any size
    except TranscriptError as error:
        raise SessionsError(mend_or_delete(error, transcript.path.stem)) from None
    except OSError as error:
        raise SessionsError(str(error)) from None
    if as_json:
        for message in history.messages:
            click.echo(json.dumps(message.to_json(), ensure_ascii=False))
        return
    header = history.header
    about = [f"model {header['model']}"] if isinstance(header.get("model"), str) else []
    if isinstance(header.get("reasoning_effort"), str):  # none in an older header
        about.append(f"reasoning effort {header['reasoning_effort']}")
    if isinstance(header.get("cwd"), str):
        about.append(f"in {header['cwd']}")
    if header.get("parent"):
        about.append(f"a subagent of {header['parent']}")
    if header.get("job"):  # --continue passes over it: say why
        about.append(f"a run of cron job {header['job']}")
    said = f" ({printable(', '.join(about))})" if about else ""
    title = quoted(history.title)
    name = f"{transcript.path.stem} {title}" if title else transcript.path.stem
    click.echo(f"conversation {name}{said}")
    tools: dict[str, str] = {}  # a call's id: the real tools it ran, which its result names
    for message in history.messages:
        if message.role == "user":
            click.echo()  # each exchange apart
        shown_message(message, tools)
    _show_children(transcript)


def _show_children(transcript: Transcript) -> None:
    """The conversation's own subagents, each with the first line of its goal: the way to
    their transcripts (sessions list leaves subagents out)."""
    from hermes_core.agent._conversations import children_of

    children = children_of(_store(), transcript.path.stem)
    if children:
        click.echo("subagents (hermes sessions show ID):")
    for child in children:
        goal = child.first_message.split("\n", 1)[0]
        click.echo(f"  {child.id}  {printable(_one_line(goal))}")


@sessions.command("rename")
@click.argument("session")
@click.argument("title", required=False)
@click.option("--clear", is_flag=True, help="Take the conversation's title away.")
def rename_command(session: str, title: str | None, clear: bool) -> None:
    """Title the conversation SESSION (its id, its title or a unique start of its id) TITLE:
    one line of at most 100 characters, which sessions list and /resume show and --resume
    takes (--clear: no title). The title is appended to its transcript; the latest one names
    it."""
    from hermes_core.agent._titles import TitleError, checked_title, give_title, quoted, title_of

    if title is None and not clear:
        raise click.UsageError("give a TITLE, or --clear to take the title away")
    if title is not None and clear:
        raise click.UsageError("a TITLE or --clear, not both")
    transcript = _named(_store(), session)
    try:
        if title is None:
            had = title_of(transcript)
            if had is not None:
                give_title(transcript, None)
        else:
            kept = give_title(transcript, checked_title(title))
    except TitleError as error:
        raise SessionsError(f"{error}; {transcript.path.stem} is not renamed") from None
    except FileNotFoundError:  # deleted since it was found: never made again for a title
        raise SessionsError(
            f"{transcript.path.stem} is not renamed: it was deleted meanwhile ({transcript.path})"
        ) from None
    except OSError as error:
        raise SessionsError(f"{transcript.path.stem} is not renamed: {error}") from None
    if title is None:
        said = (
            "has no title: nothing changed" if had is None else f"is no longer titled {quoted(had)}"
        )
        click.echo(f"{transcript.path.stem} {said}")
        return
    redacted = "" if kept == title.strip() else " (what looked like a secret redacted)"
    click.echo(f"{transcript.path.stem} is now titled {quoted(kept)}{redacted}")


@sessions.command("delete")
@click.argument("session_ids", metavar="SESSION...", nargs=-1, required=True)
@click.option("--yes", is_flag=True, help="Delete without asking.")
def delete_command(session_ids: tuple[str, ...], yes: bool) -> None:
    """Delete the conversations SESSION... (ids, titles or unique starts of ids) and their
    subagents', so that session_search never finds them again."""
    store = _store()
    chosen = list({t.path: t for t in (_named(store, s) for s in session_ids)}.values())
    _delete(store, chosen, yes=yes, dry_run=False)


@sessions.command("prune")
@click.option(
    "--older-than",
    "age",
    required=True,
    metavar="AGE",
    help="Delete the conversations not changed within AGE (30d, 12h, 2w; s, m, h, d, w).",
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted, delete nothing.")
@click.option("--yes", is_flag=True, help="Delete without asking.")
def prune_command(age: str, dry_run: bool, yes: bool) -> None:
    """Delete every directory's conversations not changed within AGE, and their
    subagents'."""
    from hermes_core.agent._conversations import conversations

    match = _AGE.match(age.strip())
    if match is None:
        raise click.BadParameter(
            f"{age!r} is no age: a whole number and a unit, like 30d, 12h or 2w (s, m, h, d, w)",
            param_hint="--older-than",
        )
    # Compared, not subtracted from the clock: an age of 400 digits is no float.
    seconds, now = int(match[1]) * _SECONDS[match[2]], time.time()
    store = _store()
    old = [one for one in conversations(store) if now - one.changed > seconds]
    if not old:
        click.echo(f"no conversation in {store.directory} is older than {age}")
        return
    from hermes_core.agent._transcripts import Transcript

    if dry_run:
        _table(store, old, every=True)
    old_ones = [Transcript(one.path) for one in old]
    _delete(store, old_ones, yes=yes, dry_run=dry_run, listed=": --dry-run lists them")


def _delete(
    store: TranscriptStore, chosen: list[Transcript], *, yes: bool, dry_run: bool, listed: str = ""
) -> None:
    """Delete ``chosen`` and their subagents' transcripts (asking first at a terminal unless
    ``yes``), or say what that would free (``dry_run``); ``listed``: where the ids the question
    leaves out are listed."""
    from hermes_core.agent._conversations import ConversationError, delete, subagents

    children = subagents(store, [t.path.stem for t in chosen])
    with_children = _counted_words(len(chosen), len(children))
    if dry_run:
        size = sum(_size(transcript) for transcript in [*chosen, *children])
        click.echo(f"would delete {with_children}, {shown_bytes(size)}")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise SessionsError(
                f"deleting {with_children} asks for confirmation at a terminal: "
                "pass --yes to delete without asking"
            )
        names = ", ".join(t.path.stem for t in chosen[:_ASKED])
        if len(chosen) > _ASKED:
            names += f", and {len(chosen) - _ASKED} more{listed}"
        try:
            agreed = click.confirm(f"Delete {with_children} ({names})?", err=True)
        except click.Abort:  # Ctrl-D or Ctrl-C: no answer, as "n"
            agreed = False
        if not agreed:
            click.echo("nothing deleted", err=True)
            sys.exit(1)
    try:
        freed = delete([*chosen, *children])
    except ConversationError as error:
        raise SessionsError(f"nothing deleted: {error}") from None
    except OSError as error:
        _told([t for t in [*chosen, *children] if not os.path.lexists(t.path)])
        raise SessionsError(f"{error}: some transcripts may be left in {store.directory}") from None
    _told([*chosen, *children])
    for transcript in chosen:
        click.echo(f"deleted {transcript.path.stem}")
    click.echo(f"deleted {with_children}, {shown_bytes(freed)} freed")


def _told(deleted: list[Transcript]) -> None:
    """Tell the plugins enabled now (loaded as every command loads them) that ``deleted`` are
    gone (``hermes_transcripts_deleted``), each isolated: a failure is logged, never stops
    the others nor undoes the deletion. A configuration that cannot be read tells none, and
    says so: the deletion is done all the same."""
    import anyio

    from hermes_core._cli.context import load_config_in_effect
    from hermes_core._cli.host_runs import cli_host
    from hermes_core._errors import ConfigError
    from hermes_core._hook_calls import HookCalls

    if not deleted:
        return
    env = environment()
    try:
        config = load_config_in_effect(env)
    except ConfigError as error:
        echo_shown(
            f"hermes: warning: no plugin was told of the deletion: {error}; "
            "session_search's index drops them at its next search",
            err=True,
        )
        return
    with cli_host(config, env) as host:
        host.load_plugins()
        calls = HookCalls(host.pm, config.plugins.hook_timeout)
        ids = tuple(transcript.path.stem for transcript in deleted)
        notify = partial(calls.notify, "hermes_transcripts_deleted", env=env, session_ids=ids)
        anyio.run(notify)


def _size(transcript: Transcript) -> int:
    try:
        return transcript.path.lstat().st_size
    except OSError:
        return 0


def _counted_words(conversations: int, children: int) -> str:
    said = f"{conversations} conversation{'' if conversations == 1 else 's'}"
    if children:
        said += f" and {children} subagent conversation{'' if children == 1 else 's'}"
    return said


def shown_bytes(count: int) -> str:
    """``count`` bytes as a person reads a size: ``512 bytes``, ``1.5 MB``, ``2.0 GB``."""
    size = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} bytes"

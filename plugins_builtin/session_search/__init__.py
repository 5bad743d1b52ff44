"""The ``session_search`` toolset: ``session_search``, a core tool (never deferred) that
searches the past conversations of this home.

The transcripts the agent keeps (``$HERMES_HOME/sessions/<id>.jsonl``, already redacted) are
indexed with SQLite FTS5 in ``$HERMES_HOME/session_search.db``, incrementally, at each search
(:mod:`.index`). The answer lists the best sessions, each with its title (when the person
gave it one), its date and short snippets
around the matched words; the session asking is left out (its own messages are in its
context already).

A home inside the project (``HERMES_HOME=./.hermes`` in a cloned repository) holds the
repository's transcripts, not the user's: while the project gate is closed the tool searches
neither them nor the index there, and its answer says why.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import anyio.to_thread
from annotated_types import Ge, Le

from hermes_core._plugin_support import project_refusal
from hermes_core.plugin import PluginContext, Session, Tool, ToolAnnotations, ToolResult, hookimpl

if TYPE_CHECKING:
    from hermes_core import Config, Environment

    from .index import Found, SessionHit, SessionIndex

MAX_QUERY_CHARS: Final = 2000
"""The longest query, as ``tool_search``'s: a search's work grows faster than its words (100,000
of them held the index's lock for 9 s), and a request needs far fewer."""
_PLUGIN: Final = "session_search"
DATABASE_NAME: Final = "session_search.db"
SESSION_CHARS: Final = 6000
_log = logging.getLogger(__name__)
"""Characters of one session the summary request carries (the start of its conversation)."""
SUMMARY_PROMPT: Final = (
    "You summarize past conversations for an agent. Given a query and the text of a few past "
    "sessions, say briefly what they establish about the query: facts, decisions, commands, "
    "and which session says it. No preamble."
)


@dataclass(frozen=True)
class SessionSearchEntry:
    """What ``plugins.entries.session_search`` may set."""

    limit: Annotated[int, Ge(1), Le(20)] = 5
    """Sessions returned when the model gives no ``limit``."""
    summarize: bool = False
    """Whether a search also asks the model for a summary of the top sessions (when the model
    gives no ``summarize``)."""
    summary_tokens: Annotated[int, Ge(50), Le(4000)] = 400
    """The longest summary, in tokens (the request's ``max_tokens``)."""
    summarized_sessions: Annotated[int, Ge(1), Le(10)] = 3
    """How many of the top sessions the summary reads."""
    rescan_seconds: Annotated[float, Ge(0)] = 5.0
    """How long the transcripts looked at by a search are not looked at again (unless a
    session was added): the cost of a search over thousands of sessions."""


def _date(started: float | None) -> str:
    if not started:
        return "date unknown"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(started))


def render(
    hits: Sequence[SessionHit],
    query: str,
    corrected: Mapping[str, str] | None = None,
    unknown: Sequence[str] = (),
) -> str:
    """The answer the model reads: what was searched instead of a word no conversation holds
    (``corrected``, and the ``unknown`` words no held word is close to, said when something
    was found), then one block per session, best first."""
    said = [
        f"No conversation holds {typed!r}; searched {word!r}."
        for typed, word in (corrected or {}).items()
    ]
    if not hits and not said:
        return f"No past session matches {query!r}."
    said += [f"No conversation holds {word!r}, nor a word close to it." for word in unknown]
    blocks = [" ".join(said)] if said else []
    for number, hit in enumerate(hits, start=1):
        counted = f"{hit.messages} message{'' if hit.messages == 1 else 's'}"
        titled = f' "{hit.title}"' if hit.title else ""
        head = f"{number}. session {hit.session}{titled} ({_date(hit.started)}, {counted})"
        blocks.append(f"{head}\n   {hit.snippet}")
    return "\n".join(blocks)


def unusable(database: Path, error: Exception) -> str:
    """Why the index ``database`` could not be used, naming it, and the fix when it is damaged
    (not a database, or a malformed one) rather than busy."""
    import sqlite3

    why = f"session_search: the index {database} cannot be used: {error}"
    if type(error) is sqlite3.DatabaseError:
        why += (
            ". It holds nothing but what the transcripts hold: delete it, and the next search "
            "makes it again from them"
        )
    return why


def _session_texts(sessions: Path, hits: Sequence[SessionHit]) -> str:
    parts = []
    for hit in hits:
        lines: list[str] = []
        path = sessions / f"{hit.session}.jsonl"
        try:
            with path.open(encoding="utf-8") as stream:
                for line in stream:
                    record = _json_object(line)
                    content = record.get("content") if record else None
                    if record and record.get("role") in ("user", "assistant") and content:
                        lines.append(f"{record['role']}: {content}")
        except OSError:
            continue
        parts.append(f"## Session {hit.session}\n" + "\n".join(lines)[:SESSION_CHARS])
    return "\n\n".join(parts)


def _json_object(line: str) -> dict[str, Any] | None:
    try:
        found = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        return None
    return found if isinstance(found, dict) else None


def build_tool(
    entry: SessionSearchEntry, sessions: Path, database: Path, refusal: str | None = None
) -> Tool:
    """``session_search`` over the transcripts in ``sessions``, indexed in ``database``; with
    ``refusal`` (a home inside the project, its gate closed) it searches nothing, neither the
    transcripts nor the index, and says why (warned once a process)."""
    made: list[SessionIndex] = []  # the index, made by the first search
    lock = threading.Lock()  # one connection, used by one call at a time
    warned: list[bool] = []

    def search(query: str, limit: int, exclude: str) -> Found:
        with lock:
            if not made:
                # Here, not where the tool is built: sqlite3 and the index module are for a
                # search, not for every start that registers the tool.
                from .index import SessionIndex

                made.append(SessionIndex(database, sessions))
            index = made[0]
            try:
                index.update(within=entry.rescan_seconds)
                return index.find(query, limit, exclude=exclude)
            except BaseException:
                made.clear()  # opened again by the next search (the file may be gone by then)
                index.close()
                raise

    async def session_search(
        session: Session, query: str, limit: int | None = None, summarize: bool | None = None
    ) -> ToolResult:
        import sqlite3

        if refusal is not None:
            refused = f"session_search searched nothing: {refusal}"
            if not warned:
                warned.append(True)
                _log.warning("%s", refused)
            return ToolResult.error("TOOL_ERROR", refused)
        try:
            found = await anyio.to_thread.run_sync(search, query, limit or entry.limit, session.id)
        except sqlite3.DatabaseError as error:
            return ToolResult.error("TOOL_ERROR", unusable(database, error))
        hits = found.hits
        summary = None
        if hits and (entry.summarize if summarize is None else summarize):
            summary = await _summary(session, query, hits[: entry.summarized_sessions])
        sessions = [
            {
                "session": hit.session,
                "started": hit.started,
                "model": hit.model,
                "title": hit.title,
                "messages": hit.messages,
                "snippet": hit.snippet,
            }
            for hit in hits
        ]
        text = render(hits, query, found.corrected, found.unknown)
        if summary is not None:
            text = f"Summary: {summary}\n\n{text}"
        return ToolResult.text(
            text,
            structured={"sessions": sessions, "summary": summary, "corrected": found.corrected},
        )

    async def _summary(session: Session, query: str, hits: Sequence[SessionHit]) -> str | None:
        from hermes_core.agent import Message, ModelError, session_model

        model = session_model(session)
        if model is None:  # outside an agent's conversation: no model to ask
            return None
        texts = await anyio.to_thread.run_sync(_session_texts, sessions, hits)
        try:
            asked = Message("user", f"Query: {query}\n\n{texts}")
            return await model.ask(asked, system=SUMMARY_PROMPT, max_tokens=entry.summary_tokens)
        except ModelError as error:
            return f"(no summary: {error})"

    return Tool(
        name="session_search",
        description=(
            "Search your past conversations with this user (not the current one) by words: "
            "returns the matching sessions, best first, with their dates and short snippets "
            "around the matched words. Use it when the user refers to earlier work "
            '("as we did last week", "that bug from before") or you need a past decision.'
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "Words to look for.",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                "summarize": {
                    "type": "boolean",
                    "description": "Also summarize the top sessions (costs a model request).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        handler=session_search,
        toolset="session_search",
        source="builtin",
        source_name=_PLUGIN,
        annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=True),
        core=True,
    )


@hookimpl(trylast=True)
def hermes_transcripts_deleted(env: Environment, session_ids: Sequence[str]) -> None:
    """Drop the rows of the conversations ``hermes sessions`` deleted from the index at once
    (:meth:`~.index.SessionIndex.drop`), not at the next search. An index in a home inside
    the project while its gate is closed is never opened (as a search never opens it)."""
    sessions = env.data_home / "sessions"
    database = env.data_home / DATABASE_NAME
    if project_refusal(env, sessions, "the transcripts folder") is not None:
        return
    from .index import SessionIndex

    index = SessionIndex(database, sessions)
    try:
        index.drop(session_ids)
    finally:
        index.close()


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """``session_search``, configured from ``plugins.entries.session_search``."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(SessionSearchEntry)
    sessions = env.data_home / "sessions"
    refusal = project_refusal(env, sessions, "the transcripts folder")
    return [build_tool(entry, sessions, env.data_home / DATABASE_NAME, refusal)]

"""The ``session_search`` toolset: ``session_search``, a core tool (never deferred) that
searches the past conversations of this home.

The transcripts the agent keeps (``$HERMES_HOME/sessions/<id>.jsonl``, already redacted) are
indexed with SQLite FTS5 in ``$HERMES_HOME/session_search.db``, incrementally, at each search
(:mod:`.index`). The answer lists the best sessions, each with its date and short snippets
around the matched words; the session asking is left out (its own messages are in its
context already).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

from annotated_types import Ge, Le

from hermes_core.plugin import PluginContext, Session, Tool, ToolAnnotations, ToolResult, hookimpl

from .index import SessionHit, SessionIndex

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_PLUGIN: Final = "session_search"
DATABASE_NAME: Final = "session_search.db"


@dataclass(frozen=True)
class SessionSearchEntry:
    """What ``plugins.entries.session_search`` may set."""

    limit: Annotated[int, Ge(1), Le(20)] = 5
    """Sessions returned when the model gives no ``limit``."""
    rescan_seconds: Annotated[float, Ge(0)] = 5.0
    """How long the transcripts looked at by a search are not looked at again (unless a
    session was added): the cost of a search over thousands of sessions."""


def _date(started: float | None) -> str:
    if not started:
        return "date unknown"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(started))


def render(hits: Sequence[SessionHit], query: str) -> str:
    """The answer the model reads: one block per session, best first."""
    if not hits:
        return f"No past session matches {query!r}."
    blocks = []
    for number, hit in enumerate(hits, start=1):
        head = f"{number}. session {hit.session} ({_date(hit.started)}, {hit.messages} messages)"
        blocks.append(f"{head}\n   {hit.snippet}")
    return "\n".join(blocks)


def build_tool(entry: SessionSearchEntry, sessions: Path, database: Path) -> Tool:
    """``session_search`` over the transcripts in ``sessions``, indexed in ``database``."""
    index = SessionIndex(database, sessions)
    lock = threading.Lock()  # one connection, used by one call at a time

    def session_search(session: Session, query: str, limit: int | None = None) -> ToolResult:
        with lock:
            index.update(within=entry.rescan_seconds)
            hits = index.search(query, limit or entry.limit, exclude=session.id)
        found = [
            {
                "session": hit.session,
                "started": hit.started,
                "messages": hit.messages,
                "snippet": hit.snippet,
            }
            for hit in hits
        ]
        return ToolResult.text(render(hits, query), structured={"sessions": found})

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
                "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
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
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """``session_search``, configured from ``plugins.entries.session_search``."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(SessionSearchEntry)
    return [build_tool(entry, env.home / "sessions", env.home / DATABASE_NAME)]

"""The search index of the transcripts: SQLite FTS5 in one database under the home.

Transcripts (``$HERMES_HOME/sessions/<id>.jsonl``) only grow, a line a message, so the index
remembers how many bytes of each file it has read and reads only what was appended since
(:meth:`SessionIndex.update`); a file that shrank or was replaced is read again whole, and the
rows of one no longer there are dropped (the transcripts are the truth: a conversation the user
deleted is not found again, however long after the deletion the index is next updated;
``hermes sessions`` has them dropped at once, :meth:`SessionIndex.drop`). A
conversation taken up again holds a header per process that took it up: a session started at
its first header's time and runs with its latest header's model (the one resuming reads),
and is named by its latest title record (``/title``, ``hermes sessions rename``), however many
updates read them. Each
file's new rows and its new offset are written in one transaction: a process killed half-way
leaves the index as it was, and the next update reads the same lines again. Two processes
updating at once take turns (``BEGIN IMMEDIATE``, WAL, a busy timeout) and each re-reads the
offset inside its transaction, so no line is indexed twice nor lost. A line that is not a
complete JSON object (the one a writer is still appending) is left for the next update. A line
damaged or odd in other ways never stops the index: a field of the wrong type is left out, text
UTF-8 cannot hold (a lone surrogate, kept in the transcript as its JSON escape) is indexed with
U+FFFD in its place, and a file whose name is not UTF-8 is not read.

FTS5's ``unicode61`` tokenizer cuts words at spaces and punctuation only, so a run of a script
written without spaces (Chinese, Japanese, Thai; Korean particles) would be one token, and no
word inside it could be found. Each character of those scripts is indexed as a word of its own
(:func:`indexed_text`: set apart by U+200B, a separator to the tokenizer, taken out of the
snippets) and a query's run of them is searched as a phrase, the characters one after another.

An identifier is found by its words too: the index cuts a camelCase one at its case seams the
same way (``parseConfig`` is the tokens ``parse`` and ``config``; ``unicode61`` already cuts
``parse_config`` at its ``_``), and a second column, ``also``, holds the ``ss`` spelling of each
word holding ``ß`` (``Größe``: ``Grösse``), which ``unicode61`` does not fold. A query searches
each word as written, as the phrase of its parts (``loadSettings``: ``"load settings"``, which
finds ``load_settings``; ``load_settings`` is that phrase already, which finds
``loadSettings``) and with ``ss`` for ``ß`` and ``ß`` for ``ss`` (:func:`word_forms`:
``Grösse`` is searched as ``größe`` too, so the snippet marks ``Größe``). An identifier typed
joined in lower case (``parseconfig``) does not find ``parseConfig``: keeping identifiers whole
in ``also`` for it tripled the build time of code-heavy transcripts' index.
An index made before (``PRAGMA user_version`` below :data:`SCHEMA_VERSION`) is made again.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hermes_core._plugin_support import (
    counts_as_message,
    private_database,
    transcript_read_lock,
)

from .typos import corrections, folded
from .words import (
    also_text,
    indexed_text,
    marked_words,
    query_words,
    shown_text,
    words_query,
)

SCHEMA_VERSION: Final = 4
"""Version 2: each character of an unspaced script is a token (version 1 had none); version 3:
camelCase identifiers cut at their case seams, and the column ``also``; version 4: each
session's latest title (``files.title``)."""
BUSY_TIMEOUT_MS: Final = 15_000
MAX_INDEXED_CHARS: Final = 4000
"""Characters of one message indexed (a tool's long output is searched by its start)."""
_SURROGATE = re.compile("[\ud800-\udfff]")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS files (
    session TEXT PRIMARY KEY, offset INTEGER NOT NULL, inode INTEGER NOT NULL,
    started REAL, model TEXT, parent TEXT, messages INTEGER NOT NULL DEFAULT 0, title TEXT
);
"""
_MESSAGES: Final = """
CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(
    content, also, session UNINDEXED, role UNINDEXED, time UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
)
"""


@dataclass(frozen=True)
class SessionHit:
    """One past session that matches: its id, when it started (its first header's time), its
    messages, a snippet of its best message around the hits (``[``/``]`` mark the matched
    words), its score (lower is better), the model it last ran with (its latest header's,
    the one resuming reads) and its latest title."""

    session: str
    started: float | None
    messages: int
    snippet: str
    score: float
    model: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Found:
    """What a search found: the sessions, best first; the query's words no conversation holds
    searched as the closest word one holds (typed: searched), and those none was close to."""

    hits: list[SessionHit]
    corrected: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


def _switch_to_wal(connection: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, tried again while another process holds the database:
    while one process switches a new index to WAL, SQLite can answer another's switch with
    "database is locked" at once, without its busy timeout (a CI run of two indexing processes
    saw it). The mode stays in the file, so the second attempt finds it set."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class SessionIndex:
    """The index in ``database`` of the transcripts in ``directory``."""

    def __init__(self, database: Path, directory: Path) -> None:
        self.database = database
        self.directory = directory
        self._connection: sqlite3.Connection | None = None
        self._looked: tuple[int | None, float] | None = None

    def connection(self) -> sqlite3.Connection:
        """The open database (WAL, a busy timeout), its schema made on first use."""
        if self._connection is None:
            # 0600 before SQLite opens it: it gives the -wal and -shm files (which hold the
            # indexed text too) the database's mode when it creates them.
            private_database(self.database)
            connection = sqlite3.connect(
                self.database,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,  # the tool's lock keeps it to one call at a time
            )
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _switch_to_wal(connection)
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA secure_delete = ON")  # a deleted conversation's text
            # IF NOT EXISTS: two processes may both run it
            connection.executescript(_SCHEMA + ";" + _MESSAGES)
            _made_again_if_older(connection)
            self._connection = connection
        return self._connection

    def close(self) -> None:
        """Close the database."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def update(self, *, within: float = 0.0) -> int:
        """Index what was appended to the transcripts since the last update; the number of
        messages indexed now.

        With ``within``, the files are not looked at again when this index looked at them
        less than ``within`` seconds ago and no session was added or removed since (the
        directory is unchanged): a new session is found at once, more messages appended to
        an older one within that time wait for the next look."""
        try:
            directory: int | None = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:  # none yet, or removed whole: nothing to index, all to forget
            directory = None
        now = time.monotonic()
        looked = self._looked
        unchanged = looked is not None and looked[0] == directory
        if within and unchanged and looked is not None and now - looked[1] < within:
            return 0
        if directory is None and self._connection is None and not self.database.exists():
            return 0  # no index made: none to make for no transcript
        self._looked = (directory, now)
        connection = self.connection()
        # Read before the folder is: a session another process indexes meanwhile is never
        # taken for one deleted.
        known = {
            session: (offset, inode)
            for session, offset, inode in connection.execute(
                "SELECT session, offset, inode FROM files"
            )
        }
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            entries = []
        added = 0
        present = set()
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            session = entry.name[: -len(".jsonl")]
            if _SURROGATE.search(session):  # a name that is not UTF-8: no session of hermes'
                continue
            try:
                status = entry.stat()
            except FileNotFoundError:  # deleted since the folder was read
                continue
            present.add(session)
            if known.get(session) == (status.st_size, status.st_ino):
                continue
            added += self._index_file(Path(entry.path), session)
        self._forget([session for session in known if session not in present])
        return added

    def drop(self, sessions: Sequence[str]) -> None:
        """Drop at once the rows of those of ``sessions`` whose transcripts are gone (as an
        update does, :meth:`_forget`); a transcript there still (the same id written again) is
        the truth, and its rows stay."""
        gone = [one for one in sessions if not (self.directory / f"{one}.jsonl").exists()]
        if gone and (self._connection is not None or self.database.exists()):
            self._forget(gone)

    def _forget(self, sessions: list[str]) -> None:
        """Drop the rows of ``sessions``, whose transcripts are gone (deleted: the transcripts
        are the truth, whether this index was updated at the time or not), and merge the
        index so that no word of theirs stays in it; the pages freed are overwritten
        (``secure_delete``), and written back into the database file at once (a checkpoint),
        the write-ahead log emptied: another process holding the index open would otherwise
        keep the old pages in the file until it closes it. The checkpoint waits (the busy
        timeout) for a search reading meanwhile to end."""
        if not sessions:
            return
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            for session in sessions:
                connection.execute("DELETE FROM messages WHERE session = ?", (session,))
                connection.execute("DELETE FROM files WHERE session = ?", (session,))
            # Deleted rows leave their words in the older segments until they are merged.
            connection.execute("INSERT INTO messages (messages) VALUES ('optimize')")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _index_file(self, path: Path, session: str) -> int:
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            added = self._read_into(connection, path, session)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return added

    def _read_into(self, connection: sqlite3.Connection, path: Path, session: str) -> int:
        row = connection.execute(
            "SELECT offset, inode, messages FROM files WHERE session = ?", (session,)
        ).fetchone()
        try:
            stream = path.open("rb")
        except FileNotFoundError:
            return 0
        with stream:
            status = os.fstat(stream.fileno())
            offset, count = 0, 0
            if row is not None and row[1] == status.st_ino and row[0] <= status.st_size:
                offset, count = row[0], row[2]
            elif row is not None:  # replaced or cut: read it again whole, headers too
                connection.execute("DELETE FROM messages WHERE session = ?", (session,))
                connection.execute("DELETE FROM files WHERE session = ?", (session,))
            stream.seek(offset)
            with transcript_read_lock(stream):
                data = stream.read()
        # One header per process that took the conversation up: it started with the first,
        # and runs with the latest's model (what resuming reads, Transcript.header).
        first: dict[str, Any] = {}
        header: dict[str, Any] = {}
        title: dict[str, Any] = {}
        rows: list[tuple[str, str, str, str, float]] = []
        consumed = 0
        for line, end in _complete_lines(data):
            consumed = end
            record = _record(line)
            if record is None:
                continue
            if record.get("type") == "session":
                first = first or record
                header = record
            elif record.get("type") == "title":
                title = record
            elif record.get("type") == "message":
                text = record.get("content")
                if counts_as_message(text):
                    text = _SURROGATE.sub("\ufffd", text[:MAX_INDEXED_CHARS])
                    role = _SURROGATE.sub("\ufffd", str(record.get("role")))
                    rows.append((indexed_text(text), also_text(text), session, role, _time(record)))
        connection.executemany(
            "INSERT INTO messages (content, also, session, role, time) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        started = _time(first) if first else None
        connection.execute(
            "INSERT INTO files (session, offset, inode, started, model, parent, messages, title) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET "
            "offset = excluded.offset, inode = excluded.inode, messages = excluded.messages, "
            "started = coalesce(files.started, excluded.started), "
            "model = coalesce(excluded.model, files.model), "
            "parent = coalesce(excluded.parent, files.parent), "
            # A part without a title record keeps the title; one with a record of none (a
            # title cleared: hermes sessions rename --clear) takes it away.
            "title = CASE WHEN ? THEN excluded.title ELSE files.title END",
            (
                session,
                offset + consumed,
                status.st_ino,
                started,
                _text(header.get("model")),
                _text(header.get("parent")),
                count + len(rows),
                _text(title.get("title")) or None,
                bool(title),
            ),
        )
        return len(rows)

    def search(self, query: str, limit: int, *, exclude: str | None = None) -> list[SessionHit]:
        """The ``limit`` sessions that match ``query`` best (not ``exclude``): :meth:`find`'s."""
        return self.find(query, limit, exclude=exclude).hits

    def find(self, query: str, limit: int, *, exclude: str | None = None) -> Found:
        """The ``limit`` sessions that match ``query`` best (not ``exclude``): the sum of their
        matching messages' BM25 scores, each with a snippet of its best message. A word no
        conversation holds is searched as the closest word the index holds too
        (:mod:`.typos`), beside the words that matched, which keep their weight."""
        words = query_words(query)
        match = words_query(words)
        if match is None:
            return Found([])
        hits = self._ranked(match, limit, exclude)
        marked = {folded(one) for hit in hits for one in marked_words(hit.snippet)}
        look_up = bool(hits) or exclude is not None
        corrected, unknown = corrections(self.connection(), words, marked, look_up=look_up)
        if corrected:
            searched = words_query([*words, *corrected.values()])
            hits = self._ranked(searched or match, limit, exclude)
        return Found(hits, corrected, unknown)

    def _ranked(self, match: str, limit: int, exclude: str | None) -> list[SessionHit]:
        connection = self.connection()
        # SQLite's bare-column rule: rowid is the one of the row holding min(rank).
        ranked = connection.execute(
            "SELECT session, sum(rank) AS total, min(rank), rowid FROM messages "
            "WHERE messages MATCH ? AND session != ? GROUP BY session ORDER BY total LIMIT ?",
            (match, exclude or "", limit),
        ).fetchall()
        hits = []
        for session, score, _, best in ranked:
            (snippet,) = connection.execute(
                "SELECT snippet(messages, 0, '[', ']', '...', 16) FROM messages "
                "WHERE messages MATCH ? AND rowid = ?",
                (match, best),
            ).fetchone()
            meta = connection.execute(
                "SELECT started, messages, model, title FROM files WHERE session = ?", (session,)
            ).fetchone()
            started, count, model, title = meta if meta is not None else (None, 0, None, None)
            shown = " ".join(shown_text(snippet).split())
            hits.append(SessionHit(session, started, count, shown, score, model, title))
        return hits


def _made_again_if_older(connection: sqlite3.Connection) -> None:
    """Make again, empty, an index an earlier version made (its tokens and columns differ),
    once, in one transaction (another process may be doing the same): the next update reads
    every transcript again. A process of the version before still writing to it names its
    columns, and ``also`` stays empty for its rows."""
    if connection.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        if connection.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            connection.execute("DROP TABLE IF EXISTS messages")
            connection.execute(_MESSAGES)
            connection.execute("DELETE FROM files")
            if "title" not in {row[1] for row in connection.execute("PRAGMA table_info(files)")}:
                connection.execute("ALTER TABLE files ADD COLUMN title TEXT")  # made before 4
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _complete_lines(data: bytes) -> Iterator[tuple[bytes, int]]:
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return
        yield data[start:end], end + 1
        start = end + 1


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python can read
        return None
    return record if isinstance(record, dict) else None


def _time(record: dict[str, Any]) -> float:
    value = record.get("time")
    try:
        moment = float(value) if isinstance(value, int | float) else 0.0
    except OverflowError:  # an integer of hundreds of digits
        return 0.0
    return moment if math.isfinite(moment) else 0.0


def _text(value: object) -> str | None:
    """A header's text field as SQLite can keep it, or ``None``."""
    return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else None

"""The job store's tables, opened (:func:`open_store`), and its columns added since its first
version, given to a store made before them (:func:`add_later_columns`).

A store made before a column gets it on first open (``ALTER TABLE``; each process that opens
it checks): its rows hold ``NULL`` there, which each such column reads as "as before". Two
processes opening one old store at once both look, and the second's ``ALTER`` finds the column
added: that is no error.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from hermes_core._private_files import private_database
from hermes_core.agent._cron_schedule import JobError

__all__ = ["LOCK_WAIT", "add_later_columns", "open_store", "store_error"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, schedule TEXT NOT NULL, prompt TEXT NOT NULL,
    toolsets TEXT, delivery TEXT NOT NULL, paused INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL, next_run REAL, lease_owner TEXT, lease_until REAL, cwd TEXT,
    model TEXT, lease_start TEXT, lease_awake TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, due REAL, started REAL NOT NULL,
    finished REAL, owner TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
    output TEXT NOT NULL DEFAULT '');
"""


LOCK_WAIT: Final = 30.0
"""How long (seconds) opening or changing the store waits for another process's lock."""


def open_store(path: Path, lock_wait: float = LOCK_WAIT) -> sqlite3.Connection:
    """A connection to the job store ``path`` (made, ``0600``, on first use; in WAL mode),
    its tables and later columns there; a file that cannot be one, or that another process
    keeps locked past ``lock_wait`` seconds, is a :class:`JobError` (:func:`store_error`)."""
    try:
        private_database(path)  # the prompts and the answers: 0600 with its -wal
        db = sqlite3.connect(path, timeout=lock_wait, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        add_later_columns(db)
    except (sqlite3.DatabaseError, OSError) as bad:
        raise store_error(path, bad, lock_wait) from None
    return db


def store_error(path: Path, bad: Exception, lock_wait: float) -> JobError:
    """The error of the store ``path`` that ``bad`` stopped: a lock held past ``lock_wait``
    seconds, or a write that failed (a full disk), is no damage (the file is sound, its last
    transaction rolled back)."""
    if isinstance(bad, sqlite3.OperationalError) and "locked" in str(bad):
        return JobError(
            "store",
            f"{path} is locked by another process (still after {lock_wait:g} s): try again; "
            "if it stays locked, stop the process that holds it (a sqlite3 shell, a stuck "
            "hermes)",
        )
    if isinstance(bad, sqlite3.OperationalError) and ("full" in str(bad) or "I/O" in str(bad)):
        return JobError(
            "store",
            f"{path} could not be written ({bad}): free some space on its disk and try again; "
            "nothing was changed",
        )
    return JobError("store", f"{path} cannot be read as a job store: {bad}")


LATER_COLUMNS: Final = (
    ("cwd", "TEXT"),
    ("model", "TEXT"),
    ("lease_start", "TEXT"),
    ("lease_awake", "TEXT"),
)
"""Each column of ``jobs`` added after the first version, and its type: ``cwd`` (the directory
its runs work in; ``NULL``: the running process's, as before), ``model`` (the model its runs
ask; ``NULL``: ``model.model`` at run time, as before), ``lease_start`` (when the lease's
holder started, :func:`~hermes_core.agent._cron_lease.process_start`; ``NULL``: the lease is
over when its holder's pid is gone or it ran out, as before), ``lease_awake`` (its end in the
machine's awake time, :func:`~hermes_core.agent._cron_lease.awake_stamp`; ``NULL``: a live
holder keeps it, as before)."""


def add_later_columns(db: sqlite3.Connection) -> None:
    """Give the ``jobs`` table of ``db`` each of :data:`LATER_COLUMNS` it lacks."""
    present = {row[1] for row in db.execute("PRAGMA table_info(jobs)")}
    for column, kind in LATER_COLUMNS:
        if column in present:
            continue
        try:
            db.execute(f"ALTER TABLE jobs ADD COLUMN {column} {kind}")
        except sqlite3.OperationalError as raced:  # another process added it since the look
            if "duplicate column" not in str(raced):
                raise

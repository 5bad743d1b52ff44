"""The job store's columns added since its first version, given to a store made before them
(:func:`add_later_columns`).

A store made before a column gets it on first open (``ALTER TABLE``; each process that opens
it checks): its rows hold ``NULL`` there, which each such column reads as "as before". Two
processes opening one old store at once both look, and the second's ``ALTER`` finds the column
added: that is no error.
"""

from __future__ import annotations

import sqlite3
from typing import Final

__all__ = ["add_later_columns"]

LATER_COLUMNS: Final = (("cwd", "TEXT"), ("model", "TEXT"))
"""Each column of ``jobs`` added after the first version, and its type: ``cwd`` (the directory
its runs work in; ``NULL``: the running process's, as before), ``model`` (the model its runs
ask; ``NULL``: ``model.model`` at run time, as before)."""


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

"""An example memory provider plugin: ``sqlite``, the agent's memory in a SQLite database
(an external store stands in the same place: a service, a vector database).

Copy this folder into your plugins first, from the repository::

    cp -r examples/memory_provider_plugin ~/.hermes/plugins/sqlite-memory

then enable it and select it in ``config.yaml``::

    plugins:
      enabled: [sqlite-memory]
      entries:
        sqlite-memory:
          database: ~/notes/hermes-memory.db   # default: $HERMES_HOME/memory.db
    memory:
      provider: sqlite

A memory provider is any object with ``load(target)`` and ``save(target, entries)`` (the
``hermes_core.agent.MemoryProvider`` protocol): two lists of entries, ``memory`` and ``user``,
each saved whole. The ``memory`` tool keeps the rules (budgets, unique matches, refused content);
the provider keeps what it is given. ``hermes_core.testing.memory_provider_conformance`` checks
a provider against the protocol.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_core.agent import MEMORY_TARGETS, MemoryTarget
from hermes_core.plugin import MemoryProviderSpec, PluginContext, hookimpl


@dataclass(frozen=True)
class SqliteMemorySettings:
    """``plugins.entries.sqlite-memory``."""

    database: str | None = None
    """The database file (default: ``memory.db`` in the home)."""


class SqliteMemoryProvider:
    """The memory in one SQLite database: a row per entry, each save one transaction."""

    def __init__(self, database: Path) -> None:
        self.database = database
        database.parent.mkdir(parents=True, exist_ok=True)
        connection = self._connect()
        try:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries "
                "(target TEXT NOT NULL, position INTEGER NOT NULL, text TEXT NOT NULL, "
                "PRIMARY KEY (target, position))"
            )
        finally:
            connection.close()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.database, timeout=10.0)
        connection.execute("PRAGMA journal_mode=WAL")
        return connection

    @staticmethod
    def _checked(target: str) -> str:
        if target not in MEMORY_TARGETS:
            raise ValueError(f"unknown memory target {target!r}: use one of {MEMORY_TARGETS}")
        return target

    def load(self, target: MemoryTarget) -> list[str]:
        """The entries of ``target``, in order."""
        name = self._checked(target)
        connection = self._connect()
        try:
            rows = connection.execute(
                "SELECT text FROM entries WHERE target = ? ORDER BY position", (name,)
            ).fetchall()
        finally:
            connection.close()
        return [text for (text,) in rows]

    def save(self, target: MemoryTarget, entries: Sequence[str]) -> None:
        """Replace the entries of ``target`` in one transaction."""
        name = self._checked(target)
        connection = self._connect()
        try:
            with connection:  # one transaction: the old rows or the new ones
                connection.execute("DELETE FROM entries WHERE target = ?", (name,))
                connection.executemany(
                    "INSERT INTO entries (target, position, text) VALUES (?, ?, ?)",
                    [(name, position, text) for position, text in enumerate(entries)],
                )
        finally:
            connection.close()


def _provider(context: PluginContext) -> SqliteMemoryProvider:
    settings = context.settings_as(SqliteMemorySettings)
    where = Path(settings.database).expanduser() if settings.database else None
    return SqliteMemoryProvider(where or context.env.home / "memory.db")


@hookimpl
def hermes_memory_providers() -> list[MemoryProviderSpec]:
    """The ``sqlite`` memory provider."""
    return [MemoryProviderSpec("sqlite", factory=_provider, description="memory in SQLite")]

"""``MemoryProvider``: where the agent's memory is kept, the protocol a memory provider plugin
implements (``MemoryProviderSpec``, selected by ``memory.provider``), and nothing else.

A provider stores two lists of entries, one per target (:data:`MEMORY_TARGETS`): ``memory``
(notes about the work and the environment) and ``user`` (what the agent learned about the
person). It keeps what it is given: the rules of what may be written (budgets, unique
substrings, refused content) are the ``memory`` tool's (:mod:`hermes_core.agent._memory`), the
same over every provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, Protocol, runtime_checkable

MemoryTarget = Literal["memory", "user"]
"""A part of the memory: ``"memory"`` (the work and the environment) or ``"user"``."""
MEMORY_TARGETS: Final[tuple[MemoryTarget, ...]] = ("memory", "user")
"""The two parts of the memory: notes about the work and the environment, and the user."""


@runtime_checkable
class MemoryProvider(Protocol):
    """Stores the entries of each target. Both methods are plain functions (``def``), called
    from the agent's event loop: keep them short (a local file, a database row)."""

    def load(self, target: MemoryTarget) -> list[str]:
        """The entries of ``target``, in the order they were saved; ``[]`` when there are none.
        Raise ``OSError`` or ``ValueError`` (with a message naming what and where) when the
        store cannot be read."""
        ...

    def save(self, target: MemoryTarget, entries: Sequence[str]) -> None:
        """Replace the entries of ``target`` with ``entries``, all or nothing: a reader (or the
        next process) sees the old list or the new one, never a mix, even when the writer is
        killed half-way."""
        ...

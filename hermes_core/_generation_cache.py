"""``GenerationCache``: the one way a value derived from the tool registry is kept.

Everything the host derives from the registered tools (the enabled tools, the split into
visible and deferred tools, assembled tool arrays, compiled argument validators) is cached
against the registry's ``generation``, which grows on every change: a cache whose generation is
not the source's is dropped whole on its next use. Nothing is invalidated by hand, so nothing
can be forgotten.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

__all__ = ["GenerationCache", "Versioned"]

K = TypeVar("K")
V = TypeVar("V")


class Versioned(Protocol):
    """A source whose ``generation`` changes whenever what is derived from it may change."""

    @property
    def generation(self) -> int: ...


class GenerationCache(Generic[K, V]):
    """Values derived from ``source``, kept until its generation changes.

    ``limit`` bounds the entries of one generation (the oldest is dropped first), for keys that
    come from outside, such as the grants of many sessions.
    """

    __slots__ = ("_generation", "_limit", "_source", "_values")

    def __init__(self, source: Versioned, *, limit: int | None = None) -> None:
        self._source = source
        self._limit = limit
        self._generation = -1
        self._values: dict[K, V] = {}

    def _current(self) -> dict[K, V]:
        generation = self._source.generation
        if generation != self._generation:
            self._values = {}
            self._generation = generation
        return self._values

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` at the source's current generation, or ``None``."""
        return self._current().get(key)

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` until the source changes; returns ``value``."""
        values = self._current()
        if self._limit is not None and key not in values and len(values) >= self._limit:
            del values[next(iter(values))]
        values[key] = value
        return value

    def __len__(self) -> int:
        """How many values are kept for the current generation."""
        return len(self._current())

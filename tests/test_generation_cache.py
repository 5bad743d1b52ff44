"""``GenerationCache``: values derived from the registry are dropped when it changes, and only
then; a bounded cache drops its oldest entry first."""

from __future__ import annotations

from hermes_core._generation_cache import GenerationCache
from hermes_core._registry import Registry
from hermes_core._tools import Tool


def test_values_are_kept_until_the_registry_changes() -> None:
    registry = Registry()
    cache: GenerationCache[str, int] = GenerationCache(registry)
    cache.put("answer", 42)

    assert cache.get("answer") == 42
    registry.register(Tool("late", "A tool registered later."), owner="plugin")

    assert cache.get("answer") is None
    assert len(cache) == 0


def test_a_bounded_cache_drops_its_oldest_entry_first() -> None:
    cache: GenerationCache[str, int] = GenerationCache(Registry(), limit=2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)  # a known key is replaced, not counted twice
    cache.put("c", 3)

    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, 2, 3)

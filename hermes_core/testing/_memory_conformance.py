"""The rules every memory provider follows, as checks a provider author runs against a plugin.

Each rule is a function named after it that takes ``make`` (a function of a directory returning
a new provider whose store lives in it, or is named after it: two providers made for the same
directory share one store) and raises :class:`AssertionError` saying what the provider did
instead. They check what the :class:`~hermes_core.agent.MemoryProvider` protocol promises the
``memory`` tool and the system prompt:

- its methods are plain functions (``def``), as the protocol declares them;
- an empty store has no entries, for both targets;
- saved entries load back as they were, in order (Unicode, several lines, Markdown);
- the targets ``memory`` and ``user`` are kept apart;
- a save replaces the whole list (an empty list empties the target);
- a new provider over the same store sees what was saved (the memory outlives the process);
- what ``load`` returns is the caller's: changing it changes nothing stored;
- an unknown target is refused with a ``ValueError``.

Run them with :func:`memory_provider_conformance`, one test per rule.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core._plugins.selection import protocol_problem
from hermes_core.agent._memory_provider import MemoryProvider, MemoryTarget

__all__ = ["MEMORY_PROVIDER_RULES", "MakeMemoryProvider", "memory_provider_conformance"]

MakeMemoryProvider = Callable[[Path], MemoryProvider]
"""Returns a new provider over the store of the directory it is given."""

SAMPLE: tuple[str, ...] = (
    "The project runs its tests with `nox -s tests`; never the whole suite on 2 cores.",
    "Deploys go through staging first:\n- build\n- smoke test\n- promote",
    "Le dépôt utilise des noms en français ; 日本語のコメントもある。 ✓",
)


def _store() -> Path:
    return Path(tempfile.mkdtemp(prefix="hermes-memory-conformance-"))


def its_methods_are_plain_functions(make: MakeMemoryProvider) -> None:
    """``load`` and ``save`` exist and are ``def``, not ``async def``."""
    problem = protocol_problem("memory_provider", make(_store()))
    assert problem is None, f"the provider does not implement MemoryProvider: {problem}"


def an_empty_store_has_no_entries(make: MakeMemoryProvider) -> None:
    """A new store loads ``[]`` for both targets."""
    provider = make(_store())
    targets: tuple[MemoryTarget, ...] = ("memory", "user")
    for target in targets:
        found = provider.load(target)
        assert found == [], f"a new store loaded {found!r} for {target!r}, expected []"


def saved_entries_load_back_in_order(make: MakeMemoryProvider) -> None:
    """Entries load back unchanged and in order."""
    provider = make(_store())
    provider.save("memory", list(SAMPLE))
    found = provider.load("memory")
    assert found == list(SAMPLE), f"saved {list(SAMPLE)!r}, loaded {found!r}"


def the_targets_are_kept_apart(make: MakeMemoryProvider) -> None:
    """What is saved for ``user`` is not in ``memory``, and the other way round."""
    provider = make(_store())
    provider.save("memory", ["a note about the work"])
    provider.save("user", ["the user prefers short answers"])
    assert provider.load("memory") == ["a note about the work"], provider.load("memory")
    assert provider.load("user") == ["the user prefers short answers"], provider.load("user")


def a_save_replaces_the_whole_list(make: MakeMemoryProvider) -> None:
    """The second save wins whole; saving ``[]`` empties the target."""
    provider = make(_store())
    provider.save("user", list(SAMPLE))
    provider.save("user", [SAMPLE[1]])
    assert provider.load("user") == [SAMPLE[1]], f"after two saves: {provider.load('user')!r}"
    provider.save("user", [])
    assert provider.load("user") == [], f"after saving []: {provider.load('user')!r}"


def a_new_provider_sees_what_was_saved(make: MakeMemoryProvider) -> None:
    """Another provider made over the same store (the next process) loads the same entries."""
    store = _store()
    make(store).save("memory", list(SAMPLE))
    found = make(store).load("memory")
    assert found == list(SAMPLE), f"a new provider over the same store loaded {found!r}"


def what_load_returns_is_the_callers(make: MakeMemoryProvider) -> None:
    """Changing the list ``load`` returned changes nothing stored."""
    provider = make(_store())
    provider.save("memory", ["kept"])
    provider.load("memory").append("not saved")
    assert provider.load("memory") == ["kept"], (
        f"load returned a live list: {provider.load('memory')!r}"
    )


def an_unknown_target_is_refused(make: MakeMemoryProvider) -> None:
    """``load`` and ``save`` of a target other than ``memory`` and ``user`` raise ``ValueError``."""
    provider: Any = make(_store())
    for method, arguments in (("load", ("notes",)), ("save", ("notes", ["x"]))):
        try:
            getattr(provider, method)(*arguments)
        except ValueError:
            continue
        raise AssertionError(f"{method} accepted the target 'notes'; expected a ValueError")


MEMORY_PROVIDER_RULES: tuple[Callable[[MakeMemoryProvider], None], ...] = (
    its_methods_are_plain_functions,
    an_empty_store_has_no_entries,
    saved_entries_load_back_in_order,
    the_targets_are_kept_apart,
    a_save_replaces_the_whole_list,
    a_new_provider_sees_what_was_saved,
    what_load_returns_is_the_callers,
    an_unknown_target_is_refused,
)
"""Every rule a memory provider follows, in the order they are run."""


def memory_provider_conformance(make: MakeMemoryProvider) -> list[Any]:
    """One ``pytest.param`` per rule of :data:`MEMORY_PROVIDER_RULES` (its id is the rule's
    name): a function of no arguments checking that rule against providers from ``make``::

        @pytest.mark.parametrize(
            "check", memory_provider_conformance(lambda store: MyProvider(store))
        )
        def test_my_provider_follows_the_protocol(check):
            check()
    """
    return [
        pytest.param(functools.partial(rule, make), id=rule.__name__.replace("_", "-"))
        for rule in MEMORY_PROVIDER_RULES
    ]

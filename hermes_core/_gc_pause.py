"""Pausing Python's cyclic garbage collector while a bulk of long-lived objects is made.

Loading a large catalog allocates millions of containers (parsed JSON, tools, index documents)
that all survive. Each allocation burst triggers a collection that traverses every container
made so far, so with the collector running, loading 330,000 catalog tools costs several times
what the work itself does (docs/performance.md, "Host at scale"). Nothing made there is cyclic
garbage, so the collector is paused for the duration and resumed after. The CLI's read-only
``hermes tools`` commands run paused as a whole: one short process, little garbage, and every
collection would walk the whole catalog. ``hermes serve`` runs its start paused (the MCP SDK's
import, plugins, catalogs, the first tool list: about 8 % of its time to the first answer went
to collections), then freezes what the start made and resumes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "end_start_pause", "pause_for_start"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector disabled, restoring its state after
    (re-entrant: an inner pause leaves it disabled for the outer one)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _StartPause:
    running = False


def pause_for_start() -> None:
    """Disable the collector for a server's start, until :func:`end_start_pause` (a collector
    disabled already is left to whoever disabled it)."""
    if gc.isenabled():
        gc.disable()
        _StartPause.running = True


def end_start_pause() -> None:
    """End the pause :func:`pause_for_start` began, if one runs: what exists now is frozen,
    then the collector resumes. Without a pause running, nothing happens."""
    if _StartPause.running:
        _StartPause.running = False
        # The start's objects (modules, plugins, the catalog's names) live as long as the
        # server: frozen, later collections do not walk them again. The little cyclic garbage
        # the start left (about 900 objects at 330,000 catalog tools) stays with them; a
        # collection to free it first would cost 0.14 s before the first answer.
        gc.freeze()
        gc.enable()

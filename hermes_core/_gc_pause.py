"""Pausing Python's cyclic garbage collector while a bulk of long-lived objects is made.

Loading a large catalog allocates millions of containers (parsed JSON, tools, index documents)
that all survive. Each allocation burst triggers a collection that traverses every container
made so far, so with the collector running, loading 330,000 catalog tools costs several times
what the work itself does (docs/performance.md, "Host at scale"). Nothing made there is cyclic
garbage, so the collector is paused for the duration and resumed after. The CLI's read-only
``hermes tools`` commands run paused as a whole: one short process, little garbage, and every
collection would walk the whole catalog.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


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

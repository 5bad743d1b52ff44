"""Suite-wide hooks: the garbage collector around collection."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    # Collection builds hundreds of thousands of long-lived objects (every test module's AST
    # rewritten and compiled, then the items), and the collector's full passes over them were
    # a third of a worker's collection CPU. They run rarely here and never over what
    # collection made: it is frozen, as hermes freezes its own start (hermes_core/_gc_pause.py).
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 1_000)
    try:
        return (yield)
    finally:
        gc.set_threshold(*thresholds)
        gc.freeze()

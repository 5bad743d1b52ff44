"""The collector pause that bulk catalog loading runs under."""

from __future__ import annotations

import gc

import pytest

from hermes_core._gc_pause import collector_paused


def test_collector_paused_disables_collection_and_restores_it_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one paused
    assert gc.isenabled()


def test_collector_paused_restores_collection_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_collector_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()

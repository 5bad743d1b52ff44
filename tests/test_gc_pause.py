"""The collector pause that bulk catalog loading runs under."""

from __future__ import annotations

import gc

import pytest

from hermes_core._gc_pause import collector_paused, end_start_pause, pause_for_start


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


def test_a_servers_start_pause_ends_once_with_what_the_start_made_frozen() -> None:
    frozen = gc.get_freeze_count()
    end_start_pause()  # no pause running: nothing happens
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
    pause_for_start()
    try:
        assert not gc.isenabled()
        made = [[index] for index in range(1000)]
        end_start_pause()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(made)
        end_start_pause()  # once only
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_start_pause_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        pause_for_start()
        end_start_pause()
        assert not gc.isenabled()
    finally:
        gc.enable()

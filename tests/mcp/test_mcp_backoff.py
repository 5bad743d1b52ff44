"""Reconnect backoff: 1 s doubling to 60 s, reset only after 60 s of uptime."""

from __future__ import annotations

from hermes_core._mcp.backoff import Backoff


def test_delay_doubles_up_to_the_maximum() -> None:
    backoff = Backoff()
    delays = [backoff.next_delay(None) for _ in range(9)]
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_short_uptime_does_not_reset_the_backoff() -> None:
    backoff = Backoff()
    backoff.next_delay(None)
    backoff.next_delay(None)
    assert backoff.next_delay(59.9) == 4


def test_backoff_resets_after_sixty_seconds_of_uptime() -> None:
    backoff = Backoff()
    for _ in range(5):
        backoff.next_delay(None)
    assert backoff.next_delay(60.0) == 1
    assert backoff.next_delay(None) == 2


def test_base_is_configurable() -> None:
    backoff = Backoff(base=0.1, maximum=0.3)
    assert [backoff.next_delay(None) for _ in range(4)] == [0.1, 0.2, 0.3, 0.3]

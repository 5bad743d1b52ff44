"""Awaiting hooks and handlers under a timeout."""

from __future__ import annotations

import anyio
import pytest

from hermes_core._timeouts import await_with_timeout


async def _immediate() -> str:
    return "now"


async def _waits(seconds: float) -> str:
    await anyio.sleep(seconds)
    await anyio.sleep(0)
    return "later"


async def _fails_after_waiting() -> str:
    await anyio.sleep(0)
    raise LookupError("missing")


def test_a_coroutine_that_never_waits_returns_its_value() -> None:
    assert anyio.run(await_with_timeout, _immediate(), 0.001) == "now"


def test_a_coroutine_that_waits_within_the_timeout_returns_its_value() -> None:
    assert anyio.run(await_with_timeout, _waits(0.01), 5.0) == "later"


def test_a_coroutine_that_waits_too_long_times_out() -> None:
    with pytest.raises(TimeoutError):
        anyio.run(await_with_timeout, _waits(30), 0.1)


def test_an_exception_after_waiting_passes_through() -> None:
    with pytest.raises(LookupError, match="missing"):
        anyio.run(await_with_timeout, _fails_after_waiting(), 5.0)


def test_cancellation_from_outside_reaches_the_coroutine() -> None:
    cleaned_up: list[bool] = []

    async def guarded() -> None:
        try:
            await anyio.sleep(30)
        finally:
            cleaned_up.append(True)

    async def main() -> None:
        with anyio.move_on_after(0.1):
            await await_with_timeout(guarded(), 60)

    anyio.run(main)
    assert cleaned_up == [True]


def test_a_handler_that_opens_its_own_cancel_scope_before_waiting_works() -> None:
    # MCP and HTTP handlers open anyio scopes of their own; the timeout must nest around them.
    async def scoped() -> str:
        with anyio.fail_after(5):
            await anyio.sleep(0)
        return "scoped"

    assert anyio.run(await_with_timeout, scoped(), 5.0) == "scoped"

"""Awaiting a coroutine, or running a blocking function in a thread, under a timeout."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The caller's deadline passed: distinct from a ``TimeoutError`` the awaited code raised
    itself (a connect timeout inside a handler is that handler's failure, not ours)."""


async def await_with_timeout(coroutine: Coroutine[Any, Any, T], seconds: float) -> T:
    """The result of ``coroutine``; :class:`DeadlineExceeded` when it takes longer than
    ``seconds``.

    The coroutine runs entirely inside the cancel scope: starting it by hand and arming the
    timer only at its first suspension would be cheaper, but breaks any handler that opens a
    cancel scope of its own before it first waits (anyio requires scopes to nest). A bare
    ``CancelScope`` with a deadline does what ``anyio.fail_after`` does at a third of the cost,
    which matters on the dispatch path (a hook, the handler, a hook: three per call).
    """
    with anyio.CancelScope(deadline=anyio.current_time() + seconds):
        return await coroutine
    # Only reached when the scope's own deadline cancelled the coroutine; a cancellation from
    # an enclosing scope propagates out of the ``with`` instead.
    raise DeadlineExceeded(f"no result within {seconds:g} s")


async def run_sync_with_timeout(function: Callable[[], Any], seconds: float) -> Any:
    """Run ``function`` in a worker thread (awaiting what it returns when that is awaitable);
    :class:`DeadlineExceeded` after ``seconds``, abandoning the thread."""
    with anyio.CancelScope(deadline=anyio.current_time() + seconds):
        value = await anyio.to_thread.run_sync(function, abandon_on_cancel=True)
        if inspect.isawaitable(value):
            value = await value
        return value
    raise DeadlineExceeded(f"no result within {seconds:g} s")

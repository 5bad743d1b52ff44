"""Awaiting a coroutine, or running a blocking function in a thread, under a timeout; and telling
the cancellation of the caller apart from a cancellation exception that plugin code raised."""

from __future__ import annotations

import asyncio
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


def caller_cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is the cancellation of the running task or of one of its enclosing cancel
    scopes, which must propagate; else it is a failure of the code that raised it.

    Plugin code can raise ``asyncio.CancelledError`` (or ``KeyboardInterrupt``) itself: that is
    its failure, and swallowing it must not swallow a real cancellation. Under asyncio a real
    one has been requested on the task (anyio's cancel scopes request it too, and Ctrl-C under
    ``asyncio.run`` does), so the task's pending cancellation count tells them apart. Under trio
    only the cancellation machinery can create ``trio.Cancelled``.
    """
    cancelled = anyio.get_cancelled_exc_class()
    if not isinstance(exc, cancelled):
        return False
    if cancelled is not asyncio.CancelledError:
        return True
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0

"""Progress of the tool call being served: :func:`report_progress` for tool handlers, listeners
for whoever serves the call.

A handler calls ``report_progress(3, 10, "3 of 10 files")`` whenever it has news, from the event
loop or from a worker thread (a sync handler runs in one; the context variables it sees are the
caller's). The report goes to the listener bound around the call being served: ``hermes tools
call`` draws a progress line on the terminal, ``hermes serve`` sends ``notifications/progress``
to its client when the request carried a progress token, and the MCP client passes an upstream
server's reports on the same way. With no listener, a report is one context variable lookup.

Listeners are bound at the edges (the CLI command, serve's call handler), never in the
dispatcher: :func:`progress_sender` runs the delivery beside the call, keeps only the newest
report while one is being sent (a handler reporting faster than the client takes them does
not queue), spaces them by ``min_interval`` and drops a report whose
``progress`` does not increase (MCP requires increasing values).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import NamedTuple

import anyio

__all__ = [
    "ProgressListener",
    "ProgressReport",
    "listening_to_progress",
    "progress_listener",
    "progress_sender",
    "report_progress",
]


class ProgressReport(NamedTuple):
    """One report: ``progress`` so far, of ``total`` when known, and a short ``message``."""

    progress: float
    total: float | None = None
    message: str | None = None


ProgressListener = Callable[[ProgressReport], None]
"""Takes a report; called from any thread, so it must only hand the report on."""

_FLUSH_SECONDS = 1.0
"""The longest the last report may hold up the result."""

_listener: ContextVar[ProgressListener | None] = ContextVar("hermes_progress", default=None)


def report_progress(
    progress: float, total: float | None = None, message: str | None = None
) -> None:
    """Report the progress of the tool call being served to whoever listens (nobody: no-op).

    ``progress`` must grow from one report to the next (a report that does not is dropped);
    ``total`` is the value ``progress`` reaches at the end, when known; ``message`` says what is
    happening in a few words (``"12 s, 340 lines, last: compiling foo.c"``). Callable from the
    event loop or from a handler's worker thread; it never blocks and never raises.
    """
    listener = _listener.get()
    if listener is not None:
        listener(ProgressReport(float(progress), total, message))


def progress_listener() -> ProgressListener | None:
    """The listener of the call being served, if any: to pass reports on from another task (an
    MCP client's receive loop), or to skip work done only to report when nobody listens."""
    return _listener.get()


@contextmanager
def listening_to_progress(listener: ProgressListener | None) -> Iterator[None]:
    """Within the block (and the tasks and threads it starts), reports go to ``listener``
    (``None``: to nobody, e.g. the calls a script makes, whose progress is not the script's)."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


@asynccontextmanager
async def progress_sender(
    send: Callable[[ProgressReport], Awaitable[None]], *, min_interval: float = 0.0
) -> AsyncIterator[ProgressListener]:
    """A listener delivering reports through ``send`` from a task beside the block.

    The listener may be called from any thread. A report that arrives while another is being
    sent replaces any report still waiting (the newest is what matters); reports that do not
    increase ``progress`` are dropped; ``send`` failing (the client went away) ends delivery, not
    the call. A report still waiting when the block ends is sent then (the last one tells
    where the call ended), before the result.
    """
    import asyncio  # here: the tools' plugins import this module at every start

    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    wake = asyncio.Event()
    lock = threading.Lock()
    waiting: list[ProgressReport] = []
    sent: list[float] = []

    def listener(report: ProgressReport) -> None:
        with lock:
            if sent and report.progress <= sent[-1]:
                return
            if waiting and report.progress <= waiting[0].progress:
                return
            waiting[:] = [report]
        if threading.get_ident() == loop_thread:
            wake.set()
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the call is over
                loop.call_soon_threadsafe(wake.set)

    closing = False
    finished = anyio.Event()

    async def deliver() -> None:
        try:
            while True:
                if not closing:
                    await wake.wait()
                wake.clear()
                with lock:
                    report = waiting.pop() if waiting else None
                    if report is not None:
                        sent[:] = [report.progress]
                if report is None:
                    if closing:
                        return
                    continue
                try:
                    await send(report)
                except Exception:
                    return
                if not closing:
                    await anyio.sleep(min_interval)
        finally:
            finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(deliver)
        try:
            yield listener
        finally:
            # The report being sent and the one waiting go out before the result.
            closing = True
            wake.set()
            with anyio.move_on_after(_FLUSH_SECONDS, shield=True):
                await finished.wait()
            group.cancel_scope.cancel()

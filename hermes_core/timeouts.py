"""Awaiting a coroutine under a timeout."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


async def await_with_timeout(coroutine: Coroutine[Any, Any, T], seconds: float) -> T:
    """The result of ``coroutine``; ``TimeoutError`` when it takes longer than ``seconds``.

    The coroutine runs entirely inside the cancel scope: starting it by hand and arming the
    timer only at its first suspension would be cheaper, but breaks any handler that opens a
    cancel scope of its own before it first waits (anyio requires scopes to nest).
    """
    with anyio.fail_after(seconds):
        return await coroutine

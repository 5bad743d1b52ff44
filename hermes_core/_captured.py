"""Output a child process wrote to a file, kept to a size the model can read: head and tail."""

from __future__ import annotations

from typing import IO

__all__ = ["head_and_tail"]


def head_and_tail(
    handle: IO[bytes], size: int, cap: int, *, saved_to: str | None = None
) -> tuple[str, bool]:
    """The ``size`` bytes of ``handle`` as text, or, beyond ``cap`` bytes, its first and last
    ``cap / 2`` bytes with a note in between saying how much was left out (and that all of it is
    in ``saved_to``, when given); the flag says whether anything was left out."""
    handle.seek(0)
    if size <= cap:
        return handle.read().decode("utf-8", "replace"), False
    half = cap // 2
    head = handle.read(half).decode("utf-8", "replace")
    handle.seek(size - half)
    tail = handle.read(half).decode("utf-8", "replace")
    where = f"; all of it is in {saved_to}" if saved_to else ""
    return f"{head}\n[... {size - 2 * half} bytes of output left out{where} ...]\n{tail}", True

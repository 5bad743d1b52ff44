"""The prompt of ``hermes run`` from stdin, as ``llm`` and ``claude -p`` read theirs.

``hermes run -``, or ``hermes run`` without PROMPT while stdin is not a terminal, reads the
whole prompt from stdin (:func:`whole_prompt`). ``hermes run PROMPT`` with stdin a pipe, a
socket or a regular file (``git diff | hermes run "write a commit message"``,
``< notes.txt``) gets PROMPT, a blank line, then that text (:func:`with_piped_text`); with
stdin a terminal or a character device (``/dev/null``) PROMPT goes alone and stdin is not read.

What is read is bytes, at most :data:`~hermes_core._jsonrpc_lines.MAX_LINE_BYTES` (the longest
message hermes reads from any peer): past it, a usage error naming the bound, before the rest
is read. Text that is not UTF-8 is a usage error naming the first bad byte, rather than decoded
with replacement characters: a binary file or a Latin-1 one piped by mistake would reach the
model as noise or with its accents lost, and nothing would say so. The end's blank lines and
spaces are dropped (a file's last newline); the start is kept (an indented snippet).

A pipe the writer keeps open without writing (a parent that never closes it) would hang
silently: after :data:`SILENCE` seconds without data, one line on stderr says hermes waits for
stdin and how to skip it; hermes goes on waiting (``make 2>&1 | hermes run ...`` is slow, not
stuck).
"""

from __future__ import annotations

import os
import select
import stat
import sys
from typing import Final

import click

from hermes_core._jsonrpc_lines import MAX_LINE_BYTES

__all__ = ["SILENCE", "stdin_has_data", "whole_prompt", "with_piped_text"]

SILENCE: Final = 3.0
"""Seconds of a silent stdin before hermes says it waits for it."""
_CHUNK: Final = 1 << 16
EMPTY: Final = "PROMPT is empty (stdin held no text): give the model something to do"


def stdin_has_data() -> bool:
    """Whether stdin is something piped or redirected in: a pipe, a socket or a regular file
    (an in-memory stream, under a test's runner, too); not a terminal, not a character device
    such as ``/dev/null``, not a closed stdin."""
    if sys.stdin is None:
        return False
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):  # no descriptor: a stream in memory is what it holds
        return not sys.stdin.closed
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def whole_prompt() -> str:
    """``hermes run -``: the prompt is all of stdin; a usage error when it is blank."""
    text = _read("hermes: waiting for stdin to end (the prompt is read from it; Ctrl-D ends it)")
    if not text.strip():
        raise click.UsageError(EMPTY)
    return text


def with_piped_text(prompt: str) -> str:
    """``prompt``, then a blank line and what is piped in, when stdin holds some text."""
    text = _read(
        "hermes: waiting for stdin to end (its text follows the prompt); "
        "run with < /dev/null to send the prompt alone"
    )
    return f"{prompt}\n\n{text}" if text.strip() else prompt


def _read(waiting: str) -> str:
    """All of stdin as text, its end's whitespace dropped; ``waiting`` said once on stderr
    after :data:`SILENCE` seconds without data."""
    try:
        fd: int | None = sys.stdin.fileno()
    except (OSError, ValueError):
        fd = None
    chunks: list[bytes] = []
    size = 0
    said = False
    while True:
        # Windows' select takes sockets only: there a silent pipe is waited on without a word.
        watch = not said and sys.platform != "win32"
        if fd is not None and watch and not select.select([fd], [], [], SILENCE)[0]:
            click.echo(waiting, err=True)
            said = True
        chunk = os.read(fd, _CHUNK) if fd is not None else sys.stdin.buffer.read(_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_LINE_BYTES:
            raise click.UsageError(
                f"stdin holds more than {MAX_LINE_BYTES // (1024 * 1024)} MiB, the most hermes "
                "reads as a prompt: send a part of it (head -c), or name the file in PROMPT "
                "for the model to read"
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8").rstrip()
    except UnicodeDecodeError as exc:
        raise click.UsageError(
            f"stdin is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
            "convert it first, e.g. iconv -f latin1 -t utf-8"
        ) from None

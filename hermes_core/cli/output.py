"""How ``hermes`` commands print: plain columns, warnings on stderr, the ``-v`` flag."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import click


@contextmanager
def warnings_to_stderr() -> Iterator[None]:
    """Show configuration warnings as one plain ``hermes: warning:`` line each, each distinct
    message once (an edit validates the file more than once)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for message in dict.fromkeys(str(item.message) for item in caught):
        click.echo(f"hermes: warning: {message}", err=True)


def columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns two spaces apart (plain text: rich costs ~100 ms here)."""
    if not rows:
        return ""
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def verbose() -> bool:
    """Whether ``hermes -v`` was given."""
    context = click.get_current_context(silent=True)
    root = context.find_root() if context is not None else None
    return bool(root is not None and isinstance(root.obj, dict) and root.obj.get("verbose"))

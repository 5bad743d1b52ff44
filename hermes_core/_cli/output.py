"""How ``hermes`` commands print: plain columns, warnings on stderr, what plugin code prints on
stderr, text from outside (escaped on a terminal, exact elsewhere), "did you mean" (from
:mod:`hermes_core._shown`), the ``-v`` flag."""

from __future__ import annotations

import logging
import shutil
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from typing import Any, TypeVar

import click

from hermes_core._encodable import encodable
from hermes_core._shown import as_shown as as_shown  # where the CLI took it from
from hermes_core._shown import did_you_mean as did_you_mean  # where the CLI took it from
from hermes_core._shown import left_context, printable, printable_lines
from hermes_core._terminal_cells import cells, cut

_Row = TypeVar("_Row")

_told: set[str] = set()
"""The warnings this command has shown: each distinct message once, however many times the
file is validated (an edit validates it before and after writing it)."""


@contextmanager
def warnings_to_stderr() -> Iterator[None]:
    """Show configuration warnings as one plain ``hermes: warning:`` line each, each distinct
    message once (an edit validates the file more than once), through :func:`as_shown`: one
    may name a file or quote a key or value of one a cloned project holds."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for item in caught:
        _tell(str(item.message))


@contextmanager
def plugin_prints_to_stderr() -> Iterator[None]:
    """The CLI's one rule for what plugin code prints: every command runs the host it builds
    (plugins imported, their registration hooks, tools and other hooks run, the host closed)
    inside this, so ``print()`` there goes to standard error and standard output stays the
    command's own (a ``--json`` listing, a result, an answer: printed after the host is
    closed, or through a stream taken before). A plugin's own command (``hermes_cli_commands``)
    runs after its plugin has loaded, outside it: its output is the user's, on stdout."""
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()


def config_warnings_as_lines() -> None:
    """From now on in this command, a :class:`ConfigWarning` raised outside
    :func:`warnings_to_stderr` (an edit's validation) is shown as that one line too, not in
    Python's form (the file and line of hermes' code that raised it, the class, the source);
    other warnings keep Python's form, which says where they come from."""
    _told.clear()
    shown_by_python = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        # Not imported for this: the configuration package (ruamel.yaml) costs a command that
        # reads no configuration ~45 ms; a ConfigWarning raised has its module loaded.
        models = sys.modules.get("hermes_core._config.models")
        if models is not None and issubclass(category, models.ConfigWarning):
            _tell(str(message))
        else:
            shown_by_python(message, category, *args, **kwargs)

    warnings.showwarning = show


def _tell(message: str) -> None:
    if message not in _told:
        _told.add(message)
        echo_shown(f"hermes: warning: {message}", err=True)


def refuse_closed_stdout(command: str) -> None:
    """Exit 1, saying why on stderr, when the process started without a standard output
    (``>&-``): the model's answer would be lost after a paid request (``hermes run`` and
    ``hermes chat``, before they ask one)."""
    if getattr(sys.stdout, "closed_at_start", False) is True:
        click.echo(
            f"hermes: error: {command}: standard output is closed (>&-): the answer would be "
            "lost, so no model is asked; give it one (> FILE, or > /dev/null to keep the "
            "transcript only)",
            err=True,
        )
        sys.exit(1)


def echo_shown(text: str, *, err: bool = False) -> None:
    """Print text from outside on stdout (stderr with ``err``) as :func:`as_shown` has it. The
    one way to print such text with click: ``click.echo`` strips CSI sequences (colours) off a
    stream that is not a terminal, and a pipe or a file is to get the text exact; on a
    terminal :func:`as_shown` has escaped every control character already."""
    stream = sys.stderr if err else sys.stdout
    # A lone surrogate (half a character a model wrote) cannot be written as UTF-8.
    click.echo(as_shown(stream, encodable(text)), err=err, color=True)


def exit_if_broken(rows: Iterable[_Row], broken: Callable[[_Row], bool]) -> None:
    """docs/cli.md's rule for list commands, called once every row is shown (as a table or
    ``--json``): exit 1 when one of ``rows`` is ``broken`` (a plugin in error, a server
    unavailable, a damaged cron job), so a script or CI step can check a setup with the list."""
    if any(broken(row) for row in rows):
        raise SystemExit(1)


class ShownStream:
    """A text that arrives in pieces (a model's answer, delta by delta) written to ``stream``
    as :func:`as_shown` writes it whole: a joiner cut from its neighbours by a piece's edge
    (tokens often end on one) stays in its emoji sequence or word, and a ``\\r\\n`` cut in
    two stays a line break. A piece's last joiner or carriage return is held back until the
    next piece says what follows it, or :meth:`end` (the text is over or interrupted)."""

    def __init__(self, stream: Any) -> None:
        isatty = getattr(stream, "isatty", None)
        self._terminal = isatty is not None and bool(isatty())
        self._before = ""  # the end of what was shown, the left neighbour of the next piece
        self._held = ""

    def add(self, piece: str) -> str:
        """What to write for ``piece`` now."""
        if not self._terminal:
            return piece
        text = self._held + piece
        if text.isprintable():  # the common case, plain text: nothing to hold or escape
            self._held, shown = "", text
        else:
            keep = len(text) - 1 if text[-1:] in ("\r", "\u200c", "\u200d") else len(text)
            text, self._held = text[:keep], text[keep:]
            shown = printable_lines(text.replace("\r\n", "\n"), tabs=True, before=self._before)
        self._before = left_context(text, self._before)
        return shown

    @property
    def terminal(self) -> bool:
        """Whether the stream is a terminal (where text is escaped, and may be dimmed)."""
        return self._terminal

    def end(self) -> str:
        """What is held back, shown as the end of the text; the next piece starts a new one."""
        held, self._held = self._held, ""
        shown = printable(held, self._before) if held else ""
        self._before = ""
        return shown


def columns(
    rows: Sequence[Sequence[str]],
    *,
    free: Sequence[int] = (-1,),
    drop: Sequence[int] = (),
    width: int | None = None,
) -> str:
    """Rows as left-aligned columns two spaces apart (plain text: rich costs ~100 ms here),
    aligned by the cells their text takes (a wide character or an emoji two). Cells come from
    outside (a server's tool names, a model's job names): control characters are shown
    escaped, never sent to the terminal.

    The one rule for every table: wider than ``width`` (default: the terminal's width when
    stdout is a terminal, no limit when it is piped or redirected), the widest of the ``free``
    columns (free text: a description, a note, a command line; the last by default) is cut
    with an ellipsis until each row fits one line, none to less than a few cells; names and
    ids are never cut (a table that still does not fit wraps). Before that, while the free
    columns would be cut to fewer than :data:`_READABLE` cells each, the ``drop`` columns (the
    least useful, first in the order given) are left out."""
    if not rows:
        return ""
    measured = [[(shown, cells(shown)) for shown in map(printable, row)] for row in rows]
    count = len(measured[0])
    widths = [max(row[index][1] for row in measured) for index in range(count)]
    limit = _terminal_width() if width is None else width
    if limit is not None:
        frees = {index % count for index in free}
        kept = _kept(widths, frees, [index % count for index in drop], limit)
        measured = [[row[index] for index in kept] for row in measured]
        widths = [widths[index] for index in kept]
        _fit(widths, [at for at, index in enumerate(kept) if index in frees], limit)
    return "\n".join(
        "  ".join(_within(cell, size) for cell, size in zip(row, widths, strict=True)).rstrip()
        for row in measured
    )


_NARROWEST = 6
"""The fewest cells a free column is cut to: five of its characters and the ellipsis."""
_READABLE = 16
"""The cells of a free column's text that still read as words, before columns are dropped."""


def _kept(widths: Sequence[int], free: set[int], drop: Sequence[int], limit: int) -> list[int]:
    """The columns left after ``drop``'s, in order, while the free ones get under
    :data:`_READABLE` cells (those narrower anyway whole)."""
    kept = list(range(len(widths)))
    for dropped in drop:
        needed = sum(min(widths[at], _READABLE) if at in free else widths[at] for at in kept)
        if needed + 2 * (len(kept) - 1) <= limit:
            break
        kept.remove(dropped)
    return kept


def _fit(widths: list[int], free: Sequence[int], limit: int) -> None:
    """Narrow the widest of the ``free`` columns, step by step, until the row fits ``limit``."""
    excess = sum(widths) + 2 * (len(widths) - 1) - limit
    while excess > 0:
        shrinkable = [index for index in free if widths[index] > _NARROWEST]
        if not shrinkable:
            return
        widest = max(shrinkable, key=lambda index: widths[index])
        floor = max([_NARROWEST, *(widths[index] for index in shrinkable if index != widest)])
        step = min(excess, max(widths[widest] - floor, 1))
        widths[widest] -= step
        excess -= step


def _within(cell: tuple[str, int], size: int) -> str:
    """A cell (its text and its width) cut to ``size`` cells if wider, padded to them."""
    text, width = cell
    if width > size:
        text = cut(text, size)
        width = cells(text)
    return text + " " * (size - width)


def _terminal_width() -> int | None:
    """The terminal's width when stdout is one: a pipe or a file gets whole rows."""
    isatty = getattr(sys.stdout, "isatty", None)
    if isatty is None or not isatty():
        return None
    return shutil.get_terminal_size().columns


def verbose() -> bool:
    """Whether ``hermes -v`` was given."""
    context = click.get_current_context(silent=True)
    root = context.find_root() if context is not None else None
    return bool(root is not None and isinstance(root.obj, dict) and root.obj.get("verbose"))


class _Formatter(logging.Formatter):
    """``hermes: warning: ...``: the level in lower case, like the command's own messages."""

    def format(self, record: logging.LogRecord) -> str:
        record.level = record.levelname.lower()
        return super().format(record)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to whatever ``sys.stderr`` is when a record comes, so a warning
    logged while the MCP connect progress is drawn goes above its lines (rich redirects
    ``sys.stderr`` while it draws). A record may quote a server's error: :func:`as_shown`;
    a library may name the URL it requests, password and ``?token=`` included:
    :func:`~hermes_core._redaction.urls_shown_in`."""

    def format(self, record: logging.LogRecord) -> str:
        from hermes_core._redaction import urls_shown_in

        return as_shown(self.stream, urls_shown_in(super().format(record)))

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def configure_logging(prefix: str = "hermes", *, with_names: bool = False) -> None:
    """Log records on stderr as ``<prefix>: warning: ...`` (debug too with ``-v``)."""
    handler = _StderrHandler()
    names = "%(name)s: " if with_names else ""
    handler.setFormatter(_Formatter(f"{prefix}: %(level)s: {names}%(message)s"))
    level = logging.DEBUG if verbose() else logging.WARNING
    logging.basicConfig(level=level, handlers=[handler], force=True)

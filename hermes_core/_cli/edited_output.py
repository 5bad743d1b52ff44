"""``hermes chat``'s stdout and stderr at a terminal while its line editor is on: what a running
turn prints (the streamed answer, tool lines, a subagent's events, a prompt) must not land in
the middle of the line the person is typing, nor leave it garbled.

Each write first erases the edited line (:meth:`~hermes_core._cli.line_editor.LineEditor.hide`),
then prints, then tells the editor where the line starts now (after a prompt, after the part of
a streamed answer's line printed so far), and draws the edited line again there: the next
write erases it from there, so what is printed stays whole and the edited line follows it."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core._cli.line_editor import LineEditor


class EditedOutput(io.TextIOBase):
    """``stream`` (a terminal's), keeping the line :attr:`editor` edits whole around what is
    written; with no editor set, ``stream`` itself."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream
        self.editor: LineEditor | None = None

    def write(self, text: str) -> int:
        """Print ``text`` at once, the edited line erased before and drawn again after."""
        editor = self.editor
        if editor is None or not text:
            return self.stream.write(text)
        editor.hide()
        written = self.stream.write(text)
        self.stream.flush()
        editor.printed(text)
        editor.redraw()
        return written

    def flush(self) -> None:
        """Flush the terminal's stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """The stream's descriptor."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The stream's encoding."""
        return str(getattr(self.stream, "encoding", "utf-8"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def edited(outputs: list[EditedOutput]) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` replaced in the block by those of ``outputs`` that
    wrap them."""
    saved = sys.stdout, sys.stderr
    for output in outputs:
        if output.stream is sys.stdout:
            sys.stdout = output
        elif output.stream is sys.stderr:
            sys.stderr = output
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

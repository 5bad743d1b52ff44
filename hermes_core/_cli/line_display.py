"""What the chat's line editor drew of its line on the terminal, and how it draws it again.

The line is drawn from :attr:`LineDisplay.origin` (the column the prompt before it left) and
may wrap: the cursor is moved by rows and columns, counted in the terminal's cells (a wide
character takes two, drawn at the next row's start when one cell is left). A row filled to
its last cell wraps as the terminal wraps it, so a terminal that rewraps its rows when it is
resized (most do: VTE, kitty, iTerm2, Windows Terminal, tmux) keeps the line one line, and the
rows and columns are counted at the width it has now."""

from __future__ import annotations

from collections.abc import Callable

from hermes_core._terminal_cells import cells, characters


class LineDisplay:
    """Where the edited line starts on the terminal, where its cursor was left, and the
    escape sequences that draw it again; written out at :meth:`flush`."""

    def __init__(self, write: Callable[[str], None], columns: Callable[[], int]) -> None:
        self._write = write
        self._columns = columns
        self.origin = 0
        """The column the line starts at: the width of the prompt before it."""
        self.before = ""
        """What was printed on the row before the line (the prompt)."""
        self.drawn = 0
        """Cells from :attr:`origin` to where the cursor was left."""
        self.hidden = False
        """Erased by :meth:`erase`; drawn again by the editor's next key or redraw."""
        self._covered: str | None = None  # the prompt :meth:`cover_prompt` drew over
        self._out: list[str] = []

    def add(self, text: str) -> None:
        """Write ``text`` as it is (a bell, a listing) at the next :meth:`flush`."""
        self._out.append(text)

    def flush(self) -> None:
        """Write out what was drawn."""
        if self._out:
            self._write("".join(self._out))
            self._out.clear()

    def close(self) -> None:
        """Draw nothing more: the terminal is given back (output may still be printed)."""
        self._write = _nothing

    def draw(self, shown: str, cursor: int) -> None:
        """Draw ``shown`` from the line's start, the cursor left before its ``cursor``-th
        character."""
        width = max(self._columns(), 1)
        self.home()
        self._out.append("\x1b[J" + shown)
        self.drawn = self.span(shown)
        self._wrapped()
        target = self.span(shown[:cursor])
        rows = (self.origin + self.drawn) // width - (self.origin + target) // width
        self._out.append("\r" + (f"\x1b[{rows}A" if rows > 0 else ""))
        if (self.origin + target) % width:
            self._out.append(f"\x1b[{(self.origin + target) % width}C")
        self.drawn = target

    def relaid(self, shown: str, cursor: int) -> None:
        """The terminal's width changed: it rewrapped the rows of ``shown`` (the line as
        drawn), so the cursor is its ``cursor``-th character's cells from the line's start
        at the new width."""
        self.drawn = self.span(shown[:cursor])

    def extend(self, text: str) -> None:
        """``text`` typed at the line's end, where the cursor is: drawn there alone."""
        self._out.append(text)
        self.drawn = self.span(text, self.drawn)
        self._wrapped()

    def erase(self) -> None:
        """Erase the drawn line, leaving the cursor where it started."""
        self.home()
        self._out.append("\x1b[J")
        self.drawn, self.hidden = 0, True
        self.flush()

    def end_line(self) -> None:
        """The line ended (the cursor after it): a new row, the next line starting at its
        start."""
        self._out.append("\r\n")
        self.drawn, self.origin, self.before, self._covered = 0, 0, "", None

    def cover_prompt(self) -> None:
        """Draw the line from its row's start, over what was printed before it (the prompt),
        as readline draws its search; :meth:`uncover_prompt` draws that again."""
        self.home()
        self._covered, self.origin, self.drawn = self.before, 0, 0

    def uncover_prompt(self) -> None:
        """Draw what :meth:`cover_prompt` drew over again; the line starts after it."""
        if self._covered is None:
            return
        self.home()
        self._out.append("\x1b[J" + self._covered)
        self.origin, self.drawn, self._covered = self._advance(0, self._covered), 0, None

    def printed(self, plain: str) -> None:
        """``plain`` (no escape sequences) was printed where the line starts: it starts after
        it now."""
        if self._covered is not None:  # erased with the line that covered it: gone
            self.before, self._covered = "", None
        last = max(plain.rfind("\n"), plain.rfind("\r"))
        self.origin = self._advance(0 if last >= 0 else self.origin, plain[last + 1 :])
        self.before = plain[last + 1 :] if last >= 0 else self.before + plain

    def home(self) -> None:
        """Move the cursor from where it was left to where the line starts."""
        width = max(self._columns(), 1)
        if self.origin and not self.origin % width and not self.drawn:
            # What was printed before the line filled its row: the terminal waits to wrap,
            # its cursor on that row still. A space wraps it (the line is drawn over it).
            self._out.append(" ")
        rows = (self.origin + self.drawn) // width - self.origin // width
        self._out.append("\r" + (f"\x1b[{rows}A" if rows > 0 else ""))
        if self.origin % width:
            self._out.append(f"\x1b[{self.origin % width}C")

    def span(self, text: str, start: int = 0) -> int:
        """Cells from :attr:`origin` to the end of ``text`` drawn ``start`` cells after it: a
        wide character that does not fit a row's last cell is drawn at the next row's start,
        that cell left empty."""
        return self._advance(self.origin + start, text) - self.origin

    def _advance(self, at: int, text: str) -> int:
        """Where ``text`` printed at cell ``at`` of a row (wrapped rows counted on) ends: a
        tab goes on to the next tab stop, every 8 columns, never past the row's last."""
        width = max(self._columns(), 1)
        for character in characters(text):
            column = at % width
            if character == "\t":
                at += min(8 - column % 8, width - 1 - column)
                continue
            size = cells(character)
            if size == 2 and column == width - 1:
                at += 1
            at += size
        return at

    def _wrapped(self) -> None:
        """At the last column a terminal waits to wrap: a space it wraps, then a carriage
        return, put the cursor where the row and column counts say it is (a new line would
        break the line in two for a terminal that rewraps its rows on a resize)."""
        if self.drawn and (self.origin + self.drawn) % max(self._columns(), 1) == 0:
            self._out.append(" \r")


def _nothing(text: str) -> None:
    """Where a closed display draws."""

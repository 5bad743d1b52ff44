"""The line editor of ``hermes chat`` at a terminal: the keys a terminal sends, turned into
edits of one line, drawn on the terminal, and the lines handed back on Enter.

It holds no terminal itself: :class:`~hermes_core._cli.terminal_lines.TerminalLines` reads
the bytes (the terminal out of its line mode, signals still on: Ctrl-C stays SIGINT), feeds
them to :meth:`LineEditor.feed` and gets back what was typed: a line (Enter), a paste (a
bracketed paste holding a newline: several lines at once, one message, put in the line at the
cursor as a paste of one line is), or the end of input
(Ctrl-D on an empty line). Keys, as GNU readline's Emacs mode binds them: Left/Right
(Ctrl-B/Ctrl-F), Home/End (Ctrl-A/Ctrl-E), Alt-B/Alt-F and Ctrl-Left/Ctrl-Right by word,
Backspace, Delete (Ctrl-D on a line with text), Ctrl-K/Ctrl-U kill to the end/start, Ctrl-W
and Alt-Backspace the word before, Alt-D the word after, Ctrl-Y yanks what the last kills took,
Ctrl-L clears the screen, Up/Down (Ctrl-P/Ctrl-N) walk the
history, Ctrl-R searches it backwards, drawn over the prompt as readline draws it (Ctrl-R
again: an older match; Enter sends the match, Escape or Ctrl-G gives up, any other key edits
it), Tab completes a command (:attr:`LineEditor.commands`)
on a line that is a ``/`` word starting one, as readline does: the matches' common prefix, a
second Tab lists them; on any other line (a path, text) a tab is a tab in the message (drawn
as a space), as before the editor. What is drawn of the line, and where, is a
:class:`~hermes_core._cli.line_display.LineDisplay`'s."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from hermes_core._cli.key_sequences import PASTE_END, PASTE_START, sequence_end
from hermes_core._cli.line_display import LineDisplay
from hermes_core._cli.line_motions import (
    char_after,
    char_before,
    spaced_word_before,
    word_after,
    word_before,
)
from hermes_core._terminal_cells import joins

Typed = tuple[Literal["line", "paste", "end"], str]
"""What a key completed: ``("line", text)`` on Enter, ``("paste", text)`` for a bracketed
paste of several lines, ``("end", "")`` for Ctrl-D on an empty line."""

SEARCH = "({}reverse-i-search)`{}': "
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[^\[]|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
UNPRINTABLE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
"""What never goes on the line: control characters, C1's too (a tab aside). A one-line paste
loses them; a history entry holding one is not recalled (:mod:`.chat_history`)."""


class LineEditor:
    """One line being edited, its history, and what was drawn of it on the terminal."""

    def __init__(
        self,
        write: Callable[[str], None],
        columns: Callable[[], int],
        history: list[str] | None = None,
    ) -> None:
        self._display = LineDisplay(write, columns)
        self.history: list[str] = [] if history is None else history
        """The earlier lines, oldest first (Up walks back from the newest)."""
        self.commands: Callable[[], Sequence[str]] = tuple
        """The commands Tab completes a line starting with ``/`` to, now (none: Tab is a tab)."""
        self._text: list[str] = []
        self._cursor = 0
        self._index: int | None = None  # the history entry shown; None: the line typed anew
        self._draft = ""
        self._pending = ""  # an escape sequence not yet complete
        self._paste: str | None = None  # inside a bracketed paste: what came of it so far
        self._query: str | None = None  # Ctrl-R: what is searched for
        self._found: int | None = None  # Ctrl-R: the history entry that matched
        self._before_search = ""
        self._tabbed = False  # the last key was a Tab with several matches: the next lists
        self._killed = ""  # what the last kills took, for Ctrl-Y
        self._kills = self._chained = False  # the last key was a kill; the one before it was

    @property
    def origin(self) -> int:
        """The column the line starts at: the width of the prompt before it."""
        return self._display.origin

    @origin.setter
    def origin(self, column: int) -> None:
        self._display.origin = column

    @property
    def text(self) -> str:
        """The line as edited so far."""
        return "".join(self._text)

    def feed(self, keys: str) -> list[Typed]:
        """Take the characters a terminal sent; what they completed, in order. The line is
        drawn once, after all of them."""
        typed: list[Typed] = []
        data, self._pending = self._pending + keys, ""
        if self._display.hidden:
            self.redraw()
        at = 0
        while at < len(data):
            if self._paste is not None:
                at = self._pasting(data, at, typed)
                continue
            char = data[at]
            if char != "\x1b":
                at += 1
                self._key(char, typed)
                continue
            end = sequence_end(data, at)
            if end is None and self._query is not None and data[at:] == "\x1b":
                # A key's sequence comes whole in one read: a lone ESC is Escape (an arrow
                # split by a slow link gives up the search, its "[A" typed: documented).
                self._cancel_search()
                break
            if end is None:
                self._pending = data[at:]
                break
            sequence, at = data[at:end], end
            if sequence == PASTE_START:
                self._paste = ""
            else:
                self._escape(sequence)
        self._display.flush()
        return typed

    def take(self) -> str:
        """The line as it stands, ended on the terminal as Enter ends it, the editor emptied
        (a paste's last line without its newline, taken with the paste)."""
        self._leave_search()
        text = self.text
        self._finish()
        self._display.flush()
        return text

    def discard(self) -> bool:
        """Throw the line away, as Ctrl-C at a shell's prompt does (Ctrl-Y puts it back, as
        after Ctrl-U), or end a Ctrl-R search, the line as it was; ``False`` when there was
        nothing to throw away."""
        if self._query is not None:
            self._cancel_search()
        elif self._text:
            self._chained = False
            self._kill(0, len(self._text))
        else:
            return False
        self._display.flush()
        return True

    def redraw(self) -> None:
        """Draw the line :meth:`hide` erased again, where the cursor is."""
        if not self._display.hidden:
            return
        self._display.drawn, self._display.hidden = 0, False
        self._refresh()
        self._display.flush()

    def resized(self) -> None:
        """The terminal's width changed (SIGWINCH): the line drawn again from its first row,
        where the terminal's rewrapping put it, at the new width."""
        if self._display.hidden or (not self._text and self._query is None):
            return
        self._display.relaid(*self._shown())
        self._refresh()
        self._display.flush()

    def close(self) -> None:
        """Draw nothing more: the terminal is given back (output may still be printed)."""
        self._display.close()

    def hide(self) -> bool:
        """Erase the drawn line, leaving the cursor where it started; whether there was one to
        erase (then :meth:`redraw` puts it back)."""
        if self._display.hidden or (not self._text and self._query is None):
            return False
        self._display.erase()
        return True

    def printed(self, text: str) -> None:
        """``text`` was printed where the line starts (it was hidden, or empty): the line
        starts after it now."""
        self._display.printed(_CONTROL.sub("", text))

    def suspend(self) -> None:
        """The terminal goes to the shell a while (Ctrl-Z): the line erased, the cursor on a
        new row."""
        self.hide()
        self._display.add("\r\n")
        self._display.flush()

    def resume(self) -> None:
        """The terminal is back (``fg``): what was printed before the line on its row (the
        prompt) and the line drawn again, on the row the cursor is on."""
        self._display.add("\r" + self._display.before)
        self._display.drawn, self._display.hidden = 0, False
        self._refresh()
        self._display.flush()

    def _pasting(self, data: str, at: int, typed: list[Typed]) -> int:
        assert self._paste is not None
        self._paste += data[at:]
        end = self._paste.find(PASTE_END)
        if end < 0:
            return len(data)
        rest = self._paste[end + len(PASTE_END) :]
        pasted = self._paste[:end].replace("\r\n", "\n").replace("\r", "\n")
        self._paste = None
        if "\n" in pasted.strip("\n"):
            self._leave_search()
            cursor = self._cursor
            typed.append(("paste", self.text[:cursor] + pasted + self.text[cursor:]))
            self._finish()
        else:
            self._insert(UNPRINTABLE.sub("", pasted))
        return len(data) - len(rest)  # what follows the paste is keys again

    def _key(self, char: str, typed: list[Typed]) -> None:
        tabbed, self._tabbed = self._tabbed, False
        self._chained, self._kills = self._kills, False
        if self._query is not None and self._searching(char, typed):
            return
        if char == "\t":
            self._tab(tabbed)
        elif char in "\r\n":
            text = self.text
            self._finish()
            typed.append(("line", text))
        elif char == "\x04":
            if self._text:
                self._delete(self._cursor, char_after(self._text, self._cursor))
            else:
                typed.append(("end", ""))
        elif char == "\x12":
            self._search()
        elif char >= " " and not "\x7f" <= char <= "\x9f":
            self._insert(char)
        else:
            self._control(char)

    def _control(self, char: str) -> None:
        moves = {"\x01": 0, "\x05": len(self._text), "\x02": char_before(self._text, self._cursor)}
        moves["\x06"] = char_after(self._text, self._cursor)
        if char in moves:
            self._move(moves[char])
        elif char in "\x7f\x08":
            self._delete(char_before(self._text, self._cursor), self._cursor)
        elif char == "\x0b":
            self._kill(self._cursor, len(self._text))
        elif char == "\x15":
            self._kill(0, self._cursor)
        elif char == "\x17":
            self._kill(spaced_word_before(self._text, self._cursor), self._cursor)
        elif char == "\x19":
            self._insert(self._killed)
        elif char == "\x0c":  # readline's clear-screen: the prompt and the line at the top
            self._display.add("\x1b[H\x1b[2J" + self._display.before)
            self._display.drawn = 0
            self._refresh()
        elif char == "\x10":
            self._recall(-1)
        elif char == "\x0e":
            self._recall(1)

    def _escape(self, sequence: str) -> None:
        self._leave_search()
        self._tabbed = False
        self._chained, self._kills = self._kills, False
        if sequence[1:2] == "\x1b":  # Alt and an arrow: ESC and the arrow's sequence
            sequence = {"D": "\x1bb", "C": "\x1bf"}.get(sequence[3:], "\x1b")
        key = sequence[2:] if sequence[1:2] in ("[", "O") else sequence[1:]
        plain = {"D": "\x02", "C": "\x06", "H": "\x01", "F": "\x05", "A": "\x10", "B": "\x0e"}
        plain.update({"1~": "\x01", "7~": "\x01", "4~": "\x05", "8~": "\x05"})
        if sequence[1:2] in ("[", "O") and key in plain:
            self._control(plain[key])
        elif key == "3~":
            self._delete(self._cursor, char_after(self._text, self._cursor))
        elif key in ("b", "1;5D", "1;3D"):
            self._move(word_before(self._text, self._cursor))
        elif key in ("f", "1;5C", "1;3C"):
            self._move(word_after(self._text, self._cursor))
        elif key == "d":
            self._kill(self._cursor, word_after(self._text, self._cursor))
        elif key == "\x7f":
            self._kill(word_before(self._text, self._cursor), self._cursor)

    def _tab(self, again: bool) -> None:
        """Tab: a line that is a ``/`` word starting some command, the cursor at its end,
        completed (their common start; a bell when it goes no further, the matches listed
        under the line at a second Tab); on any other line a tab, as the terminal's line mode
        put one before the editor."""
        word = self.text
        matches = [command for command in self.commands() if command.startswith(word)]
        if word[:1] != "/" or self._cursor < len(word) or word.split() != [word] or not matches:
            self._insert("\t")
            return
        common = min(matches, default="")
        while not all(match.startswith(common) for match in matches):
            common = common[:-1]
        if len(matches) > 1 and again:
            self._display.add("\r\n" + "  ".join(matches) + "\r\n" + self._display.before)
            self._display.drawn = 0
            self._refresh()
        elif len(common) > len(word):
            self._insert(common[len(word) :])
        else:
            self._display.add("\x07")
        self._tabbed = len(matches) > 1

    def _insert(self, text: str) -> None:
        at_end = self._cursor == len(self._text)
        self._text[self._cursor : self._cursor] = text
        self._cursor += len(text)
        # A skin tone or a joined emoji typed after its emoji changes the cells it takes.
        joined = joins(self._text, self._cursor - len(text))
        if at_end and "\t" not in text and not joined:
            self._display.extend(text)  # typing at the end: no need to draw the line again
        else:
            self._refresh()

    def _kill(self, start: int, end: int) -> None:
        """Delete from ``start`` to ``end``, what it took kept for Ctrl-Y: added to what the
        kill just before took, as readline does (before it, killed backwards)."""
        taken = "".join(self._text[start:end])
        if not taken:
            return
        if not self._chained:
            self._killed = taken
        elif start < self._cursor:
            self._killed = taken + self._killed
        else:
            self._killed += taken
        self._kills = True
        self._delete(start, end)

    def _delete(self, start: int, end: int) -> None:
        start, end = max(start, 0), min(end, len(self._text))
        if start >= end:
            return
        del self._text[start:end]
        self._cursor = start
        self._refresh()

    def _move(self, at: int) -> None:
        self._cursor = min(max(at, 0), len(self._text))
        self._refresh()

    def _recall(self, step: int) -> None:
        now = len(self.history) if self._index is None else self._index
        index = now + step
        if not 0 <= index <= len(self.history):
            return
        if self._index is None:
            self._draft = self.text
        self._index = None if index == len(self.history) else index
        self._text = list(self._draft if self._index is None else self.history[index])
        self._cursor = len(self._text)
        self._refresh()

    def _search(self) -> None:
        if self._query is None:
            self._query, self._found, self._before_search = "", None, self.text
            self._display.cover_prompt()
        elif self._found is not None:
            self._found = self._find(self._query, self._found - 1)
        self._refresh()

    def _searching(self, char: str, typed: list[Typed]) -> bool:
        """Ctrl-R's keys; ``False`` for a key that ends the search and then edits."""
        assert self._query is not None
        if char == "\x12":
            self._search()
        elif char == "\x07":
            self._cancel_search()
        elif char in "\x7f\x08":
            self._query = self._query[:-1]
            self._found = self._find(self._query, len(self.history) - 1)
            self._refresh()
        elif char >= " " and not "\x7f" <= char <= "\x9f":
            self._query += char
            start = len(self.history) - 1 if self._found is None else self._found
            self._found = self._find(self._query, start)
            self._refresh()
        else:
            self._leave_search()
            return False
        return True

    def _find(self, query: str, start: int) -> int | None:
        for index in range(min(start, len(self.history) - 1), -1, -1):
            if query in self.history[index]:
                return index
        return None

    def _match_text(self) -> str:
        return self._before_search if self._found is None else self.history[self._found]

    def _leave_search(self) -> None:
        if self._query is None:
            return
        text = self._match_text()
        self._query = None
        self._display.uncover_prompt()
        if self._found is not None:
            self._index = self._found
        self._text, self._cursor = list(text), len(text)
        self._refresh()

    def _cancel_search(self) -> None:
        self._found = None
        self._leave_search()

    def _finish(self) -> None:
        """End the line on the terminal (cursor after it, a new line) and start afresh."""
        self._query = None
        self._cursor = len(self._text)
        self._refresh()
        self._display.end_line()
        self._text, self._cursor = [], 0
        self._index, self._draft = None, ""

    def _shown(self) -> tuple[str, int]:
        """What is drawn of the line, and where in it the cursor goes (in characters)."""
        if self._query is None:
            return self.text.replace("\t", " "), self._cursor
        search = SEARCH.format(
            "failed " if self._query and self._found is None else "", self._query
        )
        return search + self._match_text(), len(search)

    def _refresh(self) -> None:
        shown, cursor = self._shown()
        self._display.draw(shown, cursor)

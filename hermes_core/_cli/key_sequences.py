"""The escape sequences a terminal sends for keys, as the chat's line editor splits them:
where one ends (:func:`sequence_end`), and the marks around a bracketed paste."""

from __future__ import annotations

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


def sequence_end(data: str, at: int) -> int | None:
    """Where the escape sequence starting at ``at`` ends (``None``: not all of it came yet):
    ESC [ or ESC O, then parameters, then a final character; ESC and such a sequence (Alt and
    a key that sends one: iTerm2's Option as Esc+); else ESC and one character (Alt and a
    key). A lone ESC at the end of what came is taken as the Escape key only once more
    arrives after it."""
    if at + 1 >= len(data):
        return None
    if data[at + 1] == "\x1b":
        return sequence_end(data, at + 1)
    if data[at + 1] not in "[O":
        return at + 2
    end = at + 3 if data[at + 1 : at + 3] == "[[" else at + 2  # the Linux console's F1-F5
    while end < len(data):
        if "@" <= data[end] <= "~" or data[end] == "$":  # ECMA-48's finals; rxvt's Shift-$
            return end + 1
        end += 1
    return None

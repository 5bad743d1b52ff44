"""How many of a terminal's columns (cells) a text takes, for the chat's line editor to move
its cursor by: East Asian wide characters take two, combining marks and format characters
none."""

from __future__ import annotations

import unicodedata

_NO_COLUMN = ("Mn", "Me", "Cf")  # non-spacing and enclosing marks, format characters


def cells(text: str) -> int:
    """How many terminal columns ``text`` takes (East Asian wide characters two; marks and
    format characters none: combining accents, variation selectors, joiners)."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in _NO_COLUMN:
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width

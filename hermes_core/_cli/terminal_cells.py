"""How many of a terminal's columns (cells) a text takes, for the chat's line editor to move
its cursor by and for tables to align and cut their columns: East Asian wide characters take
two, combining marks and format characters none, and an emoji sequence (joined by zero-width
joiners, a flag's two regional indicators, a skin tone, an emoji variation selector) is one
character of two cells, as terminals draw it. A small rule for the extended grapheme clusters
of Unicode's UAX #29 that a line typed or listed has, not the whole algorithm (Hangul jamo and
spacing marks are characters of their own here)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence

_NO_COLUMN = ("Mn", "Me", "Cf")  # non-spacing and enclosing marks, format characters
_JOINER = "\u200d"
_EMOJI_PRESENTATION = "\ufe0f"
ELLIPSIS = "…"


def _no_column(char: str) -> bool:
    return bool(unicodedata.combining(char)) or unicodedata.category(char) in _NO_COLUMN


def _regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def _skin_tone(char: str) -> bool:
    return "\U0001f3fb" <= char <= "\U0001f3ff"


def _pictograph(char: str) -> bool:
    return unicodedata.category(char) == "So"


def joins(text: Sequence[str], at: int) -> bool:
    """Whether ``text[at]`` belongs to the character before it: a mark, a joiner or a
    variation selector, a skin tone, the pictograph after a joiner that follows one, a flag's
    second regional indicator."""
    if not 0 < at < len(text):
        return False
    char, before = text[at], text[at - 1]
    if _no_column(char) or _skin_tone(char):
        return True
    if before == _JOINER:
        base = at - 1
        while base > 0 and joins(text, base):
            base -= 1
        return _pictograph(char) and _pictograph(text[base])
    if _regional(char):
        run = 0
        while at - run - 1 >= 0 and _regional(text[at - run - 1]):
            run += 1
        return run % 2 == 1
    return False


def characters(text: str) -> Iterator[str]:
    """``text`` as the characters a person sees, each with its marks and joined parts."""
    start = 0
    for at in range(1, len(text) + 1):
        if at == len(text) or not joins(text, at):
            yield text[start:at]
            start = at


def _character_cells(character: str) -> int:
    base = character[0]
    if _no_column(base):
        return 0
    if _regional(base):
        return 2 if len(character) > 1 and _regional(character[1]) else 1
    if unicodedata.east_asian_width(base) in "WF":
        return 2
    return 2 if _EMOJI_PRESENTATION in character and _pictograph(base) else 1


def cells(text: str) -> int:
    """How many terminal columns ``text`` takes (East Asian wide characters and emoji two;
    marks and format characters none: combining accents, variation selectors, joiners)."""
    return sum(_character_cells(character) for character in characters(text))


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: whole, or its first characters and an ellipsis
    (never half a character: an emoji sequence or an accent is kept whole or left out)."""
    if cells(text) <= width:
        return text
    kept, used = [], 0
    for character in characters(text):
        size = _character_cells(character)
        if used + size > width - 1:
            break
        kept.append(character)
        used += size
    return "".join(kept) + ELLIPSIS

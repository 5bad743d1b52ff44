"""How many of a terminal's columns (cells) a text takes, for the chat's line editor to move
its cursor by and for tables to align and cut their columns: East Asian wide characters take
two, combining marks and format characters none, and an emoji sequence (joined by zero-width
joiners, a flag's two regional indicators, a skin tone, an emoji variation selector) is one
character of two cells, as terminals draw it. A Hangul syllable typed as conjoining jamo is
one character in its leading jamo's two cells (vowel and trailing jamo take none, as glibc's
wcwidth and GLib count them); a spacing mark (category Mc: a Devanagari vowel sign) belongs to
the character before it and takes a cell of its own, as xterm and VTE draw it. A small rule for
the extended grapheme clusters of Unicode's UAX #29 that a line typed or listed has, not the
whole algorithm."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator, Sequence

_NO_COLUMN = ("Mn", "Me", "Cf")  # non-spacing and enclosing marks, format characters
_JOINER_CHAR = "\u200d"
_EMOJI_PRESENTATION = "\ufe0f"
ELLIPSIS = "…"


def _no_column(char: str) -> bool:
    return bool(unicodedata.combining(char)) or unicodedata.category(char) in _NO_COLUMN


def _jamo_after_leading(char: str) -> bool:
    """A Hangul vowel or trailing jamo: drawn in the leading jamo's (or syllable's) cells."""
    return "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff"


def _regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def _skin_tone(char: str) -> bool:
    return "\U0001f3fb" <= char <= "\U0001f3ff"


_MARK, _SPACING, _JOINER, _REGIONAL, _PICTOGRAPH, _WIDE_PICTOGRAPH, _NARROW, _WIDE = range(8)
_PICTOGRAPHS = (_PICTOGRAPH, _WIDE_PICTOGRAPH)
_JOINING = (_MARK, _SPACING, _JOINER)


@functools.lru_cache(maxsize=8192)
def _kind(char: str) -> int:
    """What ``char`` is to the rule (cached: a table measures thousands of characters)."""
    if char == _JOINER_CHAR:
        return _JOINER
    if _no_column(char) or _skin_tone(char) or _jamo_after_leading(char):
        return _MARK
    if unicodedata.category(char) == "Mc":
        return _SPACING
    if _regional(char):
        return _REGIONAL
    wide = unicodedata.east_asian_width(char) in "WF"
    if unicodedata.category(char) == "So":
        return _WIDE_PICTOGRAPH if wide else _PICTOGRAPH
    return _WIDE if wide else _NARROW


def joins(text: Sequence[str], at: int) -> bool:
    """Whether ``text[at]`` belongs to the character before it: a mark (spacing or not), a
    joiner or a variation selector, a skin tone, a Hangul vowel or trailing jamo, the
    pictograph after a joiner that follows one, a flag's second regional indicator."""
    if not 0 < at < len(text):
        return False
    kind = _kind(text[at])
    run = 0
    if kind == _REGIONAL:
        while at - run - 1 >= 0 and _kind(text[at - run - 1]) == _REGIONAL:
            run += 1
    return _joined(text, at, kind, run)


def _joined(text: Sequence[str], at: int, kind: int, regional_before: int) -> bool:
    """:func:`joins` for ``text[at]`` of ``kind``, given how many regional indicators run
    right before it (a flag's second one follows an odd run)."""
    if kind in _JOINING:
        return True
    if text[at - 1] == _JOINER_CHAR:
        # Back over the joiner and marks only to the character they follow: asking whether
        # each emoji before joins too recursed once per emoji of a chain and took time
        # doubling with every two.
        base = at - 2
        while base > 0 and _kind(text[base]) in _JOINING:
            base -= 1
        return kind in _PICTOGRAPHS and base >= 0 and _kind(text[base]) in _PICTOGRAPHS
    return kind == _REGIONAL and regional_before % 2 == 1


def characters(text: str) -> Iterator[str]:
    """``text`` as the characters a person sees, each with its marks and joined parts."""
    # The run of regional indicators is counted as the text is read: counted back from each
    # one (as joins does), a run of flags took time growing with its square.
    start, run = 0, 0
    for at in range(1, len(text) + 1):
        run = run + 1 if _kind(text[at - 1]) == _REGIONAL else 0
        if at == len(text) or not _joined(text, at, _kind(text[at]), run):
            yield text[start:at]
            start = at


def _character_cells(character: str) -> int:
    spacing = sum(_kind(char) == _SPACING for char in character)  # a cell each
    kind = _kind(character[0])
    if kind in _JOINING:
        return spacing
    if kind == _REGIONAL:
        return spacing + (2 if len(character) > 1 and _kind(character[1]) == _REGIONAL else 1)
    if kind in (_WIDE, _WIDE_PICTOGRAPH):
        return spacing + 2
    emoji = kind == _PICTOGRAPH and _EMOJI_PRESENTATION in character
    return spacing + (2 if emoji else 1)


def cells(text: str) -> int:
    """How many terminal columns ``text`` takes (East Asian wide characters and emoji two;
    marks and format characters none: combining accents, variation selectors, joiners, Hangul
    vowel and trailing jamo; a spacing mark one)."""
    if text.isascii():  # one cell a character: the common case, ~300 times faster
        return len(text)
    # One pass, the same rule as :func:`characters` and :func:`_character_cells`.
    total, base, counted, joined, paired = 0, _MARK, 0, False, False
    for char in text:
        kind = _kind(char)
        if kind == _SPACING:
            total, joined, paired = total + 1, False, False
            continue
        if kind in (_MARK, _JOINER):
            if char == _EMOJI_PRESENTATION and base == _PICTOGRAPH and counted == 1:
                total, counted = total + 1, 2
            joined, paired = kind == _JOINER, False
            continue
        if joined and kind in _PICTOGRAPHS and base in _PICTOGRAPHS:
            joined = False
            continue
        joined = False
        if kind == _REGIONAL and paired:
            total, counted, paired = total + 1, 2, False
            continue
        paired = kind == _REGIONAL
        base, counted = kind, 2 if kind in (_WIDE, _WIDE_PICTOGRAPH) else 1
        total += counted
    return total


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: whole, or its first characters and an ellipsis
    (never half a character: an emoji sequence or an accent is kept whole or left out)."""
    if text.isascii():
        return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS
    short, used, at = 0, 0, 0  # where the text cut before the ellipsis ends
    for character in characters(text):
        used += _character_cells(character)
        if used > width:
            return text[:short] + ELLIPSIS
        at += len(character)
        if used < width:
            short = at
    return text


def shortened(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else cut at a word near the limit
    (or, with none, between two characters a reader sees: never a letter from its accent, an
    emoji from its joined parts) and ended with ``...``."""
    if len(text) <= limit:
        return text
    end = text.rfind(" ", limit - 60, limit - 3)
    if end <= 0:
        end = limit - 3
        while end > 0 and joins(text, end):
            end -= 1
        end = end or limit - 3  # one character of 300 parts is cut all the same
    return text[:end].rstrip() + "..."

"""How messages quote values that came from outside (config files, manifests, a model's
arguments): never whole, and never as control characters a terminal would obey.

A value in a file can be megabytes long; an error quoting it whole floods the terminal, and
formatting a large structure can cost more memory than the process has. Every message that
quotes such a value goes through :func:`shown`, or :func:`clipped` for text shown unquoted.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

SHOWN_CHARACTERS = 60
"""How many characters of a long value a message shows."""
PROBLEM_CHARACTERS = 200
"""How many characters of a parser's own description of a problem a message shows (it may
quote the text it stumbled on)."""

_DIGITS_PER_BIT = 0.30103  # log10(2)


_JOINERS = ("\u200c", "\u200d")  # zero-width non-joiner and joiner
_EMOJI_MODIFIERS = ("\ufe0f", "\U0001f3fb", "\U0001f3fc", "\U0001f3fd", "\U0001f3fe", "\U0001f3ff")
# Scripts whose words need a joiner or a non-joiner (Persian "می‌خواهم", Devanagari conjuncts).
_JOINING_SCRIPTS = frozenset(
    [
        "ARABIC",
        "SYRIAC",
        "NKO",
        "MANDAIC",
        "MONGOLIAN",
        "DEVANAGARI",
        "BENGALI",
        "GURMUKHI",
        "GUJARATI",
        "ORIYA",
        "TAMIL",
        "TELUGU",
        "KANNADA",
        "MALAYALAM",
        "SINHALA",
    ]
)


def _script(char: str) -> str:
    if char.isascii():
        return ""
    return unicodedata.name(char, "").partition(" ")[0]


def _joined(text: str, at: int) -> bool:
    """Whether the joiner ``text[at]`` is part of what a person reads: a zero-width joiner
    inside an emoji sequence (pictograph, joiner, pictograph: 👩‍💻), or either joiner between
    two letters of a script that writes with them. Anywhere else, next to ASCII above all, it
    only hides something (``r\u200dm`` looks like ``rm``)."""
    if not 0 < at < len(text) - 1:
        return False
    before, after = text[at - 1], text[at + 1]
    if text[at] == "\u200d":
        base = at - 1
        while base > 0 and text[base] in _EMOJI_MODIFIERS:
            base -= 1
        if unicodedata.category(text[base]) == "So" and unicodedata.category(after) == "So":
            return True
    script = _script(before)
    return script in _JOINING_SCRIPTS and _script(after) == script


def printable(text: str, before: str = "") -> str:
    """``text`` with every non-printable character escaped (``\\r``, ``\\x1b``, ``\\u202e``),
    so a carriage return, an escape sequence or a bidi override cannot hide what is approved.
    A zero-width joiner or non-joiner stays where it is part of the text (see
    :func:`_joined`): an emoji sequence, a Persian or Indic word. ``before`` is the text shown
    just before ``text`` on the same line (a streamed answer's last piece, see
    :func:`left_context`): the neighbour of a joiner that starts ``text``."""
    if text.isprintable():
        return text
    whole = before + text
    return "".join(
        char
        if char.isprintable() or (char in _JOINERS and _joined(whole, at))
        else char.encode("unicode_escape").decode("ascii")
        for at, char in enumerate(text, len(before))
    )


def left_context(text: str, before: str = "") -> str:
    """The end of ``before + text`` that :func:`_joined` may look at for a joiner right after
    it (its last character, or an emoji's base and last modifier): all :func:`printable` needs
    as ``before`` to show a text arriving in pieces as it shows it whole. ``before`` is the
    left context of what came before ``text``."""
    if not text:
        return before
    if text[-1] not in _EMOJI_MODIFIERS:
        return text[-1]
    modifiers = "".join(_EMOJI_MODIFIERS)
    base = text.rstrip(modifiers) or before.rstrip(modifiers)
    return base[-1:] + text[-1]


def printable_lines(text: str, *, tabs: bool = False, before: str = "") -> str:
    """``text`` with its line breaks (and, with ``tabs``, its tabs) kept and every other
    non-printable character escaped (see :func:`printable`; ``before`` as there): a multi-line
    description or a tool's result stays readable, and still obeys no terminal."""
    parts = []
    for number, line in enumerate(text.split("\n")):
        cells = line.split("\t") if tabs else [line]
        left = before if number == 0 else ""
        parts.append(
            "\t".join(printable(cell, left if n == 0 else "") for n, cell in enumerate(cells))
        )
    return "\n".join(parts)


def as_shown(stream: Any, text: str) -> str:
    """``text`` as written to ``stream``: on a terminal with its control characters escaped
    (line breaks, ``\\r\\n`` ones too, and tabs kept), elsewhere exact. For text from outside
    (a tool's result, a model's answer): an OSC 52 sequence would write the clipboard, a CSI one
    clear the screen; through a pipe or into a file it is data."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return text
    # A carriage return before a line feed hides nothing; alone it could draw over a line.
    return printable_lines(text.replace("\r\n", "\n"), tabs=True)


def clipped(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """``text`` when it has at most ``limit`` characters, else its start, ``…`` and its
    length: ``vvvvvv… (524288 characters)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def shown(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """A value as YAML would write it, for a message: ``null``, ``true``/``false``,
    ``a mapping``, ``a list``, a number, or quoted text; anything longer than ``limit``
    characters is cut (see :func:`clipped`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple | set | frozenset):
        return "a list"
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value)} characters)"
    if isinstance(value, int) and value.bit_length() > 4 * limit:
        # repr() itself refuses integers of more than 4300 digits.
        return f"a whole number of about {round(value.bit_length() * _DIGITS_PER_BIT)} digits"
    return clipped(repr(value), limit)


def duration(seconds: float) -> str:
    """A span of time for people: ``12 s``, ``5 min``, ``3 h``, ``2 days``."""
    if seconds < 120:
        return f"{max(0, round(seconds))} s"
    if seconds < 2 * 3600:
        return f"{round(seconds / 60)} min"
    if seconds < 2 * 86400:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} days"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" Did you mean 'NAME'?"`` naming the known name closest to a mistyped ``name`` (by
    :mod:`difflib`), to append to the sentence that says ``name`` is unknown; ``""`` when no
    known name is close, or when ``name`` is too long to be a typo (comparing a megabyte key
    from a file costs seconds)."""
    if len(name) > 100:
        return ""
    import difflib  # only on the error path

    close = difflib.get_close_matches(name, [item for item in known if item != name], n=1)
    return f" Did you mean {close[0]!r}?" if close else ""

"""Where the chat's line editor's cursor keys and kill keys go in a line: by character (a
character with its combining marks, which take no column: a decomposed é is one to the
person, as is an emoji sequence: a flag, a person coding, a thumb with its skin tone), by
word (letters and digits, as readline's Alt-B and Alt-F), and back over a
whitespace-delimited word (Ctrl-W)."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core._terminal_cells import joins


def char_before(text: Sequence[str], at: int) -> int:
    """Where the character before ``at`` starts, with the marks after it."""
    at = max(at - 1, 0)
    while at > 0 and joins(text, at):
        at -= 1
    return at


def char_after(text: Sequence[str], at: int) -> int:
    """Where the character after ``at`` ends, its marks included."""
    at = min(at + 1, len(text))
    while at < len(text) and joins(text, at):
        at += 1
    return at


def word_before(text: Sequence[str], at: int) -> int:
    """Where the word before ``at`` starts (Alt-B)."""
    while at > 0 and not text[at - 1].isalnum():
        at -= 1
    while at > 0 and text[at - 1].isalnum():
        at -= 1
    return at


def word_after(text: Sequence[str], at: int) -> int:
    """Where the word after ``at`` ends (Alt-F)."""
    while at < len(text) and not text[at].isalnum():
        at += 1
    while at < len(text) and text[at].isalnum():
        at += 1
    return at


def spaced_word_before(text: Sequence[str], at: int) -> int:
    """Where the word before ``at`` starts, a word being what spaces delimit (Ctrl-W)."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at

"""A shell command line's segments and words, split the way bash splits them.

:func:`split_words` understands quotes, backslashes, comments, line continuations and
redirections, so ``echo "a;b"`` is one segment and ``r''m x`` is the word ``rm``. What it cannot
split without running the shell (command substitution, a here-document, unbalanced quotes...)
is given as a reason. :mod:`hermes_core._approvals.shell` reads the commands from the words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["SplitLine", "Word", "split_words"]

# Reasons a command line cannot be split, also shown to the user in a denial.
_SUBSTITUTION = "command substitution"
_PROCESS_SUBSTITUTION = "process substitution"
_HERE_DOCUMENT = "a here-document"
_UNBALANCED = "unbalanced quotes"
_NO_TARGET = "a redirection without a target"

_TOKEN = re.compile(
    r"""(?P<blank>[ \t]+)
    |(?P<join>\\\n)
    |(?P<newline>\n)
    |(?P<arithmetic>\$\(\()
    |(?P<substitution>\$\(|`)
    |(?P<process>[<>]\()
    |(?P<heredoc>[0-9]*<<(?!<))
    |(?P<redirect>[0-9]*(?:<<<|<>|<&|>>|>&|>\||<|>)|&>>|&>)
    |(?P<separator>;;&|;;|;&|;|&&|\|\||\|&|\||&|\(|\))
    |(?P<single>'[^']*')
    |(?P<ansi>\$'(?:[^'\\]|\\.)*')
    |(?P<double>\$?"(?:[^"\\]|\\.)*")
    |(?P<escape>\\.)
    |(?P<plain>[^ \t\n'"\\;&|()<>`$]+|\$)""",
    re.VERBOSE | re.DOTALL,
)
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\\n])')
_ESCAPED_PAIR = re.compile(r"\\.", re.DOTALL)
# A line of plain words and separators only (no quote, escape, $, backquote, comment or
# redirection) is split with two regular expressions instead of token by token.
_PLAIN_LINE = re.compile(r"[A-Za-z0-9_ \t\n./:=,@%+~^*?\[\]{}!;&|()-]*")
_PLAIN_SEPARATOR = re.compile(r"\n|;;&|;;|;&|;|&&|\|\||\|&|\||&|\(|\)")
_SUBSTITUTION_START = re.compile(r"\$\(|`")
_PARENTHESIS = re.compile(r"[()]")
_GLOB_OR_BRACE = re.compile(r"[*?\[{}]")

Word = tuple[str, bool]
"""A word: its value with quotes removed, and whether the shell would change it when it runs
(a variable, a glob, brace expansion, ``$'...'``)."""


class SplitLine(NamedTuple):
    """What :func:`split_words` found."""

    segments: list[tuple[str, list[Word]]]
    """Each simple command as written (without the surrounding blanks and separators), and
    its words."""
    unparseable: str
    """Why some of the line cannot be split, or empty."""
    redirects: bool
    """Whether a ``<`` or ``>`` redirection appears outside quotes."""


def split_words(command: str) -> SplitLine:
    """The segments of ``command``, each with its words."""
    if _PLAIN_LINE.fullmatch(command):
        found = [
            (text, [(word, bool(_GLOB_OR_BRACE.search(word))) for word in text.split()])
            for text in (part.strip(" \t\n") for part in _PLAIN_SEPARATOR.split(command))
            if text
        ]
        return SplitLine(found, "", False)
    scan = _Scan(command)
    reason = _scan(scan)
    return SplitLine(scan.segments, reason, scan.redirects)


@dataclass
class _Scan:
    """The state of reading one command line."""

    command: str
    segments: list[tuple[str, list[Word]]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    value: list[str] = field(default_factory=list)
    in_word: bool = False
    dynamic: bool = False
    segment_start: int = 0
    redirects: bool = False
    target: bool = False
    """The next word is the target of a redirection, not a word of the command."""

    def end_word(self) -> None:
        if not self.in_word:
            return
        if self.target:
            self.target = False
        else:
            self.words.append(("".join(self.value), self.dynamic))
        self.value.clear()
        self.in_word = False
        self.dynamic = False

    def end_segment(self, end: int) -> str:
        """Close the segment ending at ``end``; a reason when a redirection lacks its target."""
        self.end_word()
        text = self.command[self.segment_start : end].strip(" \t\n")
        if text:
            self.segments.append((text, self.words))
        self.words = []
        return _NO_TARGET if self.target else ""


def _scan(scan: _Scan) -> str:
    """Tokenize ``scan.command`` into segments and words; the reason it cannot be read, or ""."""
    command = scan.command
    position = 0
    while position < len(command):
        if command[position] == "#" and not scan.in_word:
            newline = command.find("\n", position)
            position = len(command) if newline < 0 else newline
            continue
        token = _TOKEN.match(command, position)
        if token is None:  # an opening quote without its closing one, or a final backslash
            return _UNBALANCED
        kind, text = token.lastgroup, token.group()
        if kind == "blank":
            scan.end_word()
        elif kind == "newline" or kind == "separator":
            if reason := scan.end_segment(position):
                return reason
            scan.segment_start = token.end()
        elif kind == "substitution":
            return _SUBSTITUTION
        elif kind == "arithmetic":
            end = _arithmetic_end(command, position)
            if end < 0:
                return _SUBSTITUTION
            scan.in_word = scan.dynamic = True  # a number known only when the shell runs
            scan.value.append(command[position:end])
            position = end
            continue
        elif kind == "process":
            return _PROCESS_SUBSTITUTION
        elif kind == "heredoc":
            scan.redirects = True
            return _HERE_DOCUMENT
        elif kind == "redirect":
            # The pattern takes the digits of a file descriptor (2>&1) with the operator.
            scan.end_word()
            if scan.target:
                return _NO_TARGET
            scan.redirects = True
            scan.target = True
        elif kind != "join":
            _add_piece(scan, kind, text)
            if kind == "double" and _has_substitution(_ESCAPED_PAIR.sub("", text)):
                return _SUBSTITUTION
        position = token.end()
    return scan.end_segment(len(command))


def _arithmetic_end(text: str, start: int) -> int:
    """The end of the arithmetic expansion ``$((...))`` at ``start``, or -1 when it holds a
    command substitution or is not one (bash reads ``$((cmd) )`` as a command substitution of
    a subshell)."""
    depth = 0
    for parenthesis in _PARENTHESIS.finditer(text, start + 1):
        depth += 1 if parenthesis.group() == "(" else -1
        if depth == 0:
            end = parenthesis.end()
            inner = text[start + 3 : end - 2]
            if text[end - 2 : end] != "))" or _SUBSTITUTION_START.search(inner):
                return -1
            return end
    return -1


def _has_substitution(text: str) -> bool:
    """Whether ``text`` (the inside of double quotes, escaped pairs removed) holds a command
    substitution; arithmetic expansions ``$((...))`` without one inside do not count."""
    position = 0
    while found := _SUBSTITUTION_START.search(text, position):
        if not text.startswith("$((", found.start()):
            return True
        position = _arithmetic_end(text, found.start())
        if position < 0:
            return True
    return False


def _add_piece(scan: _Scan, kind: str | None, text: str) -> None:
    scan.in_word = True
    if kind == "single":
        scan.value.append(text[1:-1])
    elif kind == "double":
        inner = text[2:-1] if text.startswith("$") else text[1:-1]
        scan.dynamic = scan.dynamic or "$" in _ESCAPED_PAIR.sub("", inner)
        scan.value.append(_DOUBLE_QUOTED_ESCAPE.sub(lambda m: m[1].strip("\n"), inner))
    elif kind == "escape":
        scan.value.append(text[1])
    elif kind == "ansi":
        scan.dynamic = True
        scan.value.append(text[2:-1])
    else:
        if text == "$" or _GLOB_OR_BRACE.search(text):
            scan.dynamic = True
        scan.value.append(text)

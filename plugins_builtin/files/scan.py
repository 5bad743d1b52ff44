"""What ``search_files`` walks and matches, and the bounded line reader ``read_file`` shares:
the directories skipped, a glob read as git and ripgrep read it, a regex run with a deadline
and the GIL released, and a long line shown around its match."""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import regex as regex_engine

SNIFF_BYTES = 8192
"""How much of a file is looked at for a NUL byte (binary) or a byte-order mark."""
SEARCH_MAX_FILE_BYTES = 2 * 1024 * 1024
SEARCH_MAX_FILES = 20000
SEARCH_LINE_CHARS = 240
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)


def read_lines(handle: BinaryIO, max_line: int) -> Iterator[tuple[bytes, bool]]:
    """Lines of ``handle`` with each cut to ``max_line`` bytes (``True`` when cut); the rest
    of a long line is skipped in chunks so memory stays bounded."""
    while True:
        line = handle.readline(max_line)
        if not line:
            return
        if len(line) == max_line and not line.endswith(b"\n"):
            while True:
                rest = handle.readline(65536)
                if not rest or rest.endswith(b"\n"):
                    break
            yield line, True
        else:
            yield line, False


GLOB_MAX_ALTERNATIVES = 256
"""How many globs a glob's braces may stand for (``{a,b}{c,d}`` is four)."""


@dataclass(frozen=True)
class Glob:
    """A ``search_files`` glob read as ripgrep reads it: ``{a,b}`` alternatives, a leading
    ``!`` for the files it does not match, a leading ``/`` anchoring it to the searched path
    (or the working directory), a trailing ``/`` meaning everything under that directory."""

    alternatives: tuple[tuple[str, ...], ...]
    negated: bool = False
    anchored: bool = False

    @classmethod
    def parse(cls, text: str) -> Glob:
        """``text`` read; ``ValueError`` when its braces stand for too many globs."""
        negated = text.startswith("!")
        text = text.removeprefix("!")
        anchored = text.startswith("/")
        text = text.lstrip("/").removeprefix("./")
        # A trailing "/" of each alternative: {src/,lib/} is src/** or lib/**.
        expanded = [one + "**" if one.endswith("/") else one for one in _expand_braces(text)]
        return cls(
            tuple(tuple(_unescaped(name) for name in one.split("/")) for one in expanded),
            negated,
            anchored,
        )

    def matches(self, file: Path, root: Path, shown: str) -> bool:
        """Whether ``file`` (``shown`` relative to the working directory) is one this glob
        selects: a glob of one name without ``/`` (``*.py``) is matched against the file's name
        at any depth, any other against its path."""
        found = any(self._one(segments, file, root, shown) for segments in self.alternatives)
        return found != self.negated

    def _one(self, segments: tuple[str, ...], file: Path, root: Path, shown: str) -> bool:
        if len(segments) == 1 and not self.anchored:
            return fnmatch.fnmatchcase(file.name, segments[0])
        return _path_matches(segments, file, root, shown)


def _expand_braces(text: str) -> list[str]:
    """``text`` with its ``{a,b}`` groups expanded, outermost first, as a shell does;
    ``ValueError`` past :data:`GLOB_MAX_ALTERNATIVES`. A ``{`` without its ``}`` or a group
    without a comma is literal."""
    done: list[str] = []
    pending = [text]
    while pending:
        current = pending.pop()
        group = _brace_group(current)
        if group is None:
            done.append(current)
            continue
        start, end, parts = group
        if len(done) + len(pending) + len(parts) > GLOB_MAX_ALTERNATIVES:
            raise ValueError(
                f"the glob's braces stand for more than {GLOB_MAX_ALTERNATIVES} alternatives; "
                "give fewer ({a,b} groups multiply)"
            )
        pending.extend(current[:start] + part + current[end:] for part in reversed(parts))
    return done


def _brace_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{...}`` with a comma of its own: its start, its end and its parts (one pass:
    a hostile ``{{{{...`` costs its length, not its square). An escaped ``\\{`` and one in a
    ``[...]`` class are no brace, as in ripgrep."""
    opened: list[int] = []
    commas: dict[int, list[int]] = {}
    found: tuple[int, int] | None = None
    for at, char in _plain_characters(text):
        if char == "{":
            opened.append(at)
        elif char == "}" and opened:
            start = opened.pop()
            if start in commas and (found is None or start < found[0]):
                found = (start, at)
        elif char == "," and opened:
            commas.setdefault(opened[-1], []).append(at)
    if found is None:
        return None
    start, end = found
    cuts = [start, *commas[start], end]
    parts = [text[cuts[i] + 1 : cuts[i + 1]] for i in range(len(cuts) - 1)]
    return start, end + 1, parts


def _plain_characters(text: str) -> Iterator[tuple[int, str]]:
    """``text``'s characters with their index, leaving out those made plain: the one after a
    backslash and those of a ``[...]`` class."""
    last_close = text.rfind("]")
    at = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif (end := _class_end(text, at, last_close)) is not None:
            at = end
        else:
            yield at, text[at]
            at += 1


def _class_end(text: str, at: int, last_close: int) -> int | None:
    """Where the ``[...]`` class opening at ``at`` ends, closed as fnmatch closes it; ``None``
    when ``at`` opens none (a ``[`` no ``]`` closes is plain). No ``]`` is looked for past the
    ``last_close`` of ``text``, so a hostile ``[[[[...`` costs its length, not its square."""
    if text[at] != "[":
        return None
    inner = at + 1 + text.startswith("!", at + 1)
    inner += text.startswith("]", inner)
    return text.index("]", inner) + 1 if inner <= last_close else None


def _unescaped(name: str) -> str:
    """``name`` (one name of a glob) for fnmatch, which reads no backslash: an escaped ``*``,
    ``?`` or ``[`` as a class of that one character, any other as itself; classes as written."""
    if "\\" not in name:
        return name
    last_close = name.rfind("]")
    pieces: list[str] = []
    at = 0
    while at < len(name):
        if name[at] == "\\" and at + 1 < len(name):
            plain = name[at + 1]
            pieces.append(f"[{plain}]" if plain in "*?[" else plain)
            at += 2
        elif (end := _class_end(name, at, last_close)) is not None:
            pieces.append(name[at:end])
            at = end
        else:
            pieces.append(name[at])
            at += 1
    return "".join(pieces)


def _path_matches(segments: tuple[str, ...], file: Path, root: Path, shown: str) -> bool:
    """Whether ``file``'s path relative to the searched ``root``, or to the working directory
    (``shown``), matches the glob split into ``segments``. ``**`` is any number of directories,
    none included; ``*``, ``?`` and ``[...]`` stay within one name (as git and ripgrep read
    them), each name matched alone, so no glob backtracks over a whole path."""
    relative = file.relative_to(root).parts if file != root else (file.name,)
    return _parts_match(segments, relative) or _parts_match(segments, Path(shown).parts)


def _parts_match(segments: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    reachable = {0}  # how many of ``parts`` the segments so far can have matched
    for segment in segments:
        if segment == "**":
            reachable = set(range(min(reachable), len(parts) + 1))
        else:
            reachable = {
                done + 1
                for done in reachable
                if done < len(parts) and fnmatch.fnmatchcase(parts[done], segment)
            }
        if not reachable:
            return False
    return len(parts) in reachable


def around_match(line: str, start: int) -> str:
    """``line`` cut to ``SEARCH_LINE_CHARS`` characters around a match at ``start``."""
    if len(line) <= SEARCH_LINE_CHARS:
        return line
    begin = max(0, min(start - SEARCH_LINE_CHARS // 4, len(line) - SEARCH_LINE_CHARS))
    piece = line[begin : begin + SEARCH_LINE_CHARS]
    return (
        f"{'...' if begin else ''}{piece}{'...' if begin + SEARCH_LINE_CHARS < len(line) else ''}"
    )


def walk(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(directory) / name


def text_lines(file: Path) -> Iterator[tuple[int, str]]:
    try:
        status = file.stat()
        # A FIFO, socket or device would block the open or the read (possibly forever).
        if not stat.S_ISREG(status.st_mode) or status.st_size > SEARCH_MAX_FILE_BYTES:
            return
        with file.open("rb") as handle:
            if b"\x00" in handle.read(SNIFF_BYTES):
                return
            handle.seek(0)
            # Whole lines (the file is at most 2 MB): a line cut short could match where the
            # real one does not (``a$``) and hide what follows the cut.
            for number, (raw, _) in enumerate(read_lines(handle, SEARCH_MAX_FILE_BYTES + 1), 1):
                yield number, raw.decode("utf-8", "replace")
    except OSError:
        return


def first_match(regex: regex_engine.Pattern[str], line: str, deadline: float) -> int | None:
    """Where ``regex`` first matches ``line`` (``None``: nowhere); ``TimeoutError`` once the
    scan's ``deadline`` (``time.monotonic()``) has passed."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    # concurrent=True releases the GIL, so the host keeps running during a long match.
    found = regex.search(line, timeout=remaining, concurrent=True)
    return None if found is None else found.start()

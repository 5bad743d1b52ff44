"""Reading a shell command line the way the allow and deny globs need it.

:func:`read_command_line` splits a command line into its simple commands (segments) the way
bash does: quotes, backslashes, comments and line continuations are understood, so
``echo "a;b"`` is one segment and ``r''m x`` runs ``rm``. For each segment it names the commands
it runs once quotes are removed, paths reduced to their last part, variable assignments and
wrappers (``sudo``, ``env``, ``xargs``, ``sh -c '...'``, ``find -exec`` ...) looked through.
What cannot be known without running the shell (command substitution, ``eval``, here-documents,
a command name held in a variable ...) is reported as :attr:`CommandLine.unparseable`.

This is a reader for approval rules, not a shell: it errs towards seeing more commands (which
makes a deny rule refuse more) and towards calling a line unreadable (which a wildcard allow
rule never approves).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core._approvals.shell_words import Word, split_words

__all__ = [
    "CommandLine",
    "ShellSegment",
    "read_command_line",
    "shell_segments",
    "wrapped_command_at",
]


@dataclass(frozen=True)
class ShellSegment:
    """One simple command of a command line."""

    text: str
    """As written, without the surrounding blanks and separators."""
    commands: tuple[str, ...] = ()
    """Each command the segment runs, followed by its arguments: quotes removed, words joined by
    one space, the command's path reduced to its name (and also given whole when it has one).
    ``sudo nice rm x`` gives ``sudo nice rm x``, ``nice rm x`` and ``rm x``."""


@dataclass(frozen=True)
class CommandLine:
    """What :func:`read_command_line` found."""

    segments: tuple[ShellSegment, ...]
    unparseable: str = ""
    """Why some of the line cannot be read (``"command substitution"``), or empty."""
    redirects: bool = False
    """Whether a ``<`` or ``>`` redirection appears outside quotes."""


# Reasons the commands of a line cannot be known, also shown to the user in a denial (the
# reasons a line cannot be split are shell_words.py's).
_UNKNOWN_COMMAND = "a command name known only when the shell runs it"
_SHELL_INPUT = "a shell reading commands from its input"
_TOO_DEEP = "shell commands nested too deep"
_TOO_MANY = "too many wrapped commands"
_FROM_XARGS_INPUT = "a command that xargs takes from its input"

_MAX_NESTING = 4
_MAX_COMMANDS = 8
"""Commands one segment may run through wrappers (``nice nice ... rm``): each is a subject
holding the rest of the segment, so the count bounds the work on a hostile command line."""
_CACHED_LENGTH = 4096

_DEVICE_DIRECTORY = re.compile(r"(?:^|/)(?:dev|proc)/")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")

# Reserved words (and ``[[ ]]`` brackets) that may stand before the command of a segment.
_KEYWORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"}
)
# Segments starting with these hold names and words, not commands (the body comes after ``do``
# or ``)``, in a later segment).
_NO_COMMAND = frozenset({"for", "select", "case", "[["})
_UNREADABLE_COMMANDS = {"eval": "eval", "alias": "an alias definition"}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_SOURCE = frozenset({".", "source"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs the command given after its options."""

    with_value: frozenset[str] = frozenset()
    """Options that take the next word as their value (``-u root``)."""
    operands: int = 0
    """Words between the options and the command (``timeout``'s duration)."""
    assignments: bool = False
    """Whether ``NAME=value`` words may stand before the command."""
    inert: frozenset[str] = frozenset()
    """Options with which the command is not run (``command -v rm`` only prints a path)."""
    unreadable: frozenset[str] = frozenset()
    """Options whose value is a command line in a syntax of the wrapper's own (``env -S``)."""


def _options(*names: str) -> frozenset[str]:
    return frozenset(names)


_WRAPPERS: dict[str, _Wrapper] = {
    "command": _Wrapper(inert=_options("-v", "-V")),
    "builtin": _Wrapper(),
    "exec": _Wrapper(_options("-a")),
    "env": _Wrapper(
        _options("-u", "--unset", "-C", "--chdir"),
        assignments=True,
        unreadable=_options("-S", "--split-string"),
    ),
    "nice": _Wrapper(_options("-n", "--adjustment")),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "time": _Wrapper(_options("-f", "--format", "-o", "--output")),
    "timeout": _Wrapper(_options("-s", "--signal", "-k", "--kill-after"), operands=1),
    "stdbuf": _Wrapper(_options("-i", "--input", "-o", "--output", "-e", "--error")),
    "ionice": _Wrapper(_options("-c", "--class", "-n", "--classdata")),
    "chroot": _Wrapper(_options("--userspec", "--groups"), operands=1),
    "busybox": _Wrapper(),
    "doas": _Wrapper(_options("-u", "-C")),
    "sudo": _Wrapper(
        _options(
            *("-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir"),
            *("-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type"),
            *("-U", "--other-user", "-T", "--command-timeout", "-R", "--chroot"),
        ),
        assignments=True,
    ),
    "xargs": _Wrapper(
        _options(
            *("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines"),
            *("-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars"),
            "--process-slot-var",
        )
    ),
}


def read_command_line(command: str) -> CommandLine:
    """The segments of ``command`` and the commands each runs.

    Command lines up to a few kilobytes are cached: the dispatcher reads each command once for
    the deny globs and once for the allow globs."""
    if len(command) > _CACHED_LENGTH:
        return _read(command, 0)
    return _read_cached(command)


@functools.lru_cache(maxsize=256)
def _read_cached(command: str) -> CommandLine:
    return _read(command, 0)


def shell_segments(command: str) -> list[str]:
    """The simple commands of a shell command line, as written (see :func:`read_command_line`):
    ``ls; rm x`` gives ``["ls", "rm x"]``, ``echo "a;b"`` gives ``['echo "a;b"']``."""
    return [segment.text for segment in read_command_line(command).segments]


def _read(command: str, depth: int) -> CommandLine:
    found, reason, redirects = split_words(command)
    segments: list[ShellSegment] = []
    for text, words in found:
        commands, why = _commands(words, depth)
        segments.append(ShellSegment(text, tuple(commands)))
        reason = reason or why
    return CommandLine(tuple(segments), reason, redirects)


def _commands(words: Sequence[Word], depth: int) -> tuple[list[str], str]:
    """The commands ``words`` run, each with its arguments, and the reason some of them cannot
    be known, or ""."""
    subjects: list[str] = []
    index = 0
    xargs: str | None = None  # once under xargs, its replace string ("" without -I)
    while index < len(words):
        value, dynamic = words[index]
        if value in _NO_COMMAND:
            return subjects, ""
        if value in ("function", "coproc"):
            # and the name of the function, or of the coprocess when a { } body follows
            named = value == "function" or [w for w, _ in words[index + 2 : index + 3]] == ["{"]
            index += 2 if named else 1
            continue
        # Reserved words and assignments are skipped wherever a command may stand: skipping
        # one that is in fact the command only makes the next word a command too.
        if value in _KEYWORDS or _ASSIGNMENT.match(value):
            index += 1
            continue
        if dynamic and value not in ("[", "[["):
            return subjects, _UNKNOWN_COMMAND
        if len(subjects) >= 2 * _MAX_COMMANDS:
            return subjects, _TOO_MANY
        if xargs and xargs in value:
            return subjects, _FROM_XARGS_INPUT
        name = value.rsplit("/", 1)[-1] or value
        arguments = [word for word, _ in words[index + 1 :]]
        subjects.append(" ".join([name, *arguments]).replace("\n", " "))
        if name != value:
            subjects.append(" ".join([value, *arguments]).replace("\n", " "))
        if name in _UNREADABLE_COMMANDS:
            return subjects, _UNREADABLE_COMMANDS[name]
        if name in _SHELLS:
            if xargs and any(xargs in word for word in arguments):
                return subjects, _FROM_XARGS_INPUT
            return _shell_commands(subjects, words, index + 1, depth)
        if name in _SOURCE:
            script = arguments[1] if arguments[:1] == ["--"] else next(iter(arguments), "")
            return subjects, _SHELL_INPUT if _is_input(script) else ""
        if name == "trap":
            return _trap_commands(subjects, words, index + 1, depth)
        if name == "find":
            return _find_commands(subjects, words, index + 1, depth)
        wrapper = _WRAPPERS.get(name)
        if wrapper is None:
            return subjects, ""
        skipped = _skip_wrapper_options(name, wrapper, words, index + 1)
        if isinstance(skipped, str):
            return subjects, skipped
        if skipped >= len(words) and xargs is not None:
            # xargs appends its input to what it runs: "xargs env" runs whatever it reads.
            return subjects, _FROM_XARGS_INPUT
        if name == "xargs":
            xargs = _xargs_replace_string(words[index + 1 : skipped])
        index = skipped
    return subjects, ""


def wrapped_command_at(words: Sequence[str]) -> int | None:
    """Where the command the wrapper ``words[0]`` runs starts in ``words`` (``nice -n 5 rm
    x``: 3), past the end when it runs none (``command -v rm``); ``None`` when ``words[0]`` is
    no wrapper read here, or what it runs cannot be read (``env -S``)."""
    name = posixpath.basename(words[0]) if words else ""
    wrapper = _WRAPPERS.get(name)
    if wrapper is None:
        return None
    skipped = _skip_wrapper_options(name, wrapper, [(word, False) for word in words], 1)
    return None if isinstance(skipped, str) else skipped


def _xargs_replace_string(options: Sequence[Word]) -> str:
    """The replace string of ``xargs -I R`` (also ``-IR``, ``-i[R]``, ``--replace[=R]``), or
    "" when xargs only appends its input."""
    value_letters = {option[1] for option in _WRAPPERS["xargs"].with_value if len(option) == 2}
    for position, (value, _) in enumerate(options):
        if value.startswith("--replace"):
            return value.partition("=")[2] or "{}"
        if value.startswith("--") or not value.startswith("-"):
            continue
        for offset, letter in enumerate(value[1:], 2):
            rest = value[offset:]
            if letter == "I":
                following = options[position + 1][0] if position + 1 < len(options) else ""
                return rest or following or "{}"
            if letter == "i":
                return rest or "{}"
            if letter in value_letters:
                break
    return ""


def _is_input(script: str) -> bool:
    """Whether a shell given ``script`` reads its commands from its input or another
    descriptor (``/dev/stdin``, ``/proc/self/fd/0``) rather than from a file."""
    if script in ("", "-"):
        return True
    path = posixpath.normpath(script)
    if path.startswith("/"):
        return path.lstrip("/").startswith(("dev/", "proc/"))
    # A relative path can climb to /dev from wherever the shell runs.
    return path.startswith("../") and _DEVICE_DIRECTORY.search(path) is not None


def _skip_wrapper_options(
    name: str, wrapper: _Wrapper, words: Sequence[Word], index: int
) -> int | str:
    """The index of the command ``wrapper`` runs (past the end when none), or a reason it
    cannot be read."""
    while index < len(words):
        value = words[index][0]
        if value == "--":
            index += 1
            break
        if not value.startswith("-"):
            break
        if value == "-":  # env's old spelling of -i; nothing else takes "-" as a command
            index += 1
            continue
        if value.startswith("--"):
            option = value.split("=", 1)[0]
            if option in wrapper.inert:
                return len(words)
            if option in wrapper.unreadable:
                return f"{name} {option}"
            index += 2 if option in wrapper.with_value and "=" not in value else 1
            continue
        # A cluster of short options (-iu NAME, -n5): a letter taking a value takes the rest of
        # the word, or the next word when it is the last letter.
        for position, letter in enumerate(value[1:], 1):
            option = "-" + letter
            if option in wrapper.inert:
                return len(words)
            if option in wrapper.unreadable:
                return f"{name} {option}"
            if option in wrapper.with_value:
                if position == len(value) - 1:
                    index += 1
                break
        index += 1
    index += wrapper.operands
    if wrapper.assignments:
        while index < len(words) and _ASSIGNMENT.match(words[index][0]):
            index += 1
    return index


def _nested(subjects: list[str], word: Word, depth: int) -> tuple[list[str], str]:
    """Add the commands of the command line ``word`` holds (``sh -c 'WORD'``)."""
    value, dynamic = word
    if dynamic:
        return subjects, _UNKNOWN_COMMAND
    if depth >= _MAX_NESTING:
        return subjects, _TOO_DEEP
    line = _read(value, depth + 1)
    for segment in line.segments:
        subjects.extend(segment.commands)
    return subjects, line.unparseable


def _shell_commands(
    subjects: list[str], words: Sequence[Word], index: int, depth: int
) -> tuple[list[str], str]:
    """``sh [options] -c 'command line'``: the nested commands; a shell reading its commands
    from its input cannot be read, one running a script file is not read."""
    command_string = from_input = False
    while index < len(words):
        value = words[index][0]
        if value in ("-", "--"):
            index += 1
            break
        if value.startswith("--"):
            index += 2 if value in ("--rcfile", "--init-file") else 1
            continue
        if len(value) < 2 or value[0] not in "-+":
            break
        if value[0] == "-":
            command_string = command_string or "c" in value
            from_input = from_input or "s" in value
        index += 2 if value[-1] in "oO" else 1
    if command_string and index < len(words):
        return _nested(subjects, words[index], depth)
    # "-c" without its string only runs when something appends one (xargs sh -c).
    if command_string or from_input or index >= len(words) or _is_input(words[index][0]):
        return subjects, _SHELL_INPUT
    return subjects, ""


def _trap_commands(
    subjects: list[str], words: Sequence[Word], index: int, depth: int
) -> tuple[list[str], str]:
    """``trap 'command line' SIGNAL...``: the nested commands."""
    if index < len(words) and words[index][0] == "--":
        index += 1
    if index + 1 < len(words) and not words[index][0].startswith("-"):
        return _nested(subjects, words[index], depth)
    return subjects, ""


def _find_commands(
    subjects: list[str], words: Sequence[Word], index: int, depth: int
) -> tuple[list[str], str]:
    """``find ... -exec COMMAND ... ;``: the commands after each ``-exec``-like action."""
    while index < len(words):
        if words[index][0] in _FIND_EXEC:
            end = index + 1
            while end < len(words) and words[end][0] not in (";", "+"):
                end += 1
            found, reason = _commands(words[index + 1 : end], depth)
            subjects.extend(found)
            if reason:
                return subjects, reason
            index = end
        index += 1
    return subjects, ""

"""Which shell hooks a project whose gate is closed keeps from running: a command of the hook's
line is a launcher hermes would not start there as an MCP server, or one whose guard needs
arguments hermes does not write into a hook's line (:func:`hook_refusal`).

The line is read as the shell runs it, as far as that is known before it runs: every command
of it (after ``;``, ``&&``, ``|``, a keyword such as ``if``, ``then``, ``!`` or ``{``), behind
assignments and the commands that run another one (``exec``, ``nohup``, ``time``, ``timeout``,
``nice``, ``setsid``, ``command``, ``env``), into ``sh -c 'STRING'`` and into the command
substitutions (``$(...)``, backquotes, ``<(...)``), which run in the same folder, up to the
first command that changes directory (``cd``).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Final

from hermes_core._project_trust import PROJECT_GATE_FLAG, gate_is_open

if TYPE_CHECKING:
    from hermes_core._paths import Environment

__all__ = ["command_index", "hook_refusal", "lift_substitutions"]

_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_SHELL_VALUED: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_CHANGES_DIRECTORY: Final = frozenset({"cd", "pushd", "popd"})
# Words before a command that leave it the command: `if uv run x; then ...`, `! uv run x`.
_KEYWORDS: Final = frozenset({"!", "{", "if", "then", "else", "elif", "do", "while", "until"})
# Commands that run the command after them: the options that take a value, and how many
# words follow the options before that command (`timeout 5 uv run x`).
_WRAPPERS: Final[dict[str, tuple[frozenset[str], int]]] = {
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "setsid": (frozenset(), 0),
}
_HOOK_WAYS_OUT: Final = (
    "run it from a folder of your own (`cd /path/to/yours && ...`), start it by the path of "
    "its installed command"
)
_DEPTH: Final = 3
"""How deep ``sh -c`` strings and substitutions are read into one another."""
_MARK: Final = "$_HERMES_SUBSTITUTION_{}_"
_MARKED: Final = re.compile(r"\$_HERMES_SUBSTITUTION_(\d+)_")


def hook_refusal(command: str, cwd: Path, env: Environment) -> str | None:
    """Why ``command`` is not run in ``cwd``, a project whose gate is closed, or ``None``: a
    command of its line is a launcher hermes does not start there
    (:func:`~hermes_core._mcp.launch.project_guard`'s refusal, as for an MCP server), or one
    whose guard needs arguments, which hermes does not write into a hook's line (``npx
    --prefix``, ``env -i PYTHONSAFEPATH=1``). What follows a change of directory, a command a
    variable names, or what a script runs, is not known before the shell runs it."""
    return None if gate_is_open(env) else _line_refusal(command, cwd, env, 0)


def command_index(words: Sequence[tuple[str, bool]], start: int = 0) -> int:
    """Where the command of a segment's ``words`` is, from ``start``: after its assignments
    (``A=1 cmd``)."""
    index = start
    while index < len(words) and _ASSIGNMENT.match(words[index][0]):
        index += 1
    return index


def _line_refusal(line: str, cwd: Path, env: Environment, depth: int) -> str | None:
    from hermes_core._approvals.shell_words import split_words

    lifted, substituted = lift_substitutions(line)
    judged: set[int] = set()

    def substitutions_in(text: str, here: Path) -> str | None:
        # A substitution runs before the command whose words it fills, in the same folder.
        for number in (int(found) for found in _MARKED.findall(text)):
            if number < len(substituted) and number not in judged:
                judged.add(number)
                if depth < _DEPTH and (
                    said := _line_refusal(substituted[number], here, env, depth + 1)
                ):
                    return said
        return None

    split = split_words(lifted)
    # The folders of each subshell the line is in (`( ... )`), the one it is in last: those
    # before are what `pushd` left for `popd`.
    levels: list[list[Path]] = [[cwd]]
    position = 0
    for text, words in split.segments:
        start = lifted.find(text, position)
        for separator in lifted[position:start] if start >= 0 else "":
            if separator == "(":
                levels.append([levels[-1][-1]])
            elif separator == ")" and len(levels) > 1:
                levels.pop()
        position = start + len(text) if start >= 0 else position
        here = levels[-1][-1]
        if (said := substitutions_in(text, here)) is not None:
            return said
        index = _command_at(words)
        if index is None or words[index][1]:
            continue  # no command, a lookup, or a command the shell names when it runs
        name, args = words[index][0], [word for word, _ in words[index + 1 :]]
        if PurePath(name).name in _CHANGES_DIRECTORY:
            if not _move(PurePath(name).name, words[index + 1 :], levels[-1], env):
                return None  # what follows runs in a folder known only when it runs
            continue
        if PurePath(name).name in _SHELLS and (script := _shell_script(args)) is not None:
            if depth < _DEPTH and (said := _line_refusal(script, here, env, depth + 1)):
                return said
            continue
        if (said := _command_refusal(name, args, here, env)) is not None:
            return said
    if not split.unparseable:
        return None
    # A here-document is not split: its command is read from the line before it (its text,
    # data for that command, is not), and the substitutions past it still run here.
    before = lifted.find("<<")
    if before > 0 and (said := _line_refusal(lifted[:before], cwd, env, depth)) is not None:
        return said
    return substitutions_in(lifted, levels[-1][-1])


def _move(
    command: str, words: Sequence[tuple[str, bool]], folders: list[Path], env: Environment
) -> bool:
    """Follow ``cd``, ``pushd`` or ``popd`` given ``words`` in ``folders`` (a subshell's: the
    current one last, before it those ``pushd`` left); ``False`` when where it goes is known
    only when it runs (a variable, ``cd -``, ``~user``, a relative folder with ``CDPATH``). A
    folder that does not exist is taken as written: a ``cd`` into it fails, and one that
    fails in a line that goes on (``cd /nope; uv run``) is not told apart."""
    if command == "popd":
        if len(folders) < 2:
            return False
        folders.pop()
        return True
    targets = [(word, expands) for word, expands in words if not word.startswith("-")]
    if any(word in ("-", "--") for word, _ in words) or (targets and targets[0][1]):
        return False
    target = targets[0][0] if targets else "~"
    home = env.get("HOME")
    if target == "~" or target.startswith("~/"):
        if home is None:
            return False
        target = home + target[1:]
    elif target.startswith(("~", "+")) or (not target.startswith("/") and env.get("CDPATH")):
        return False
    moved = Path(os.path.normpath(folders[-1] / target))
    if command == "pushd":
        folders.append(moved)
    else:
        folders[-1] = moved
    return True


def _command_refusal(name: str, args: list[str], cwd: Path, env: Environment) -> str | None:
    from hermes_core._mcp.launch import project_file, project_guard

    guard = project_guard(name, args, cwd, env, _HOOK_WAYS_OUT)
    if guard.refusal is not None:
        return guard.refusal
    if guard.args is None:
        return None
    # Arguments that keep out files hermes can name matter only where the project holds one:
    # elsewhere the line runs as written (a user's `npx prettier` in a Python project).
    found = project_file(guard.keeps_out, cwd, env) if guard.keeps_out else None
    if guard.keeps_out and found is None:
        return None
    reads = f"reads {found}, which" if found is not None else "reads what"
    return (
        f"not started: `{PurePath(name).name}` {reads} a cloned repository can plant in {cwd}, "
        "and the project gate is closed there; hermes does not rewrite a hook's line: "
        f"write `{shlex.join([name, *guard.args])}` in it, or set "
        f"{PROJECT_GATE_FLAG}=1 in the environment for a project you trust"
    )


def _command_at(words: Sequence[tuple[str, bool]]) -> int | None:
    """Where the command a segment runs is, behind assignments, keywords and the commands of
    :data:`_WRAPPERS`; ``None`` for a segment that runs none (``command -v npx`` looks it up)."""
    index = command_index(words)
    while index < len(words):
        word, expands = words[index]
        if word in _KEYWORDS:  # `{` too, though split_words takes it for a brace expansion
            index = command_index(words, index + 1)
            continue
        wrapper = None if expands else _WRAPPERS.get(PurePath(word).name)
        if wrapper is None:
            return index
        valued, positional = wrapper
        index += 1
        while index < len(words) and words[index][0].startswith("-"):
            option = words[index][0]
            if word == "command" and ("v" in option or "V" in option):
                return None  # `command -v NAME` says where NAME is; it does not run it
            index += 2 if option in valued else 1
        index += positional
    return index if index < len(words) else None


def _shell_script(args: Sequence[str]) -> str | None:
    """The string a shell given ``args`` runs (``-c STRING``, ``-lc STRING``, ``-o pipefail -c
    STRING``), or ``None``."""
    reads_string, rest = False, list(args)
    while rest:
        arg = rest.pop(0)
        if arg in _SHELL_VALUED:
            rest = rest[1:]
        elif arg.startswith(("-", "+")):
            if not arg.startswith("--") and arg[0] == "-":
                reads_string = reads_string or "c" in arg
        else:
            return arg if reads_string else None
    return None


def lift_substitutions(line: str) -> tuple[str, list[str]]:
    """``line`` with each command substitution (``$(...)``, backquotes, ``<(...)``) replaced
    by a word the shell fills when it runs (:data:`_MARK`), and the commands they hold, in
    order. A substitution whose end is not found holds the rest of the line."""
    kept: list[str] = []
    lifted: list[str] = []
    at, quoted = 0, False
    while at < len(line):
        char = line[at]
        if char == "\\":
            kept.append(line[at : at + 2])
            at += 2
            continue
        if char == "'" and not quoted:
            end = line.find("'", at + 1)
            end = len(line) if end < 0 else end + 1
        elif char == "#" and not quoted and (at == 0 or line[at - 1] in " \t\n;&|()"):
            end = line.find("\n", at)  # a comment runs nothing
            end = len(line) if end < 0 else end
        elif char == "`":
            close = _backquote_end(line, at + 1)
            lifted.append(line[at + 1 : close].replace("\\`", "`"))
            kept.append(_MARK.format(len(lifted) - 1))
            at = close + 1
            continue
        elif (line.startswith("$(", at) and not line.startswith("$((", at)) or (
            not quoted and line.startswith(("<(", ">("), at)
        ):
            close = _parenthesis_end(line, at + 2)
            lifted.append(line[at + 2 : close])
            kept.append(_MARK.format(len(lifted) - 1))
            at = close + 1
            continue
        else:
            quoted = quoted != (char == '"')
            end = at + 1
        kept.append(line[at:end])
        at = end
    return "".join(kept), lifted


def _backquote_end(line: str, start: int) -> int:
    at = start
    while at < len(line) and line[at] != "`":
        at += 2 if line[at] == "\\" else 1
    return min(at, len(line))


def _parenthesis_end(line: str, start: int) -> int:
    """Where the ``)`` closing a substitution whose text starts at ``start`` is (quotes and
    nested parentheses skipped), or the line's end."""
    depth, at = 1, start
    while at < len(line):
        char = line[at]
        if char == "\\":
            at += 2
            continue
        if char in "'\"":
            close = line.find(char, at + 1)
            at = len(line) if close < 0 else close + 1
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return at
        at += 1
    return len(line)

"""The MCP server entries that start this hermes's own ``hermes serve``: one rule, for
``hermes mcp add`` (which refuses such an entry) and ``hermes import-agent`` (which skips it).

Added to the configuration it serves, such an entry makes every hermes command start a
``hermes serve`` of that same configuration: it lists this hermes's core tools again, deferred
(``mcp__hermes__terminal`` beside ``terminal``), and starts a ``hermes serve`` of its own.

An entry is this hermes when its command is ``hermes`` (``hermes.exe``: Claude Desktop's file
may come from Windows) or a Python running ``-m hermes_core`` (``-mhermes_core``, ``-Im
hermes_core``), its arguments hold ``serve``,
and the configuration file it names is this one: ``--config FILE`` before ``serve`` (relative
to the entry's ``cwd``, or to the directory of a ``-C DIR`` before ``serve``), else
``HERMES_CONFIG`` of its ``env``, else ``HERMES_HOME`` of its ``env`` (its ``config.yaml``).
One that names none is taken for this hermes: it is the line docs/mcp.md gives MCP clients,
and which home its child would read depends on ``HOME`` alone, which nobody adding it has in
mind. A name hermes cannot know when adding (a ``${VAR}``) is
taken for another hermes's.

Launchers in front are looked through: ``env`` (its ``NAME=VALUE`` words are the child's
variables; ``-S``'s string is split into words), ``nohup``, ``setsid``, ``nice``, ``timeout``,
``stdbuf``... past their options, a shell's ``-c`` script (the first word after ``-c`` that is
no option, or the one after ``--``; each command of it, split at operators and line ends,
``exec`` and leading assignments allowed; read conservatively: a command whose words hold
``hermes`` after a word hermes does not know, ``nohup hermes serve``, ``then hermes serve``,
``{ hermes serve; }``, is taken to run it), and ``uvx``, ``pipx run`` and ``uv run``: the
program they run (their first word that is no option, option's value (every option of theirs
that takes one) or subcommand; after ``uv run -m``/``--module``, a module run by Python), the
package ``hermes-core-agent`` running ``hermes``. A launcher that moves to a directory moves
the relative names after it there: ``env -C DIR`` (``--chdir``), ``uv run --directory DIR``,
and a script's ``cd DIR`` (for the commands after it; ``cd`` alone is the home directory). A
directory hermes cannot know when adding (a ``$VAR``, ``cd -``) makes a relative name unknown:
another hermes's.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hermes_core._paths import Environment

__all__ = ["SERVES_ITSELF", "serves_this_hermes", "starts_hermes_serve"]

SERVES_ITSELF: Final = (
    "it starts hermes serve, this hermes itself: hermes would serve its own tools to itself"
)
"""Why such an entry is refused or skipped."""


def starts_hermes_serve(command: str, args: Sequence[str]) -> bool:
    """Whether ``command`` with ``args`` runs ``hermes serve`` (of any configuration)."""
    return "serve" in args and (_is_hermes(command) or _runs_hermes_module(args))


def _runs_hermes_module(args: Sequence[str]) -> bool:
    """Whether ``args`` run the module hermes_core as Python reads them: ``-m hermes_core``,
    joined (``-mhermes_core``) or after other letters (``-Im hermes_core``)."""
    for i, word in enumerate(args):
        if word.startswith("-") and not word.startswith("--") and "m" in word:
            module = word[word.index("m") + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
            if module in ("hermes_core", "hermes_core.__main__"):
                return True
    return False


def _is_hermes(word: str) -> bool:
    # Either separator: Claude Desktop's file may come from Windows (hermes.exe).
    return PureWindowsPath(word).name.lower() in ("hermes", "hermes.exe")


def serves_this_hermes(entry: Mapping[str, Any], env: Environment, config_path: Path) -> bool:
    """Whether the ``mcp_servers`` entry ``entry``, run from ``env.cwd``, starts the
    ``hermes serve`` of the configuration file ``config_path`` (see the module docstring)."""
    command, args = entry.get("command"), entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    given = entry.get("env")
    variables = {str(k): str(v) for k, v in given.items()} if isinstance(given, Mapping) else {}
    cwd = entry.get("cwd")
    base = env.cwd / Path(cwd).expanduser() if isinstance(cwd, str) else env.cwd
    commands = _commands(command, [str(arg) for arg in args], variables, Path())
    for program, words, names, here in commands:
        if not starts_hermes_serve(program, words):
            continue
        named = _named_config(words, names)
        if named is None:
            return True
        directory = _option(words[: words.index("serve")], "-C", "--directory")
        where = _moved(here, directory) if directory is not None else here
        path = Path(named).expanduser()
        if "${" in str(named) or (where is None and not path.is_absolute()):
            continue
        if _real(base / (where or Path()) / path) == _real(config_path):
            return True
    return False


def _moved(here: Path | None, to: str | None) -> Path | None:
    """The directory ``here`` (relative to the entry's) after a move to ``to`` (``None``: the
    home directory, as ``cd`` alone); ``None`` when either cannot be known when adding."""
    if here is None or to == "-" or (to is not None and "$" in to):
        return None
    return here / Path("~" if to is None else to).expanduser()


_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_PACKAGE_RUNNERS: Final = frozenset({"uvx", "pipx", "uv"})
_DISTRIBUTION: Final = "hermes-core-agent"
# The options of uv run, uv tool run (uvx) and pipx run that take a value (uv 0.13, pipx 1.18):
# the word after one is its value, not the program.
_VALUE_OPTIONS: Final = frozenset(
    {"--from", "--spec", "--with", "-w", "--with-editable", "--with-requirements", "--python"}
    | {"-p", "--directory", "--project", "--config-file", "--cache-dir", "--color", "--env-file"}
    | {"--extra", "--no-extra", "--group", "--no-group", "--only-group", "--package"}
    | {"--no-editable-package", "--python-platform", "--torch-backend", "--index"}
    | {"--default-index", "--index-url", "-i", "--extra-index-url", "--find-links", "-f"}
    | {"--index-strategy", "--keyring-provider", "--upgrade-package", "-P", "--upgrade-group"}
    | {"--resolution", "--prerelease", "--prerelease-package", "--fork-strategy"}
    | {"--exclude-newer", "--exclude-newer-package", "--no-sources-package", "--link-mode"}
    | {"--reinstall-package", "--config-setting", "-C", "--config-settings-package"}
    | {"--no-build-isolation-package", "--no-build-package", "--no-binary-package"}
    | {"--refresh-package", "--allow-insecure-host", "--constraints", "-c", "--overrides"}
    | {"--build-constraints", "-b", "--python-preference"}  # the last: uv before 0.8
    | {"--python-args", "--pip-args", "--fetch-python", "--cooldown", "--backend"}  # pipx run
)
_LOOKED_THROUGH: Final = frozenset(
    {"nohup", "setsid", "nice", "timeout", "stdbuf", "ionice", "time", "command", "exec"}
)
"""Launchers that run the command after their options as the user, where they are, with the
variables they have (the approvals' shell reader knows their options); not ``sudo``, ``doas``
or ``chroot``: another account's or another root's hermes is another hermes."""
_SHELL_VALUE_OPTIONS: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_RUNNER_SUBCOMMANDS: Final = frozenset({"run", "tool"})
_SHELL_PUNCTUATION: Final = "();<>|&\n"
"""What ends a simple command of a script (``shlex``'s punctuation and the line end); a
redirection's ``<`` or ``>`` ends it too: its words after it are not the command's."""


def _commands(
    command: str, args: list[str], variables: dict[str, str], here: Path | None, depth: int = 0
) -> Iterator[tuple[str, list[str], dict[str, str], Path | None]]:
    """The commands an entry runs: itself, and what its launchers run (``env``, a shell's
    ``-c`` script, ``uvx``, ``pipx run``, ``uv run``), each with the variables it gets and the
    directory it starts in (relative to the entry's; ``None``: one not known when adding)."""
    yield command, args, variables, here
    program = PureWindowsPath(command).name.lower()
    if depth > 7 or not args:  # launchers in launchers, bounded
        return
    if program == "env":
        words, names = list(args), dict(variables)
        while words and (words[0].startswith("-") or "=" in words[0]):
            word = words.pop(0)
            if word in ("-C", "--chdir") and words:
                here = _moved(here, words.pop(0))
            elif word.startswith(("-C", "--chdir=")):
                here = _moved(here, word.removeprefix("--chdir=").removeprefix("-C"))
            elif word in ("-u", "--unset") and words:
                words.pop(0)  # the option's value
            elif word in ("-S", "--split-string") and words:
                words[:1] = _split(words[0])
            elif word.startswith(("-S", "--split-string=")):
                words[:0] = _split(word.removeprefix("--split-string=").removeprefix("-S"))
            elif "=" in word and not word.startswith("-"):
                key, _, value = word.partition("=")
                names[key] = value
        if words:
            yield from _commands(words[0], words[1:], names, here, depth + 1)
    elif program in _SHELLS:
        flags = [
            i
            for i, word in enumerate(args)
            if word.startswith("-") and not word.startswith("--") and "c" in word
        ]
        script = _script_after(args, flags[0] + 1) if flags else None
        if script is not None:
            for words in _script_commands(script):
                names = dict(variables)
                while words and ("=" in words[0] or words[0] == "exec"):
                    key, _, value = words.pop(0).partition("=")
                    if key != "exec":
                        names[key] = value
                if words and words[0] == "cd":  # for the script's commands after it
                    operands = [
                        word for word in words[1:] if not word.startswith("-") or word == "-"
                    ]
                    here = _moved(here, operands[0] if operands else None)
                elif words:
                    yield from _commands(words[0], words[1:], names, here, depth + 1)
                    # Conservatively, hermes after a word not read here (nohup, then, {).
                    at = next((i for i, word in enumerate(words) if _is_hermes(word)), 0)
                    if at:
                        yield from _commands(words[at], words[at + 1 :], names, here, depth + 1)
    elif program in _LOOKED_THROUGH:
        from hermes_core._approvals.shell import wrapped_command_at

        start = wrapped_command_at([program, *args])
        if start is not None and start <= len(args):
            yield from _commands(args[start - 1], args[start:], variables, here, depth + 1)
    elif program in _PACKAGE_RUNNERS:
        # The program run is the first word that is no option, no option's value and not the
        # subcommand (uv run, uv tool run, pipx run): the package hermes-core-agent runs hermes.
        for i, word in enumerate(args):
            if word.startswith("-") or (i and args[i - 1] in _VALUE_OPTIONS):
                continue
            if word in _RUNNER_SUBCOMMANDS and program != "uvx":
                continue
            if word.split("@")[0].split("==")[0] == _DISTRIBUTION:
                word = "hermes"
            # uv's --directory, before the program (after it, the program's own option)
            directory = _option(args[:i], "--directory") if program != "pipx" else None
            moved = here if directory is None else _moved(here, directory)
            rest = args[i + 1 :]
            if program == "uv" and {"-m", "--module"} & set(args[:i]):  # uv run -m MODULE
                word, rest = "python", ["-m", word, *rest]
            yield from _commands(word, rest, variables, moved, depth + 1)
            return


def _script_after(args: list[str], at: int) -> str | None:
    """The script of a shell's ``-c``: its first word from ``at`` on that is no option (nor an
    option's value, ``-o pipefail``), or the word after ``--``; ``None`` when there is none."""
    while at < len(args):
        word = args[at]
        if word == "--":
            at += 1
            break
        if word in _SHELL_VALUE_OPTIONS:
            at += 2
        elif word.startswith(("-", "+")) and word not in ("-", "+"):
            at += 1
        else:
            break
    return args[at] if at < len(args) else None


def _split(text: str) -> list[str]:
    """``env -S``'s string as words (as a shell splits it); none when it cannot be split."""
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _script_commands(script: str) -> Iterator[list[str]]:
    """The simple commands of a shell script, split at ``;``, ``&&``, ``|``...: nothing when
    it cannot be read as words (an unbalanced quote)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_SHELL_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return
    words: list[str] = []
    for token in [*tokens, ";"]:
        if token and all(char in _SHELL_PUNCTUATION for char in token):
            if words:
                yield words
            words = []
        else:
            words.append(token)


def _option(args: list[str], *names: str) -> str | None:
    """The value of the option called ``names`` last given in ``args`` (click's last one
    wins): ``--name VALUE`` or ``--name=VALUE``, ``-N VALUE`` or ``-NVALUE``; else ``None``."""
    value = None
    for i, word in enumerate(args):
        for name in names:
            joined = f"{name}=" if name.startswith("--") else name
            if word == name and i + 1 < len(args):
                value = args[i + 1]
            elif word.startswith(joined) and len(word) > len(joined):
                value = word.removeprefix(joined)
    return value


def _named_config(args: list[str], variables: Mapping[str, Any]) -> PurePath | None:
    named = _option(args[: args.index("serve")], "--config")
    if named is not None:
        return PurePath(named)
    if variables.get("HERMES_CONFIG"):
        return PurePath(str(variables["HERMES_CONFIG"]))
    if variables.get("HERMES_HOME"):
        return PurePath(str(variables["HERMES_HOME"])) / "config.yaml"
    return None


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return Path(os.path.abspath(path))

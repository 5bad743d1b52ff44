"""docs/cli.md names every option of every built-in command, and every ``hermes`` command the
README and the docs show (their examples and code spans) is one, with options it has."""

from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click

from hermes_core._cli import SUBCOMMANDS, cli

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _commands() -> Iterator[tuple[list[str], click.Command]]:
    pending: list[tuple[list[str], click.Command]] = []
    for name, target in SUBCOMMANDS.items():
        module, attribute = target.split(":")
        pending.append(([name], getattr(importlib.import_module(module), attribute)))
    while pending:
        path, command = pending.pop()
        yield path, command
        if isinstance(command, click.Group):
            pending.extend(([*path, name], sub) for name, sub in command.commands.items())


def _option_names(command: click.Command) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option) and param.name != "help":
            names.update(name for name in (*param.opts, *param.secondary_opts) if "--" in name)
    return names


def _first_cells() -> list[str]:
    rows = DOCS.read_text(encoding="utf-8").splitlines()
    # A cell's `\|` is a pipe inside the usage line, not the end of the cell.
    return [row.replace("\\|", " ").split("|")[1] for row in rows if row.startswith("| `hermes ")]


def test_every_option_of_every_command_is_in_its_row() -> None:
    cells = _first_cells()
    missing = []
    for path, command in _commands():
        # A row names its command's group (`hermes mcp ...`) and the command's own word, as
        # in "`hermes cron list [--json]` / `runs [JOB] [--limit N]`".
        own = [
            cell
            for cell in cells
            if f"`hermes {path[0]}" in cell and re.search(rf"\b{re.escape(path[-1])}\b", cell)
        ]
        documented = {name for cell in own for name in re.findall(r"--[a-z][a-z0-9-]*", cell)}
        missing += [
            f"hermes {' '.join(path)} {name}"
            for name in sorted(_option_names(command) - documented)
        ]
    assert missing == []


def test_every_option_of_hermes_itself_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert (
        sorted(name for name in _option_names(cli) if not re.search(rf"`[^`]*{name}\b", text)) == []
    )


# hermes's own options, before the command, and how many words each takes.
_GLOBAL = {
    "-v": 0,
    "--verbose": 0,
    "--config": 1,
    "-C": 1,
    "--directory": 1,
    "--version": 0,
    "--help": 0,
}


def _documented_command_lines() -> Iterator[tuple[str, str]]:
    """Each ``hermes ...`` line of the README's and the docs' console and shell examples, and each
    inline ``hermes ...`` code span of their text (not a message such as ``hermes serve: ...``)."""
    root = DOCS.parent.parent
    for path in [root / "README.md", *sorted(DOCS.parent.glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in re.finditer(r"```(?:console|sh|bash)\n(.*?)```", text, re.S):
            for line in block.group(1).replace("\\\n", " ").splitlines():
                line = line.removeprefix("$ ").strip()
                if line.startswith("hermes "):
                    yield path.name, re.sub(r"\s+#.*$", "", line)
        for span in re.finditer(r"`(hermes [^`:\\]*)`", text):  # not a message, nor \` in one
            yield path.name, span.group(1)


def test_every_hermes_command_the_docs_show_exists_with_its_options() -> None:
    roots = {path[0]: command for path, command in _commands() if len(path) == 1}
    wrong = []
    for doc, line in _documented_command_lines():
        words = shlex.split(line.split(" | ")[0])[1:]
        while words and words[0] in _GLOBAL:
            del words[: 1 + _GLOBAL[words[0]]]
        if not words:
            continue
        path = [words.pop(0)]
        command = roots.get(path[0])
        while isinstance(command, click.Group) and words and words[0] in command.commands:
            path.append(words.pop(0))
            command = command.commands[path[-1]]
        if command is None:
            wrong.append(f"{doc}: {line}: no command 'hermes {path[0]}'")
            continue
        known = _option_names(command) | {"--help"}
        for word in words[: words.index("--") if "--" in words else None]:
            # Options as a usage line writes them too: "[--json]", "[--wait/--no-wait]".
            if word.lstrip("[").startswith("--"):
                for option in re.findall(r"--[a-z][a-z0-9-]*", word.split("=")[0]):
                    if option not in known:
                        wrong.append(f"{doc}: {line}: 'hermes {' '.join(path)}' has no {option}")
    assert wrong == []


def test_the_doctor_row_names_each_group_of_doctors_own_checks() -> None:
    # The groups come from the code (doctor_checks.OWN_GROUPS, which a plugin's group is told
    # apart from): a group added there and not documented fails here.
    from hermes_core._cli.doctor_checks import OWN_GROUPS

    lines = DOCS.read_text(encoding="utf-8").splitlines()
    (row,) = (line for line in lines if line.startswith("| `hermes doctor "))
    assert [group for group in OWN_GROUPS if f"`{group}` (" not in row] == []

"""docs/cli.md names every option of every built-in command."""

from __future__ import annotations

import importlib
import re
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

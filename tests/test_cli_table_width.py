"""Every ``hermes`` table (:func:`hermes_core._cli.output.columns`) at a terminal narrower than
its rows: the free text (a description, a note, a command line) is cut with an ellipsis so
that each row fits one line, names never; piped, it is exact whatever ``COLUMNS`` says.
Columns are aligned by the cells a text takes, wide characters and emoji included."""

from __future__ import annotations

import pexpect
import pytest

from hermes_core._cli.output import columns
from hermes_core._terminal_cells import cells
from hermes_core.testing import HermesCli

CATALOG_NAMES = ("time", "git", "fetch", "everything")


def _at_a_terminal(hermes_cli: HermesCli, width: int, *args: str) -> list[str]:
    """The lines ``hermes *args`` writes to a pseudo-terminal ``width`` columns wide."""
    python, *rest = hermes_cli.command(*args)
    child = pexpect.spawn(
        python,
        rest,
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=60,
        dimensions=(24, width),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before).replace("\r\n", "\n").splitlines()


@pytest.mark.subprocess
@pytest.mark.parametrize("width", [60, 40])
def test_a_table_at_a_narrow_terminal_cuts_its_free_text_to_the_width(
    hermes_cli: HermesCli, width: int
) -> None:
    lines = _at_a_terminal(hermes_cli, width, "mcp", "catalog")
    table = lines[: lines.index("")]
    assert [cells(line) <= width for line in table] == [True] * len(table), table
    names = [line.split()[0] for line in table[1:]]
    assert set(CATALOG_NAMES) <= set(names), names
    assert not [name for name in names if "…" in name]
    assert all(line.endswith("…") for line in table[1:]), table


@pytest.mark.subprocess
def test_a_piped_table_is_never_cut_whatever_columns_says(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("mcp", "catalog", env=hermes_cli.variables(COLUMNS="40"))
    assert "…" not in done.stdout
    assert "Current time and time zone conversion (reference server" in done.stdout


def test_columns_are_aligned_by_the_cells_their_text_takes() -> None:
    rows = [("日本語", "x"), ("👍🏽", "y"), ("e\u0301", "z"), ("🇫🇷", "w")]
    rows += [("\u1112\u1161\u11ab", "v"), ("\u0915\u093e", "u")]  # 한 as jamo, का: two cells
    shown = columns(rows).splitlines()
    starts = [cells(line[: line.index(end)]) for line, end in zip(shown, "xyzwvu", strict=True)]
    assert starts == [8] * 6


def test_a_cut_never_splits_a_character_and_never_touches_a_name() -> None:
    rows = [("NAME", "NOTE"), ("some-long-name", "🇫🇷🇩🇪👍🏽 and more")]
    assert columns(rows, width=22).splitlines() == [
        "NAME            NOTE",
        "some-long-name  🇫🇷🇩🇪…",
    ]
    assert columns(rows, width=23).splitlines()[1] == "some-long-name  🇫🇷🇩🇪👍🏽…"
    assert columns(rows, width=10).splitlines()[1].startswith("some-long-name  ")
    jamo = [("NAME", "NOTE"), ("n", "ab" + "\u1112\u1161\u11ab" * 3)]  # 한한한 as jamo
    assert columns(jamo, width=11).splitlines()[1] == "n     ab\u1112\u1161\u11ab…"

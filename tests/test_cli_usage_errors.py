"""Every usage error of ``hermes`` reads alike (docs/cli.md): the command's usage line, the
``Try 'hermes ... --help' for help.`` hint, then ``Error: ...``, exit status 2, a real process
each. Click raises an option missing its value, an option given a value it does not take and
an argument's wrong count without saying which command they belong to; hermes finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

CASES = [
    (["run", "-m"], "hermes run", "Option '-m' requires an argument."),
    (["run", "hello", "--model"], "hermes run", "Option '--model' requires an argument."),
    (["--config"], "hermes", "Option '--config' requires an argument."),
    (
        ["tools", "list", "--json=yes"],
        "hermes tools list",
        "Option '--json' does not take a value.",
    ),
    (["sessions", "list", "--limit"], "hermes sessions list", "requires an argument."),
    (["run", "--bogus"], "hermes run", "No such option '--bogus'."),
]


@pytest.mark.parametrize(("args", "command", "error"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_usage_error_shows_the_usage_line_and_the_help_hint(
    tmp_path: Path, args: list[str], command: str, error: str
) -> None:
    done = HermesCli(tmp_path).run(*args, ok=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"Usage: {command} "), done.stderr
    assert f"Try '{command} --help' for help." in done.stderr
    assert error in done.stderr.splitlines()[-1]

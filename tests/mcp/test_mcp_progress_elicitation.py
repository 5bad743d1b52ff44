"""An upstream MCP server's progress notifications and elicitation forms reach the person at
``hermes tools call``: a progress line on the terminal, the form asked field by field, and a
clear refusal (naming the server) when nobody can answer. The upstream server is the real child
``servers/asking.py``; the terminal is a real pty (pexpect)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from hermes_core.testing import HermesCli

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

ASKING = Path(__file__).resolve().parent / "servers" / "asking.py"


@pytest.fixture
def cli(tmp_path: Path) -> HermesCli:
    hermes = HermesCli(tmp_path, config_file=tmp_path / "config.yaml")
    config = {
        "plugins": {"enabled": ["approvals", "files", "terminal", "code_execution"]},
        "mcp_servers": {"asking": {"command": sys.executable, "args": [str(ASKING)]}},
    }
    hermes.config.write_text(json.dumps(config), encoding="utf-8")
    return hermes


def spawn(cli: HermesCli, *args: str) -> pexpect.spawn:
    command = cli.command(*args)
    return pexpect.spawn(
        command[0],
        command[1:],
        cwd=str(cli.work),
        env=cli.variables(TERM="dumb", COLUMNS="120"),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    return str(child.before)


def test_a_progress_line_shows_the_upstream_servers_progress_on_the_terminal(
    cli: HermesCli,
) -> None:
    child = spawn(cli, "tools", "call", "mcp__asking__count", '{"steps": 4}')
    child.expect("step 4 of 4")
    rest = finish(child)
    assert "counted 4" in rest
    assert child.exitstatus == 0


def test_without_a_terminal_no_progress_is_written_and_the_result_is_plain(
    cli: HermesCli,
) -> None:
    done = cli.run("tools", "call", "mcp__asking__count", '{"steps": 3}')
    assert "counted 3" in done.stdout
    assert "step" not in done.stderr  # stderr of a script stays for errors


def test_the_terminal_answers_an_upstream_form_field_by_field_with_defaults_and_enums(
    cli: HermesCli,
) -> None:
    child = spawn(cli, "tools", "call", "mcp__asking__ask", '{"question": "Who is there?"}')
    child.expect("MCP server 'asking' asks")
    child.expect("Who is there\\?")
    child.expect("\\[a\\]nswer, \\[d\\]ecline, \\[c\\]ancel")
    child.sendline("a")
    child.expect("Your name.*\\[Ada\\]")
    child.sendline("Grace")
    child.expect("Favourite color.*red, green, blue.*\\[green\\]")
    child.sendline("purple")  # not one of the choices: asked again
    child.expect("one of: red, green, blue")
    child.sendline("")  # the default
    child.expect("Sure\\?")
    child.sendline("y")
    rest = finish(child)
    assert 'accept {"color": "green", "name": "Grace", "sure": true}' in rest
    assert child.exitstatus == 0


def test_a_field_asking_for_a_password_is_read_without_echo(cli: HermesCli) -> None:
    child = spawn(cli, "tools", "call", "mcp__asking__ask_secret", "{}")
    child.expect("\\[a\\]nswer, \\[d\\]ecline, \\[c\\]ancel")
    child.sendline("a")
    child.expect("looks like a secret: it is not echoed")
    child.expect("Password: ")
    child.sendline("hunter2-sesame")
    rest = finish(child)
    assert "got 14 characters" in rest
    assert "hunter2-sesame" not in rest


def test_a_declined_form_reaches_the_upstream_server_as_decline(cli: HermesCli) -> None:
    child = spawn(cli, "tools", "call", "mcp__asking__ask", "{}")
    child.expect("\\[a\\]nswer, \\[d\\]ecline, \\[c\\]ancel")
    child.sendline("d")
    assert "decline" in finish(child)


def test_without_a_terminal_hermes_does_not_claim_it_can_answer_forms(cli: HermesCli) -> None:
    # Nobody can answer on a pipe: hermes does not declare the elicitation capability, so the
    # upstream server knows at once (and here says so) instead of waiting on a form.
    done = cli.run("tools", "call", "mcp__asking__ask", "{}", ok=False)
    assert "the client declared no elicitation capability" in done.stdout + done.stderr

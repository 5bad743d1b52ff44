"""``hermes sessions show``, ``delete`` and ``rename`` naming a conversation by its title (the
rule ``--resume`` follows), and a title cleared (``rename --clear``, ``/title --clear``). Real
transcripts in a temporary home, ``hermes`` run in this process and on a pseudo-terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from agent.test_cli_sessions import spawned, write
from hermes_core.testing import FakeModelServer, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def titles(path: Path) -> list[object]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [r.get("title") for r in map(json.loads, lines) if r["type"] == "title"]


def listed_title(cli: InProcessCli, session: str) -> object:
    found = json.loads(cli.run("sessions", "list", "--json").stdout)
    return next(one["title"] for one in found if one["id"] == session)


def test_show_rename_and_delete_take_a_title_naming_one_conversation(
    hermes_cli: InProcessCli,
) -> None:
    path = write(hermes_cli, "aaa111", "about the taxes", "ok")
    write(hermes_cli, "bbb222", "about the garden", "ok")
    hermes_cli.run("sessions", "rename", "aaa111", "Tax return")
    shown = hermes_cli.run("sessions", "show", "Tax return").stdout
    assert shown.startswith('conversation aaa111 "Tax return"')
    assert "you> about the taxes" in shown
    renamed = hermes_cli.run("sessions", "rename", "Tax return", "Taxes 2026")
    assert renamed.stdout == 'aaa111 is now titled "Taxes 2026"\n'
    assert titles(path) == ["Tax return", "Taxes 2026"]
    deleted = hermes_cli.run("sessions", "delete", "Taxes 2026", "--yes")
    assert "deleted aaa111" in deleted.stdout
    assert not path.exists()
    assert (hermes_cli.home / "sessions" / "bbb222.jsonl").exists()


def test_a_title_several_conversations_share_is_refused_listing_their_ids(
    hermes_cli: InProcessCli,
) -> None:
    first = write(hermes_cli, "aaa111", "one", "ok")
    second = write(hermes_cli, "bbb222", "two", "ok")
    for session in ("aaa111", "bbb222"):
        hermes_cli.run("sessions", "rename", session, "Shared")
    for command in (["show"], ["rename", "Shared", "New"], ["delete", "--yes"]):
        done = hermes_cli.run("sessions", *command[:1], "Shared", *command[2:], ok=False)
        assert done.returncode == 2, command
        [line] = done.stderr.splitlines()
        assert '2 conversations are titled "Shared" (' in line, line
        assert "aaa111, bbb222" in line or "bbb222, aaa111" in line, line
        assert "give the id of the one meant" in line, line
    assert first.exists()
    assert second.exists()
    assert titles(first) == titles(second) == ["Shared"]


def test_an_id_wins_over_a_title_and_a_title_over_an_id_s_start_said_so(
    hermes_cli: InProcessCli,
) -> None:
    write(hermes_cli, "abc111", "by its id", "ok")
    write(hermes_cli, "ddd222", "by its title", "ok")
    hermes_cli.run("sessions", "rename", "ddd222", "abc")
    done = hermes_cli.run("sessions", "show", "abc")
    assert done.stdout.startswith('conversation ddd222 "abc"')
    assert "hermes: abc is also the start of the id abc111 (give it whole to take that one)" in (
        done.stderr
    )
    hermes_cli.run("sessions", "rename", "abc111", "ddd222")
    assert hermes_cli.run("sessions", "show", "ddd222").stdout.startswith("conversation ddd222")


def test_delete_of_a_title_at_a_terminal_asks_first(hermes_cli: InProcessCli) -> None:
    path = write(hermes_cli, "aaa111", "keep me unless I say so")
    hermes_cli.run("sessions", "rename", "aaa111", "Keep")
    refused = spawned(hermes_cli, "sessions", "delete", "Keep")
    refused.expect_exact("Delete 1 conversation (aaa111)? [y/N]")
    refused.sendline("n")
    refused.expect(pexpect.EOF)
    refused.close()
    assert refused.exitstatus == 1
    assert path.exists()


def test_rename_clear_takes_the_title_away(hermes_cli: InProcessCli) -> None:
    path = write(hermes_cli, "aaa111", "hello", "ok")
    hermes_cli.run("sessions", "rename", "aaa111", "Groceries")
    done = hermes_cli.run("sessions", "rename", "aaa111", "--clear")
    assert done.stdout == 'aaa111 is no longer titled "Groceries"\n'
    assert titles(path) == ["Groceries", None]
    assert listed_title(hermes_cli, "aaa111") is None
    assert hermes_cli.run("sessions", "show", "aaa111").stdout.startswith("conversation aaa111 (")
    again = hermes_cli.run("sessions", "rename", "aaa111", "--clear")
    assert again.stdout == "aaa111 has no title: nothing changed\n"
    assert titles(path) == ["Groceries", None]
    hermes_cli.run("sessions", "rename", "aaa111", "Later")
    assert listed_title(hermes_cli, "aaa111") == "Later"


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        (["aaa111"], "give a TITLE, or --clear to take the title away"),
        (["aaa111", "Name", "--clear"], "a TITLE or --clear, not both"),
    ],
)
def test_rename_needs_a_title_or_clear_not_both(
    hermes_cli: InProcessCli, arguments: list[str], why: str
) -> None:
    path = write(hermes_cli, "aaa111", "hello", "ok")
    before = path.read_bytes()
    done = hermes_cli.run("sessions", "rename", *arguments, ok=False)
    assert done.returncode == 2
    assert why in done.stderr
    assert path.read_bytes() == before


def test_title_clear_in_chat_takes_the_title_away(hermes_cli: InProcessCli) -> None:
    with FakeModelServer(turns=[FakeTurn(text="One.")]) as fake:
        model = {"provider": "openai", "model": "fake-1", "base_url": fake.openai_base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        done = hermes_cli.subprocess_run(
            "chat",
            input="/title --clear\nfirst\n/title Named\n/title --clear\n/title\n",
            env=hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests"),
        )
    assert "hermes: this conversation has no title: nothing changed" in done.stderr
    assert 'hermes: this conversation is no longer titled "Named"' in done.stderr
    assert "hermes: this conversation has no title (/title NAME gives it one)" in done.stderr
    [path] = (hermes_cli.home / "sessions").glob("*.jsonl")
    assert titles(path) == ["Named", None]

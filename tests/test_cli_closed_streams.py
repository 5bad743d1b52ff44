"""``hermes`` started with standard output or error closed (``>&-``, ``2>&-``), a real process
each: what it answers cannot be shown, so it ends as with a pipe whose reader has gone (exit 1,
no traceback), the same for every command; ``hermes run`` and ``hermes chat`` say so and ask no
model (its answer would be lost); with standard error closed its warnings are lost and the
answer still shown."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

COMMANDS = [["run", "hello"], ["tools", "list"], ["sessions", "list", "--all"], ["doctor"]]


class Served:
    """A home whose ``model`` section is the ``openai`` provider at ``server``."""

    def __init__(self, cli: HermesCli, server: FakeModelServer) -> None:
        self.cli = cli
        self.server = server
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        self.env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")

    def closed(
        self, redirect: str, *args: str, typed: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``hermes *args REDIRECT`` through ``sh`` (``>&-``: no descriptor 1 at all), ``typed``
        on its stdin when given."""
        self.server.add(FakeTurn(text="Hi."))
        return subprocess.run(
            ["sh", "-c", f'exec "$@" {redirect}', "sh", *self.cli.command(*args)],
            cwd=self.cli.work,
            env=self.env,
            input=typed,
            capture_output=True,
            timeout=120,
            check=False,
        )

    def converse(self) -> None:
        """One ``hermes run`` shown, so ``hermes sessions list`` has a line to print."""
        self.server.add(FakeTurn(text="Hi."))
        done = subprocess.run(
            self.cli.command("run", "hello"),
            cwd=self.cli.work,
            env=self.env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()

    def into_a_closed_pipe(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """``hermes *args | head -c 0``: standard output a pipe whose reader has gone."""
        self.server.add(FakeTurn(text="Hi."))
        reader, writer = os.pipe()
        os.close(reader)
        try:
            return subprocess.run(
                self.cli.command(*args),
                cwd=self.cli.work,
                env=self.env,
                stdout=writer,
                stderr=subprocess.PIPE,
                timeout=120,
                check=False,
            )
        finally:
            os.close(writer)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with FakeModelServer() as server:
        yield Served(HermesCli(tmp_path), server)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_stdout_closed_ends_as_a_closed_pipe_does(served: Served, args: list[str]) -> None:
    served.converse()
    closed = served.closed(">&-", *args)
    piped = served.into_a_closed_pipe(*args)
    assert "Traceback" not in closed.stderr.decode(), closed.stderr.decode()
    assert piped.returncode == 1, piped.stderr.decode()
    assert closed.returncode == piped.returncode, closed.stderr.decode()


@pytest.mark.parametrize("args", [["run", "hello"], ["run", "--json", "hello"], ["chat"]])
def test_a_turn_with_stdout_closed_is_refused_before_the_model_is_asked(
    served: Served, args: list[str]
) -> None:
    # It ran the turn, a paid model request whose answer nobody could read, then exited 1.
    done = served.closed(">&-", *args, typed=b"hello\n" if args == ["chat"] else None)
    said = done.stderr.decode()
    assert done.returncode == 1, said
    assert said == (
        f"hermes: error: {args[0]}: standard output is closed (>&-): the answer would be lost, "
        "so no model is asked; give it one (> FILE, or > /dev/null to keep the transcript only)\n"
    )
    assert served.server.requests == []


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_stderr_closed_still_shows_the_answer(served: Served, args: list[str]) -> None:
    done = served.closed("2>&-", *args)
    assert done.returncode == 0
    if args[0] == "run":
        assert done.stdout == b"Hi.\n"
    elif args[0] != "sessions":  # this home has no conversation: said on stderr alone
        assert done.stdout.strip()

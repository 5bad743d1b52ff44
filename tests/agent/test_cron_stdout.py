"""A ``stdout`` delivery (docs/automation.md) is the model's answer, which a page or a tool's
result may have led it to write: on a terminal (``hermes cron run`` by hand, ``hermes cron
daemon`` in the foreground) its control characters are shown escaped, as ``hermes run`` shows
an answer (docs/security.md), so an OSC 52 sequence cannot write the clipboard nor a CSI one
clear the screen; through a pipe or into the journal it is the answer, exact.

Real ``hermes`` processes on a pseudo-terminal, the test kit's ``FakeModelServer`` as the model."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time

import pytest
from terminal_runs import run_on_terminal

from hermes_core.agent import CronJobs
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

HOSTILE = "up \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\rdone"


def stdout_job(cli: HermesCli, server: FakeModelServer) -> str:
    model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
    cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
    (cli.home / ".env").write_text("OPENAI_API_KEY=sk-fake-key-for-tests\n", encoding="utf-8")
    cli.run("cron", "create", "every 1h", "Is it up?", "--deliver", "stdout")
    (job,) = CronJobs(cli.home).jobs()
    return job.id


def test_a_stdout_delivery_on_a_terminal_shows_the_answers_control_characters_escaped(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(text=HOSTILE)]) as server:
        job = stdout_job(hermes_cli, server)
        seen, _ = run_on_terminal(hermes_cli, "cron", "run", job)

    assert "up \\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\rdone" in seen
    assert "\x1b]52" not in seen
    assert "\x1b[2J" not in seen


def test_a_stdout_delivery_into_a_pipe_is_the_answer_exact(hermes_cli: HermesCli) -> None:
    with FakeModelServer([FakeTurn(text=HOSTILE)]) as server:
        job = stdout_job(hermes_cli, server)
        printed = hermes_cli.run("cron", "run", job).stdout

    assert HOSTILE.replace("\r", "\n") + "\n" in printed  # text mode reads a lone \r as \n


def test_a_runs_detail_on_a_terminal_shows_the_providers_error_text_escaped(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(error=400, error_message=HOSTILE)]) as server:
        job = stdout_job(hermes_cli, server)
        seen, _ = run_on_terminal(hermes_cli, "cron", "run", job)

    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J" in seen
    assert "\x1b]52" not in seen
    assert "\x1b[2J" not in seen


def test_the_daemons_log_on_a_terminal_shows_a_runs_detail_escaped(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(error=400, error_message=HOSTILE)]) as server:
        job = stdout_job(hermes_cli, server)
        CronJobs(hermes_cli.home).trigger(job)
        controller, terminal = pty.openpty()
        daemon = subprocess.Popen(
            hermes_cli.command("cron", "daemon"),
            cwd=hermes_cli.work,
            env=hermes_cli.variables(TERM="xterm"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=terminal,
        )
        os.close(terminal)
        seen = b""
        give_up = time.monotonic() + 120  # a guard against a hang, not a performance check
        try:
            while b": failed: " not in seen.split(b"run 1")[-1] and time.monotonic() < give_up:
                if select.select([controller], [], [], 0.2)[0]:
                    seen += os.read(controller, 4096)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=30)
            os.close(controller)

    shown = seen.decode(errors="replace")
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J" in shown, shown
    assert "\x1b]52" not in shown
    assert "\x1b[2J" not in shown

"""``hermes serve`` (stdio) started by hand on a terminal says in one line on stderr that it waits
for an MCP client; started by a client, with pipes, it says nothing of the kind."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pexpect
import pytest

from hermes_core._cli.serve_cmd import WAITING_ON_A_TERMINAL
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    }
)


def _text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def test_serve_on_a_terminal_says_on_stderr_that_it_waits_for_an_mcp_client(
    hermes_cli: HermesCli,
) -> None:
    stderr = hermes_cli.root / "stderr.txt"
    # stdin and stdout are the pty; stderr goes to a file, to tell the two apart.
    command = f"exec {shlex.join(hermes_cli.command('serve'))} 2>{shlex.quote(str(stderr))}"
    child = pexpect.spawn(
        "bash",
        ["-c", command],
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=60,
    )
    try:
        # Wait for the line (a guard against a hang, not a timing check), then end serve as a
        # person would: Ctrl-D, end of input on the terminal.
        give_up = time.monotonic() + 60
        while WAITING_ON_A_TERMINAL not in _text(stderr) and time.monotonic() < give_up:
            assert child.isalive(), _text(stderr)
            time.sleep(0.05)
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    lines = stderr.read_text().splitlines()
    assert lines.count(WAITING_ON_A_TERMINAL) == 1, lines
    assert "waiting for an MCP client on stdin" in WAITING_ON_A_TERMINAL
    assert "docs/mcp.md" in WAITING_ON_A_TERMINAL
    assert "waiting" not in (child.before or ""), "the line went to stdout, the protocol stream"
    assert child.exitstatus == 0, child.before


def test_serve_with_stdin_a_pipe_prints_no_waiting_line(hermes_cli: HermesCli) -> None:
    with hermes_cli.start("serve", stdin=subprocess.PIPE) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        _, stderr = process.communicate(timeout=60)
    assert "result" in answer, answer
    assert process.returncode == 0, stderr
    assert "waiting for an MCP client" not in stderr


@pytest.mark.parametrize(
    "option", [["--port", "9999"], ["--host", "0.0.0.0"], ["--no-auth"], ["--allow-host", "x"]]
)
def test_an_http_option_without_transport_http_is_a_usage_error(
    hermes_cli: HermesCli, option: list[str]
) -> None:
    """``hermes serve --port 9999`` means HTTP: serving stdio instead, silently, leaves the user
    waiting for a port nobody listens on."""
    result = hermes_cli.run("serve", *option, ok=False)  # stdin is empty: stdio would end
    assert result.returncode == 2, result
    assert option[0] in result.stderr
    assert "--transport http" in result.stderr

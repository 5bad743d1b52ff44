"""The conformance suite's server scenarios against a real ``hermes serve --transport http``:
initialize, ping, tools (list, simple text, error, progress) and DNS-rebinding protection.

The tools the scenarios call come from an ordinary directory plugin (``conformance_tools/``,
copied into the served home): ``test_tool_with_progress`` reports with ``report_progress``, so
the progress scenario goes through hermes' real progress path. ``tools-call-elicitation`` is not
run: a 2025-era client (the suite's) over ``hermes serve``'s stateless HTTP cannot be sent a
request (its answer would arrive as an unrelated request), so serve forwards questions to
stdio clients and to 2026-07-28 clients only (tests/serve/test_serve_progress.py)."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance_runner import run_server_scenario

from hermes_core.testing import HermesCli

PLUGIN = Path(__file__).resolve().parent / "conformance_tools"
BUNDLED = ["approvals", "bm25", "code_execution", "files", "skills", "terminal", "todo"]
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "tools-call-with-progress",
    "dns-rebinding-protection",
]


def _url_from_stderr(process: subprocess.Popen[bytes], limit: float) -> str:
    assert process.stderr is not None
    seen = b""
    give_up = time.monotonic() + limit
    while time.monotonic() < give_up and process.poll() is None:
        ready, _, _ = select.select([process.stderr], [], [], 0.1)
        if ready:
            seen += os.read(process.stderr.fileno(), 4096)
            for line in seen.decode(errors="replace").splitlines():
                if "listening on " in line:
                    return line.split("listening on ", 1)[1].split()[0]
    pytest.fail(f"hermes serve printed no URL; stderr:\n{seen.decode(errors='replace')}")


@pytest.fixture(scope="module")
def served_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``hermes serve --transport http --no-auth`` on a free port, with the plugin enabled."""
    root = tmp_path_factory.mktemp("serve")
    cli = HermesCli(root, config_file=root / "config.yaml")
    shutil.copytree(PLUGIN, cli.home / "plugins" / "conformance_tools")
    config = {"plugins": {"enabled": [*BUNDLED, "conformance_tools"]}}
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    process = subprocess.Popen(
        cli.command("serve", "--transport", "http", "--port", "0", "--no-auth"),
        env=cli.variables(),
        cwd=cli.work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield _url_from_stderr(process, limit=60)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_hermes_serve_passes_the_server_scenario(
    served_url: str, scenario: str, tmp_path: Path
) -> None:
    run = run_server_scenario(scenario, served_url, tmp_path / "results")
    assert run.checks, run.explain()
    assert not run.failures, run.explain()

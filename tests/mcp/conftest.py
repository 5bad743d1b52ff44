"""Fixtures for the MCP tests: a temporary home, and the toolbox server over streamable HTTP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from realservers import TOOLBOX, HttpServer, start_listening

from hermes_core._paths import Environment


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    """A temporary home, working directory, log and cache directory; strict plugins as in
    nox."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    return Environment(
        home=home,
        cwd=work,
        variables={
            "HERMES_STRICT_PLUGINS": "1",
            "HERMES_LOG_DIR": str(tmp_path / "logs"),
            "HERMES_CACHE_DIR": str(tmp_path / "cache"),
        },
    )


@pytest.fixture
def http_toolbox() -> Iterator[HttpServer]:
    """``toolbox.py`` serving streamable HTTP on 127.0.0.1 as a child process."""
    process, port = start_listening(
        lambda port: [sys.executable, str(TOOLBOX), "--http", str(port)], "the HTTP toolbox server"
    )
    try:
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

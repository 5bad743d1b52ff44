"""The MCP conformance suite (``@modelcontextprotocol/conformance``) run as a real Node program
against hermes: client scenarios start the suite's own test server and run a hermes client
command against it; server scenarios drive a running ``hermes serve`` over HTTP.

``nox -s conformance`` installs the suite and the Node 22 it needs into ``.cache/conformance``
with npm; a run without them fails and says so."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = REPO_ROOT / ".cache" / "conformance"
BIN_DIR = PREFIX / "node_modules" / ".bin"
SUITE_VERSION = "0.1.16"
NODE_VERSION = "22"
INSTALL = (
    f"npm install --prefix .cache/conformance node@{NODE_VERSION} "
    f"@modelcontextprotocol/conformance@{SUITE_VERSION} (in the repository root; "
    "`nox -s conformance` does it)"
)
SPEC_VERSION = "2025-11-25"


@dataclass(frozen=True)
class Check:
    """One conformance check of a scenario."""

    id: str
    name: str
    status: str
    description: str
    error: str | None

    @property
    def passed(self) -> bool:
        return self.status == "SUCCESS"


@dataclass(frozen=True)
class ScenarioRun:
    """What one scenario run left: its checks, the suite's output and the client's."""

    scenario: str
    returncode: int
    checks: tuple[Check, ...]
    output: str
    client_stdout: str = ""
    client_stderr: str = ""

    @property
    def failures(self) -> list[Check]:
        """The checks that did not pass (warnings and skips are not failures)."""
        return [check for check in self.checks if check.status == "FAILURE"]

    def explain(self) -> str:
        """A readable account for an assertion message."""
        lines = [f"scenario {self.scenario}: exit {self.returncode}"]
        lines += [
            f"  {check.status:8} {check.id}: {check.description}"
            + (f" ({check.error})" if check.error else "")
            for check in self.checks
        ]
        if self.client_stderr:
            lines += ["client stderr (last 40 lines):", *self.client_stderr.splitlines()[-40:]]
        if not self.checks:
            lines += ["suite output (last 40 lines):", *self.output.splitlines()[-40:]]
        return "\n".join(lines)


def conformance_bin() -> Path:
    """The suite's command; fails the test with how to install it when it is missing."""
    program = BIN_DIR / "conformance"
    node = BIN_DIR / "node"
    if not program.exists() or not node.exists():
        pytest.fail(f"the MCP conformance suite is not installed: {INSTALL}", pytrace=False)
    return program


def _environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra or {})
    return env


def _read_checks(results: Path) -> tuple[tuple[Check, ...], str, str]:
    """The checks the suite saved under ``results`` and, for a client scenario, the client's
    stdout and stderr it captured."""
    checks: list[Check] = []
    captured = {"stdout.txt": "", "stderr.txt": ""}
    for found in sorted(results.rglob("checks.json")):  # auth/NAME nests a level
        data: list[dict[str, Any]] = json.loads(found.read_text(encoding="utf-8"))
        checks += [
            Check(
                id=str(item.get("id", "")),
                name=str(item.get("name", "")),
                status=str(item.get("status", "")),
                description=str(item.get("description", "")),
                error=item.get("errorMessage") or None,
            )
            for item in data
        ]
        for name in captured:
            path = found.parent / name
            if path.exists():
                captured[name] += path.read_text(encoding="utf-8", errors="replace")
    return tuple(checks), captured["stdout.txt"], captured["stderr.txt"]


def run_client_scenario(
    scenario: str,
    command: Sequence[str],
    results: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> ScenarioRun:
    """Run client ``scenario``: the suite starts its test server and runs ``command`` with the
    server's URL appended (``MCP_CONFORMANCE_SCENARIO`` / ``MCP_CONFORMANCE_CONTEXT`` set)."""
    program = conformance_bin()
    completed = subprocess.run(
        [
            str(program),
            "client",
            "--command",
            shlex.join(command),
            "--scenario",
            scenario,
            "--timeout",
            str(int(timeout * 1000 * 0.8)),
            "-o",
            str(results),
        ],
        capture_output=True,
        text=True,
        env=_environment(env),
        timeout=timeout,
        check=False,
    )
    checks, stdout, stderr = _read_checks(results)
    return ScenarioRun(
        scenario,
        completed.returncode,
        checks,
        completed.stdout + completed.stderr,
        stdout,
        stderr,
    )


def run_server_scenario(
    scenario: str, url: str, results: Path, *, timeout: float = 120.0
) -> ScenarioRun:
    """Run server ``scenario`` against the MCP endpoint ``url``."""
    program = conformance_bin()
    completed = subprocess.run(
        [str(program), "server", "--url", url, "--scenario", scenario, "-o", str(results)],
        capture_output=True,
        text=True,
        env=_environment(None),
        timeout=timeout,
        check=False,
    )
    checks, _, _ = _read_checks(results)
    return ScenarioRun(scenario, completed.returncode, checks, completed.stdout + completed.stderr)


def listed_scenarios(kind: str, suite_filter: str = "") -> list[str]:
    """The scenario names the installed suite lists for ``kind`` (``client`` or ``server``) at
    :data:`SPEC_VERSION`, those starting with ``suite_filter``."""
    program = conformance_bin()
    completed = subprocess.run(
        [str(program), "list", f"--{kind}", "--spec-version", SPEC_VERSION],
        capture_output=True,
        text=True,
        env=_environment(None),
        timeout=60,
        check=True,
    )
    names = []
    for line in completed.stdout.splitlines():
        line = line.strip()
        if line.startswith("- "):
            name = line[2:].split(" ", 1)[0]
            if name.startswith(suite_filter):
                names.append(name)
    return names

"""The ``auth/*`` client scenarios of the conformance suite (spec 2025-11-25) against hermes'
real client path (``auth_client.py``: ``hermes mcp login``, then real commands that connect,
list and call)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conformance_runner import listed_scenarios, run_client_scenario

AUTH_CLIENT = Path(__file__).parent / "auth_client.py"


def _auth_scenarios() -> list[str]:
    try:
        return listed_scenarios("client", "auth/")
    except BaseException:  # not installed: the one test below fails and says how to install
        return ["auth/(suite not installed)"]


@pytest.mark.parametrize("scenario", _auth_scenarios())
def test_auth_scenario_passes(scenario: str, tmp_path: Path) -> None:
    run = run_client_scenario(scenario, [sys.executable, str(AUTH_CLIENT)], tmp_path / "results")
    assert run.checks, run.explain()
    assert not run.failures, run.explain()

"""The conformance client scenario ``elicitation-sep1034-client-defaults`` with hermes' real
client path (``elicitation_client.py``: ``hermes tools call`` on a pseudo-terminal, the suite's
form answered through hermes' terminal form, every field left at its default)."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance_runner import run_client_scenario

CLIENT = Path(__file__).resolve().parent / "elicitation_client.py"


def test_hermes_applies_the_defaults_of_an_elicitation_form(tmp_path: Path) -> None:
    run = run_client_scenario(
        "elicitation-sep1034-client-defaults",
        [sys.executable, str(CLIENT)],
        tmp_path / "results",
    )
    passed = {check.id for check in run.checks if check.passed}
    expected = {
        f"client-elicitation-sep1034-{kind}-default"
        for kind in ("string", "integer", "number", "enum", "boolean")
    }
    assert expected <= passed, run.explain()
    assert not run.failures, run.explain()

"""benchmarks/session_search.py and session_search_typos.py keep working: run as their
docstrings say, over a small corpus, they print their figures. No timing is asserted (figures
are in docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "session_search.py"


@pytest.mark.slow
def test_the_benchmark_runs_and_prints_its_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sessions", "40", "--rounds", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| search (rank, snippets) |" in done.stdout
    assert "| a full look at every transcript |" in done.stdout


@pytest.mark.slow
def test_the_typos_benchmark_runs_and_finds_no_correction_changed_against_itself(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "session_search_typos.py"),
            *("--before", "HEAD", "--count", "60", "--sessions", "40", "--vocabulary", "3000"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "60 words," in done.stdout
    assert ", 0 corrected differently" in done.stdout
    assert "p99: HEAD " in done.stdout

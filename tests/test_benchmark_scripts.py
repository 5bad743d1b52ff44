"""Benchmark scripts keep working: each run as its docstring says, on a small case, does its
work and prints its table. No timing is asserted (figures are in docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("script", "arguments", "printed"),
    [
        (
            "sessions_list.py",
            ["--sessions", "12", "--messages", "4", "--rounds", "1"],
            ["listed: 12 conversations of 4 messages", "| hermes sessions list --all --json |"],
        ),
        (
            "skills_scan.py",
            ["--skills", "6", "--categories", "2", "--rounds", "1"],
            [
                "loaded: 6 flat, 6 in categories",
                "| flat: skills_state |",
                "| categories: first scan (load_skills) |",
            ],
        ),
        (
            "files_credentials.py",
            ["--files", "300", "--projects", "0", "2", "--repeat", "1"],
            ["| projects | credential paths | walk of 300 files | walk and check |", "| 2 | 16 |"],
        ),
        (
            "doctor_offline.py",
            ["--repeat", "1"],
            ["| doctor --offline |", "| config validate |"],
        ),
    ],
)
def test_the_benchmark_does_its_work_and_prints_its_table(
    tmp_path: Path, script: str, arguments: list[str], printed: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *arguments],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for line in printed:
        assert line in done.stdout

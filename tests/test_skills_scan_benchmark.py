"""benchmarks/skills_scan.py keeps working: run as its docstring says, over a few skills, it
loads them in both layouts and prints its table. No timing is asserted (figures are in
docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "skills_scan.py"


def test_the_benchmark_loads_both_layouts_and_prints_its_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--skills", "6", "--categories", "2", "--rounds", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "loaded: 6 flat, 6 in categories" in done.stdout
    assert "| flat: skills_state |" in done.stdout
    assert "| categories: first scan (load_skills) |" in done.stdout

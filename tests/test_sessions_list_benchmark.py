"""benchmarks/sessions_list.py keeps working: run as its docstring says, over a few
transcripts, it lists them and prints its table. No timing is asserted (figures are in
docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "sessions_list.py"


def test_the_benchmark_lists_its_conversations_and_prints_its_table(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sessions", "12", "--messages", "4", "--rounds", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "listed: 12 conversations of 4 messages" in done.stdout
    assert "| hermes sessions list --all --json |" in done.stdout

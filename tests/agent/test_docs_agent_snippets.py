"""docs/agent.md's "Testing tools in a loop" example runs as it is written, in a fresh
interpreter with a scratch ``HERMES_HOME``, and its tool answers (the fake model is scripted to
call it, then to answer)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agent.md"


def _example(heading: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, f"no python example under '## {heading}' in {DOCS}"
    return found.group(1)


@pytest.mark.subprocess
def test_the_testing_tools_in_a_loop_example_runs_and_its_tool_answers(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example("Testing tools in a loop"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HERMES_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ToolFinished HI" in done.stdout
    assert done.stdout.rstrip().endswith("Finished Done.")

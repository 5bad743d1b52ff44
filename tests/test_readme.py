"""The README's embedding example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_embedding_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README.md has no python example"
    variables = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    variables.update(
        HERMES_HOME=str(tmp_path / "home"),
        HERMES_LOG_DIR=str(tmp_path / "logs"),
        HERMES_CACHE_DIR=str(tmp_path / "cache"),
    )
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        capture_output=True,
        text=True,
        env=variables,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    tier, _, answer = done.stdout.partition(" ")
    assert tier in {"0", "1", "2"}
    assert '"queries":["current time"]' in answer

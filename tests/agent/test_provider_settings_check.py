"""``hermes config validate`` reports the model settings the provider's build refuses, with the
build's own message naming the key, without importing the vendor's SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing._cli_in_process import InProcessCli

TOO_SMALL = {
    "provider": "anthropic",
    "model": "m",
    "base_url": "http://127.0.0.1:9",
    "reasoning_effort": "medium",
    "max_output_tokens": 4096,
}


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _write(cli: InProcessCli, model: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")


def test_validate_reports_what_the_build_refuses_in_its_words(hermes_cli: InProcessCli) -> None:
    """validate said ok, and the first `hermes run` failed on the same file."""
    _write(hermes_cli, TOO_SMALL)
    env = hermes_cli.variables(ANTHROPIC_API_KEY="sk-test")
    checked = hermes_cli.run("config", "validate", env=env, ok=False)
    ran = hermes_cli.run("run", "Hi", env=env, ok=False)

    assert (checked.returncode, ran.returncode) == (2, 2)
    (line,) = checked.stderr.splitlines()
    assert line.startswith("hermes: error: model.max_output_tokens: ")
    assert line in ran.stderr.splitlines()


def test_validate_passes_a_budget_under_max_output_tokens(hermes_cli: InProcessCli) -> None:
    _write(hermes_cli, {**TOO_SMALL, "max_output_tokens": 16384})
    done = hermes_cli.run("config", "validate")
    assert done.stdout.startswith("ok: ")


def test_validate_imports_no_vendor_sdk(hermes_home: Path, tmp_path: Path) -> None:
    (hermes_home / "config.yaml").write_text(json.dumps({"model": TOO_SMALL}), encoding="utf-8")
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('sdk imported:', 'anthropic' in sys.modules))\n"
        "sys.argv = ['hermes', 'config', 'validate']\n"
        "runpy.run_module('hermes_core', run_name='__main__')\n"
    )
    env = {"HERMES_HOME": str(hermes_home), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    assert "model.max_output_tokens" in done.stderr
    assert done.stdout.strip().endswith("sdk imported: False")

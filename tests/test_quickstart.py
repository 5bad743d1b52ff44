"""The README's first Quickstart command, run as a new user would: in a fresh virtualenv, from
the repository root, installing hermes-core with its example servers from the package index and
searching and calling them through ``examples/quickstart.yaml``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"
QUICKSTART_CONFIG = REPO_ROOT / "examples" / "quickstart.yaml"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
# What a new user's shell would not have: this test run's own interpreter, home and settings.
_NOT_INHERITED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX", "HERMES_")


def quickstart_commands(readme: str) -> list[str]:
    """The fenced blocks under the ``## Quickstart`` heading of ``readme``, one command each."""
    heading = re.search(r"^## Quickstart[^\n]*\n", readme, re.MULTILINE)
    if heading is None:
        raise AssertionError("README.md has no '## Quickstart' section")
    rest = readme[heading.end() :]
    following = re.search(r"^## ", rest, re.MULTILINE)
    section = rest[: following.start()] if following else rest
    return [block.strip() for block in _FENCE.findall(section) if block.strip()]


def test_quickstart_section_is_read_block_by_block() -> None:
    readme = (
        "# hermes\n\n## Quickstart\n\nInstall and try:\n\n```bash\npip install x && hermes y\n```"
        "\n\nThen:\n\n```sh\nnox\n```\n\n## Next\n\n```\nnot this\n```\n"
    )
    assert quickstart_commands(readme) == ["pip install x && hermes y", "nox"]


def test_quickstart_config_names_only_real_example_servers() -> None:
    text = QUICKSTART_CONFIG.read_text(encoding="utf-8")
    assert "mcp_server_time" in text
    assert "mcp_server_git" in text


@pytest.mark.timeout(900)
def test_first_quickstart_command_installs_and_finds_and_calls_the_time_server(
    tmp_path: Path,
) -> None:
    assert README.is_file(), f"{README} is missing"
    commands = quickstart_commands(README.read_text(encoding="utf-8"))
    assert commands, "the Quickstart section has no fenced command"
    first = commands[0]
    assert "examples/quickstart.yaml" in first

    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(environment)
    bin_dir = environment / ("Scripts" if sys.platform == "win32" else "bin")
    variables = {
        key: value for key, value in os.environ.items() if not key.startswith(_NOT_INHERITED)
    }
    variables["PATH"] = os.pathsep.join([str(bin_dir), variables.get("PATH", "/usr/bin:/bin")])
    variables["HERMES_HOME"] = str(tmp_path / "hermes-home")
    variables["HERMES_CACHE_DIR"] = str(tmp_path / "cache")
    variables["HERMES_LOG_DIR"] = str(tmp_path / "logs")
    variables["HERMES_STRICT_PLUGINS"] = "1"
    done = subprocess.run(
        ["bash", "-e", "-c", first],
        cwd=REPO_ROOT,
        env=variables,
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    report = f"command: {first}\nstdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    installed = subprocess.run(
        [str(bin_dir / "python"), "-c", "import hermes_core, mcp_server_time, mcp_server_git"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert "mcp__time__get_current_time" in done.stdout, report
    assert _ISO_TIME.search(done.stdout), report
    assert "UTC" in done.stdout, report

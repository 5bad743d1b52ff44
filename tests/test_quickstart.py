"""The README's first Quickstart command, run exactly as written, as a new user would: with bash,
in a copy of the repository, with a stock ``python3`` first on ``PATH`` (Debian's or Ubuntu's,
which refuses ``pip install`` outside a virtual environment, when the machine has one), no
virtual environment active and an empty ``HERMES_HOME``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"
QUICKSTART_CONFIG = REPO_ROOT / "examples" / "quickstart.yaml"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
# What a new user's shell would not have: this test run's own interpreter, home and settings.
_NOT_INHERITED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX", "HERMES_")
# What a clone does not hold: virtual environments, caches and build output of this checkout.
_NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", ".nox", ".cache", "node_modules", "__pycache__", "*.egg-info", "build",
    "dist", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
)  # fmt: skip
_CHECK_STOCK = (
    "import sys, sysconfig, pathlib; "
    "marker = pathlib.Path(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED'); "
    "print(int(sys.prefix == sys.base_prefix and marker.is_file() and sys.version_info >= (3, 11)))"
)


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


def _path_without_this_environment() -> list[str]:
    """``PATH`` of this process less the ``bin`` directory of the virtual environment (tox, nox
    or the developer's) that runs the tests: a new user has none active."""
    ours = Path(sys.prefix, "bin").resolve() if sys.prefix != sys.base_prefix else None
    entries = os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    return [entry for entry in entries if not (ours and Path(entry).resolve() == ours)]


def _is_stock(python: str) -> bool:
    """Whether ``python`` is a distribution's externally managed interpreter (PEP 668)."""
    done = subprocess.run(
        [python, "-I", "-c", _CHECK_STOCK], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() == "1"


def stock_python3(path: list[str]) -> str:
    """The ``python3`` a new user types: an externally managed one (Debian's, Ubuntu's) found on
    ``path`` or at ``/usr/bin/python3`` when there is one, else the first ``python3`` on
    ``path``."""
    found = [
        str(Path(entry, "python3"))
        for entry in (*path, "/usr/bin")
        if os.access(Path(entry, "python3"), os.X_OK)
    ]
    assert found, f"no python3 on PATH ({os.pathsep.join(path)})"
    return next((python for python in found if _is_stock(python)), found[0])


def copy_of_the_repository(destination: Path) -> Path:
    """The files of this checkout (its working tree, edits included) in ``destination``, as a
    fresh ``git`` repository: what a clone gives, without this checkout's ``.venv``."""
    shutil.copytree(REPO_ROOT, destination, symlinks=True, ignore=_NOT_IN_A_CLONE)
    subprocess.run(["git", "init", "-q", str(destination)], check=True)
    return destination


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.timeout(900)
def test_first_quickstart_command_creates_a_venv_installs_and_finds_and_calls_the_time_server(
    tmp_path: Path,
) -> None:
    assert README.is_file(), f"{README} is missing"
    commands = quickstart_commands(README.read_text(encoding="utf-8"))
    assert commands, "the Quickstart section has no fenced command"
    first = commands[0]
    assert "examples/quickstart.yaml" in first

    repository = copy_of_the_repository(tmp_path / "hermes-core")
    path = _path_without_this_environment()
    python3 = stock_python3(path)
    # The chosen interpreter is the one "python3" names, whatever else is on PATH (pyenv shims).
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").symlink_to(python3)
    variables = {
        key: value for key, value in os.environ.items() if not key.startswith(_NOT_INHERITED)
    }
    variables["PATH"] = os.pathsep.join([str(shims), *path])
    variables["HERMES_HOME"] = str(tmp_path / "hermes-home")
    variables["HERMES_CACHE_DIR"] = str(tmp_path / "cache")
    variables["HERMES_LOG_DIR"] = str(tmp_path / "logs")
    variables["HERMES_STRICT_PLUGINS"] = "1"
    done = subprocess.run(
        ["bash", "-c", first],
        cwd=repository,
        env=variables,
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    report = (
        f"command: {first}\npython3: {python3}\nstdout:\n{done.stdout[-4000:]}\n"
        f"stderr:\n{done.stderr[-4000:]}"
    )
    assert done.returncode == 0, report
    # Everything went into the virtual environment the line made, inside the repository.
    venv_python = repository / ".venv" / "bin" / "python"
    installed = subprocess.run(
        [str(venv_python), "-c", "import hermes_core, mcp_server_time, mcp_server_git"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert "mcp__time__get_current_time" in done.stdout, report
    assert _ISO_TIME.search(done.stdout), report
    assert "UTC" in done.stdout, report

"""Fixtures of the bm25 engine's tests: the eval data in ``../shared/data`` by the checkout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
"""Third-party tool data, read in place (never copied into the repository)."""
PLUGINS = Path(__file__).resolve().parents[2]
"""``plugins_builtin/``."""


@pytest.fixture(scope="session")
def c_kernel_buildable() -> None:
    """Fails a test of the C kernel where the install cannot build it, saying what to install
    (a stock Debian or Ubuntu Python has no headers without ``python3-dev``)."""
    from bm25_modules import KERNEL_BUILDABLE

    if not KERNEL_BUILDABLE:
        pytest.fail(
            "the C kernel cannot be built here: no Python.h or no C compiler; install them "
            "(Debian, Ubuntu: sudo apt-get install python3-dev gcc), then pip install -e . "
            "again (nox reinstalls it on its next run)"
        )


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory; the eval tests need it."""
    assert (DATA / "eval").is_dir(), f"eval data not found at {DATA}"
    return DATA


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    """Take ``plugins_builtin/`` off ``sys.path`` once pytest has put it there.

    ``plugins_builtin/bm25`` is a package under a folder that is not one, so pytest's default
    import mode sets it up by putting ``plugins_builtin/`` first on ``sys.path``; left there,
    the bundled plugins' folders shadow the libraries they are named after (``openai``,
    ``anthropic``) for every later test of the same process.
    """
    try:
        return (yield)
    finally:
        while str(PLUGINS) in sys.path:
            sys.path.remove(str(PLUGINS))

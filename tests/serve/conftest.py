"""Fixtures for the ``hermes serve`` tests: a temporary home with its config file."""

from __future__ import annotations

from pathlib import Path

import pytest
from serving import ServeHome, make_home


@pytest.fixture
def served(tmp_path: Path) -> ServeHome:
    """A temporary home, working directory, cache and log directory for ``hermes serve``."""
    return make_home(tmp_path)

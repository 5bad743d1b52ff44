"""Fixtures of the bm25 engine's tests: the eval data in ``../shared/data`` by the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
"""Third-party tool data, read in place (never copied into the repository)."""


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory; the eval tests need it."""
    assert (DATA / "eval").is_dir(), f"eval data not found at {DATA}"
    return DATA

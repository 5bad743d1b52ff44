"""Fixtures of the hybrid plugin's tests: the installed plugin, and backends over each test's
own cache directory."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from hybrid_fixtures import DISTRIBUTION, build_backend


@pytest.fixture(scope="session", autouse=True)
def installed_plugin() -> metadata.Distribution:
    """The plugin, installed as a user installs it (``nox -s tests`` does)."""
    try:
        return metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pytest.fail(f"{DISTRIBUTION} is not installed: pip install -e plugins/hermes-search-hybrid")


@pytest.fixture
def make_backend(tmp_path: Path) -> Callable[..., Any]:
    """``make(**settings)``: a new hybrid backend over the cache directory of this test."""

    def make(**settings: Any) -> Any:
        return build_backend(tmp_path, settings)

    return make

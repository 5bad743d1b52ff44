"""Fixtures for the ``hermes acp`` tests: an environment with the real bundled plugins."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hermes_core import Environment


@pytest.fixture
def anyio_backend() -> str:
    """The ACP SDK runs on asyncio."""
    return "asyncio"


@pytest.fixture
def acp_env(hermes_env: Environment) -> Environment:
    """``hermes_env`` with the real bundled plugins (files, terminal, approvals, bm25...)."""
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    return replace(hermes_env, variables=variables)

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from hermes_core import Config, Environment, Host
from hermes_core.testing import make_host


@pytest.fixture
def anyio_backend() -> str:
    """The agent runtime runs on asyncio (the SDKs of the model providers do)."""
    return "asyncio"


@pytest.fixture
def bundled_env(hermes_env: Environment) -> Environment:
    """``hermes_env`` with the real bundled plugins (the ``file`` memory provider among them)."""
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    return replace(hermes_env, variables=variables)


@pytest.fixture
def make_memory_host(bundled_env: Environment) -> Iterator[Any]:
    """Hosts over the bundled plugins with a ``config.yaml`` given as a mapping."""
    hosts: list[Host] = []

    def make(config: dict[str, Any] | None = None, **plugins: object) -> Host:
        host = make_host(Config.model_validate(config or {}), bundled_env, plugins=plugins)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()

"""Fixtures of the connector tests: the reference gateway on a real socket on 127.0.0.1, and a
real HTTP server answering off the protocol."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from gateways import Gateway, OffProtocolServer


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    """The reference gateway serving the default fixture (Gmail not connected, Linear
    connected)."""
    with Gateway() as running:
        yield running


@pytest.fixture
def start_gateway() -> Iterator[Callable[[Mapping[str, Any]], Gateway]]:
    """``start(fixture) -> Gateway``: a reference gateway serving that fixture document."""
    running: list[Gateway] = []

    def start(data: Mapping[str, Any]) -> Gateway:
        made = Gateway(data).__enter__()
        running.append(made)
        return made

    yield start
    for made in running:
        made.__exit__()


@pytest.fixture
def off_protocol() -> Iterator[OffProtocolServer]:
    """A real HTTP server on 127.0.0.1 answering what the test tells it to."""
    with OffProtocolServer() as server:
        yield server

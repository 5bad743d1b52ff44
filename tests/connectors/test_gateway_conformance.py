"""The connector gateway conformance rules, run as a gateway author would run them: against the
bundled ``http`` gateway client talking to the reference gateway, which serves the account the
rules expect (``GATEWAY_FIXTURES``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from hermes_core.connectors import ConnectorGateway
from hermes_core.testing import (
    GATEWAY_FIXTURES,
    DevGateway,
    connector_gateway_conformance,
    make_connector_gateway,
    parse_fixtures,
)

_RUNNING: list[DevGateway] = []


def http_gateway_over_the_reference_gateway() -> ConnectorGateway:
    """The ``http`` client of a new reference gateway (a fresh account for each rule)."""
    served = DevGateway(parse_fixtures(GATEWAY_FIXTURES)).start()
    _RUNNING.append(served)
    return make_connector_gateway(served.url, "conformance-token")


@pytest.fixture(autouse=True)
def _stop_the_reference_gateways() -> Iterator[None]:
    yield
    while _RUNNING:
        _RUNNING.pop().close()


@pytest.mark.parametrize(
    "check", connector_gateway_conformance(http_gateway_over_the_reference_gateway)
)
def test_the_http_gateway_and_the_reference_gateway_follow_the_protocol(
    check: Callable[[], None],
) -> None:
    check()


def test_a_gateway_breaking_a_rule_fails_it_saying_what_it_answered() -> None:
    served = DevGateway(parse_fixtures({"connectors": []})).start()
    _RUNNING.append(served)
    empty_account = connector_gateway_conformance(
        lambda: make_connector_gateway(served.url, "conformance-token")
    )
    listing = next(param for param in empty_account if "list-connectors" in param.id)

    with pytest.raises(AssertionError, match=r"^listed \{\}"):
        listing.values[0]()

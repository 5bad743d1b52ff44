"""The Host values HTTP serve answers to, per bind (the whole check runs against a real server in
tests/security/test_serve_auth.py)."""

from __future__ import annotations

import pytest

from hermes_core._serve.http_access import allowed_hosts, transport_security


@pytest.mark.parametrize(
    ("bound", "port", "extra", "expected"),
    [
        pytest.param(
            "127.0.0.2",
            8765,
            (),
            ["127.0.0.2:8765", "127.0.0.1:8765", "localhost:8765", "[::1]:8765"],
            id="loopback-gets-the-loopback-names",
        ),
        pytest.param(
            "::", 8765, (), ["[::]:8765", "127.0.0.1:8765", "localhost:8765", "[::1]:8765"], id="::"
        ),
        pytest.param("192.168.1.5", 8765, (), ["192.168.1.5:8765"], id="lan-address-only"),
        pytest.param(
            "192.168.1.5",
            80,
            ("box.lan",),
            ["192.168.1.5:80", "192.168.1.5", "box.lan:80", "box.lan"],
            id="port-80-may-be-left-out",
        ),
    ],
)
def test_the_allowed_hosts_are_the_bind_its_loopback_names_and_the_allowed_extras(
    bound: str, port: int, extra: tuple[str, ...], expected: list[str]
) -> None:
    assert allowed_hosts(bound, port, extra) == expected


def test_the_allowed_origins_are_the_allowed_hosts_over_http() -> None:
    settings = transport_security("127.0.0.1", 9000)
    assert settings.enable_dns_rebinding_protection is True
    assert settings.allowed_origins == [f"http://{host}" for host in settings.allowed_hosts]
    assert not any("*" in host for host in settings.allowed_hosts)

"""Who may use ``hermes serve --transport http``: the bearer token, and the Host and Origin the
server answers to.

- :class:`BearerTokenGate` wraps the whole HTTP application: a request without
  ``Authorization: Bearer <token>`` matching :class:`~hermes_core._serve.token.TokenFile`
  (compared in constant time) is answered ``401`` with ``WWW-Authenticate: Bearer`` and a short
  JSON error before any MCP handling.
- :func:`transport_security` gives the SDK's DNS-rebinding check the exact ``Host`` values this
  bind answers to (the bound address and port, the loopback names for a loopback or wildcard
  bind, and any ``--allow-host`` name) and the ``http://`` origins of the same; any other
  ``Host`` gets ``421``, any other ``Origin`` ``403``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Iterable
from typing import Final

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_core._serve.token import TokenFile

__all__ = ["LOOPBACK_NAMES", "BearerTokenGate", "allowed_hosts", "transport_security"]

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "::1")
"""The names a loopback or wildcard bind also answers to."""
_HOW_TO: Final = (
    "send the header 'Authorization: Bearer <token>'; `hermes serve token` prints the token "
    '(docs/mcp.md, "Serving over HTTP")'
)


class BearerTokenGate:
    """ASGI middleware: only requests carrying the current token reach ``app``."""

    def __init__(self, app: ASGIApp, token: TokenFile) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: not a request
            await self.app(scope, receive, send)
            return
        presented = _bearer(Headers(scope=scope).get("authorization"))
        expected = self.token.current()
        if (
            presented is not None
            and expected is not None
            and hmac.compare_digest(presented.encode(), expected.encode())
        ):
            await self.app(scope, receive, send)
            return
        await _refuse(send, wrong=presented is not None)


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, credential = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        return None
    return credential.strip()


async def _refuse(send: Send, *, wrong: bool) -> None:
    # RFC 6750: a request with no credential gets the bare challenge, a bad one invalid_token.
    if wrong:
        challenge = 'Bearer realm="hermes", error="invalid_token"'
        body = {"error": "invalid_token", "error_description": f"wrong token: {_HOW_TO}"}
    else:
        challenge = 'Bearer realm="hermes"'
        body = {"error": "unauthorized", "error_description": f"no token: {_HOW_TO}"}
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"www-authenticate", challenge.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def _is_loopback_or_wildcard(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return parsed.is_loopback or parsed.is_unspecified


def allowed_hosts(bound: str, port: int, extra: Iterable[str] = ()) -> list[str]:
    """The ``Host`` header values a server bound to ``bound``:``port`` answers to."""
    names = [bound, *extra]
    if _is_loopback_or_wildcard(bound):
        names.extend(LOOPBACK_NAMES)
    hosts: list[str] = []
    for name in dict.fromkeys(names):
        shown = f"[{name}]" if ":" in name else name
        hosts.append(f"{shown}:{port}")
        if port == 80:  # a client may leave the default port out
            hosts.append(shown)
    return hosts


def transport_security(
    bound: str, port: int, extra: Iterable[str] = ()
) -> TransportSecuritySettings:
    """The SDK's Host/Origin check for this bind: exactly :func:`allowed_hosts` and their
    ``http://`` origins (a request without ``Origin``, as non-browser clients send, passes)."""
    hosts = allowed_hosts(bound, port, extra)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )

"""A GET of ``hermes serve --transport http``'s endpoint: ``405 Method Not Allowed``, at once.

On a GET the streamable HTTP transport lets a server open a stream for messages of its own,
or else answer 405: "the server does not offer an SSE stream at this endpoint". A stateless
server has nowhere to send such messages (no session: 2025-era clients re-list, 2026-era
clients hear of list changes on the ``subscriptions/listen`` stream of a POST), yet the SDK's
stateless transport answered a 2025-era GET (``curl``'s ``Accept: */*`` included) with 200 and
an event stream it never writes to, open until the client gave up. :class:`NoGetStream`
answers 405 with ``Allow: POST`` and a JSON-RPC error, after the same Host and Origin check
every request gets (a wrong ``Host`` is still ``421``).
"""

from __future__ import annotations

import json
from typing import Final

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["NO_GET_STREAM", "NoGetStream"]

NO_GET_STREAM: Final = (
    "Method Not Allowed: hermes serve over HTTP is stateless and offers no stream on GET; "
    "send JSON-RPC requests with POST (2026-era clients get list changes on "
    "subscriptions/listen)"
)
"""The message of the error a GET is answered with."""
_INVALID_REQUEST = -32600


class NoGetStream:
    """ASGI middleware: a GET of ``path`` is answered 405; everything else goes to ``app``."""

    def __init__(self, app: ASGIApp, path: str, security: TransportSecuritySettings) -> None:
        self.app = app
        self.path = path
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        refused = await self.security.validate_request(Request(scope, receive), is_post=False)
        if refused is None:
            error = {"code": _INVALID_REQUEST, "message": NO_GET_STREAM}
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error})
            refused = Response(
                body, status_code=405, headers={"Allow": "POST"}, media_type="application/json"
            )
        await refused(scope, receive, send)

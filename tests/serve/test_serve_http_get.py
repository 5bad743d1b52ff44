"""A GET of ``hermes serve --transport http``'s endpoint, as ``curl http://127.0.0.1:PORT/mcp``
sends it: the stateless server offers no stream on a GET, so it answers ``405 Method Not
Allowed`` at once (the streamable HTTP transport: "the server MUST either return
Content-Type: text/event-stream ... or else return HTTP 405"), and clients are served on."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from serving import BRIDGE_TOOLS, CORE_TOOLS, HttpServe, ServeHome, http_serve

pytestmark = pytest.mark.subprocess

# A guard against the hang this is about, not a performance check.
ANSWER_LIMIT = 20


def _get(server: HttpServe, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of a GET of the server's endpoint."""
    parts = urlsplit(server.url)
    assert parts.hostname is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=ANSWER_LIMIT)
    try:
        connection.request("GET", parts.path, headers=headers)
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        if headers.get("content-type", "").startswith("text/event-stream"):
            # Its pings every 15 s would keep read() from ever timing out.
            return response.status, headers, b"(an event stream that never ends)"
        return response.status, headers, response.read()
    finally:
        connection.close()


def _names(server: HttpServe, mode: Any) -> list[str]:
    async def main() -> list[str]:
        async with server.client(mode=mode) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(main)


def test_a_get_as_curl_sends_it_is_answered_405_at_once_and_clients_go_on(
    served: ServeHome,
) -> None:
    served.write_config()
    with http_serve(served) as server:
        curl = {"Accept": "*/*", "User-Agent": "curl/8.14.1", **server.headers}
        status, headers, body = _get(server, curl)
        assert status == 405, body
        assert headers["allow"] == "POST"
        assert headers["content-type"] == "application/json"
        answer = json.loads(body)
        assert answer["jsonrpc"] == "2.0"
        assert answer["id"] is None
        assert "no stream on GET" in answer["error"]["message"]
        # What a 2025-era client probing for a stream sends gets the same: a stateless
        # server has no session and nothing to stream to one.
        probe = {
            "Accept": "text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
            "Mcp-Session-Id": "made-up",
            **server.headers,
        }
        assert _get(server, probe)[0] == 405
        # The Host check still comes first, and the token before everything.
        assert _get(server, {**curl, "Host": "attacker.example:80"})[0] == 421
        assert _get(server, {"Accept": "*/*"})[0] == 401
        assert _names(server, "legacy") == CORE_TOOLS + BRIDGE_TOOLS
        assert _names(server, "auto") == CORE_TOOLS + BRIDGE_TOOLS


def test_without_a_token_a_get_is_answered_405_too(served: ServeHome) -> None:
    served.write_config()
    with http_serve(served, "--no-auth") as server:
        status, headers, _ = _get(server, {"Accept": "*/*"})
    assert (status, headers["allow"]) == (405, "POST")

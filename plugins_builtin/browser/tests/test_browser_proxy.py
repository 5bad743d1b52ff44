"""The browser's address proxy alone, with a real HTTP client through it (no Chromium): what it
lets through goes to the address the rule checked, what it refuses is marked and noted."""

from __future__ import annotations

import asyncio
import contextlib

import anyio
import httpx
import pytest
from browser_site import Site

from plugins_builtin.browser.addresses import address_rule
from plugins_builtin.browser.guard import REFUSED_HEADER, AddressProxy, Refused

pytestmark = pytest.mark.anyio


def _rule(url: str) -> list[str]:
    """A fake DNS and address rule: ``pinned.invalid`` (a name no resolver knows) is checked
    as 127.0.0.1; everything else is refused."""
    if "pinned.invalid" in url:
        return ["127.0.0.1"]
    raise Refused(f"{url} is refused by the test's rule")


async def test_the_proxy_connects_to_the_checked_address_and_refuses_the_rest(
    site: Site,
) -> None:
    proxy = AddressProxy(_rule)
    address = await proxy.start()
    port = site.url.rsplit(":", 1)[1]
    try:
        async with httpx.AsyncClient(proxy=address, trust_env=False) as client:
            through = await client.get(f"http://pinned.invalid:{port}/about")
            refused = await client.get("http://169.254.169.254/latest/meta-data/")
            with pytest.raises(httpx.ProxyError):
                await client.get("https://10.0.0.1/")
    finally:
        await proxy.close()

    assert through.status_code == 200
    assert "About us" in through.text  # the site was reached at the checked address
    assert refused.status_code == 403
    assert refused.headers[REFUSED_HEADER] == "1"
    assert "169.254.169.254" in refused.text
    assert set(proxy.refusals) == {"169.254.169.254:80", "10.0.0.1:443"}
    assert "10.0.0.1" in proxy.refusals["10.0.0.1:443"]


class KeepAliveOrigin:
    """A hostile origin on 127.0.0.1: it ignores ``Connection: close``, answers every request
    ``ok`` and keeps the connection open (``1xx`` first, when asked to), noting each request
    line it is sent."""

    def __init__(self, interim: bool = False) -> None:
        self.interim = interim
        self.requests: list[str] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append(head.decode("latin-1").split("\r\n", 1)[0])
                if self.interim:
                    writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n")
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n"
                    b"Keep-Alive: timeout=60\r\n\r\nok"
                )
                await writer.drain()
        writer.close()


async def _exchange(proxy_address: str, requests: list[bytes]) -> bytes:
    """``requests`` sent one after the other on one connection to the proxy, as a browser
    reusing a kept-alive proxy connection sends them; what came back until the proxy closed."""
    host, port = proxy_address.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    answers = b""
    for request in requests:
        writer.write(request)
        await writer.drain()
        with contextlib.suppress(TimeoutError):
            answers += await asyncio.wait_for(reader.read(65536), 2)
    writer.write_eof()
    with anyio.fail_after(10):  # a guard against a hang, not a performance check
        answers += await reader.read()
    writer.close()
    return answers


@pytest.mark.parametrize("interim", [False, True], ids=["plain", "after-103"])
async def test_a_kept_alive_connection_carries_no_second_request_to_the_first_origin(
    interim: bool,
) -> None:
    origin = KeepAliveOrigin(interim)
    server = await asyncio.start_server(origin.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy = AddressProxy(_rule)
    address = await proxy.start()
    try:
        answers = await _exchange(
            address,
            [
                f"GET http://pinned.invalid:{port}/first HTTP/1.1\r\n"
                f"Host: pinned.invalid:{port}\r\n\r\n".encode(),
                b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n"
                b"Host: 169.254.169.254\r\n\r\n",
            ],
        )
    finally:
        await proxy.close()
        server.close()

    # The second request was for another host: it must not reach the first origin unchecked.
    assert origin.requests == ["GET /first HTTP/1.1"]
    heads = [part for part in answers.split(b"\r\n\r\n") if part.startswith(b"HTTP/1.1")]
    assert [head.split(b" ", 2)[1] for head in heads] == ([b"103"] if interim else []) + [b"200"]
    assert b"\r\nConnection: close" in heads[-1]  # no client keeps this connection
    assert b"keep-alive" not in answers.lower()
    if interim:  # an early hint still reaches the page
        assert b"Link: </a.css>" in answers


async def test_a_refused_tunnel_is_said_as_a_connection_not_as_an_https_fetch() -> None:
    # A CONNECT carries a WebSocket (ws or wss) as well as https: the refusal read "refused to
    # fetch https://10.9.9.9:80/", a fetch and a scheme the page never asked for.
    proxy = AddressProxy(address_rule(()))
    address = await proxy.start()
    try:
        answer = await _exchange(address, [b"CONNECT 10.9.9.9:80 HTTP/1.1\r\n\r\n"])
    finally:
        await proxy.close()

    assert answer.startswith(b"HTTP/1.1 403 ")
    reason = proxy.refusals["10.9.9.9:80"]
    assert reason.startswith(
        "refused a connection to 10.9.9.9:80: 10.9.9.9 is a private (10.0.0.0/8) address."
    )
    assert "https" not in reason

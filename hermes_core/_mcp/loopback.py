"""The browser side of ``hermes mcp login``: :class:`LoopbackRedirect`, the redirect listener
on ``127.0.0.1`` that receives the code (the ``state`` of a callback must be the one hermes
sent, or it is not the sign-in it waits for), and :class:`SignIn`, which sends the user to the
browser and waits for the code."""

from __future__ import annotations

import contextlib
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
from mcp.shared.auth import AuthorizationCodeResult

from hermes_core._errors import HermesError

__all__ = ["CALLBACK_PATH", "SIGN_IN_TIMEOUT", "LoopbackRedirect", "SignIn", "SignInRefused"]

SIGN_IN_TIMEOUT = 300.0
"""Seconds ``hermes mcp login`` waits for the user to finish in the browser."""

CALLBACK_PATH = "/callback"


_PAGE = (
    "<!doctype html><meta charset=utf-8><title>hermes</title>"
    "<body style='font-family:sans-serif'><p>{text}</p></body>"
)


class SignInRefused(HermesError):
    """The authorization server sent the user back with an error instead of a code."""


class LoopbackRedirect:
    """The redirect listener of a sign-in: ``http://127.0.0.1:PORT/callback`` (``port`` 0: a
    free one). Use as ``async with``; :meth:`wait` answers requests until the callback of the
    sign-in with ``state`` comes."""

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._listener: anyio.abc.SocketListener | None = None

    async def __aenter__(self) -> LoopbackRedirect:
        listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self._port)
        listener = listeners.listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)
        self._listener = listener
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._listener is not None:
            await self._listener.aclose()

    @property
    def redirect_uri(self) -> str:
        """The URI the authorization server sends the browser back to."""
        assert self._listener is not None
        port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        return f"http://127.0.0.1:{port}{CALLBACK_PATH}"

    async def wait(self, state: str) -> AuthorizationCodeResult:
        """The code of the callback carrying ``state``; other requests are answered and
        ignored. Raises :class:`SignInRefused` when the server sent an error instead."""
        assert self._listener is not None
        while True:
            stream = await self._listener.accept()
            async with stream:
                with anyio.move_on_after(10):
                    result = await self._answer(stream, state)
                    if result is not None:
                        return result

    async def _answer(
        self, stream: anyio.abc.SocketStream, state: str
    ) -> AuthorizationCodeResult | None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 16384:
            try:
                head += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return None
        method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        target = urlsplit(rest.rsplit(" ", 1)[0])
        params = {key: values[0] for key, values in parse_qs(target.query).items()}
        if method != "GET" or target.path != CALLBACK_PATH:
            await _respond(stream, 404, "Not the sign-in page of hermes.")
            return None
        if params.get("state") != state:
            await _respond(stream, 400, "This is not the sign-in hermes is waiting for.")
            return None
        if "error" in params:
            detail = params.get("error_description") or params["error"]
            await _respond(stream, 200, f"Sign-in refused: {detail}. You can close this tab.")
            raise SignInRefused(f"the authorization server refused the sign-in: {detail}")
        if not params.get("code"):
            await _respond(stream, 400, "The answer carries no authorization code.")
            return None
        await _respond(stream, 200, "Signed in. You can close this tab and go back to hermes.")
        return AuthorizationCodeResult(code=params["code"], state=state, iss=params.get("iss"))


async def _respond(stream: anyio.abc.SocketStream, status: int, text: str) -> None:
    body = _PAGE.format(text=text).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(head.encode() + body)


# The browser ----------------------------------------------------------------------------------


@dataclass
class SignIn:
    """An interactive sign-in: the listener that receives the code, whether to open the
    browser (``webbrowser``, which honours ``$BROWSER``), and where to say what happens."""

    redirect: LoopbackRedirect
    say: Callable[[str], None]
    open_browser: bool = True
    state: str = ""
    """The ``state`` of the authorization request sent, once one is."""

    async def send_user(self, url: str) -> None:
        """Print ``url`` and open it in the browser (on a thread of its own)."""
        self.state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        self.say(f"Sign in to continue; if no browser opens, open this URL:\n{url}")
        if self.open_browser:
            # webbrowser.open waits for a $BROWSER command to end, and that command may wait
            # for the page, which the listener serves only once this returns.
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    async def wait(self) -> AuthorizationCodeResult:
        """The code the browser brings back."""
        with anyio.fail_after(SIGN_IN_TIMEOUT):
            return await self.redirect.wait(self.state)

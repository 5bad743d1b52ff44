"""Signing in to remote MCP servers: the spec's OAuth 2.1 authorization, through the SDK.

The ``mcp`` SDK's :class:`~mcp.client.auth.OAuthClientProvider` (an ``httpx`` auth) does the
protocol: on a ``401`` it discovers the protected-resource metadata (RFC 9728) and the
authorization server's (RFC 8414, OpenID discovery), registers a client (RFC 7591) or uses a
client ID metadata document or a pre-registered client, picks the scopes (``WWW-Authenticate``,
then ``scopes_supported``), runs the authorization-code grant with PKCE, steps up on
``403 insufficient_scope`` and refreshes expired tokens. This module gives it what is hermes':

- :class:`TokenFile`, the SDK's token storage: ``$HERMES_HOME/mcp-auth/NAME.json``, ``0600`` in
  a ``0700`` directory, holding the tokens, the registered client and the server's metadata
  (so a token is refreshed at the right endpoint in a later process); bound to the server's
  URL, so tokens never go to another server that takes the name.
- :class:`LoopbackRedirect`, the redirect listener on ``127.0.0.1`` that receives the code (the
  ``state`` of a callback must be the one hermes sent, or it is not the sign-in it waits for).
- :func:`auth_for`, the provider of one connection. Without a :class:`SignIn` (every command
  but ``hermes mcp login``) it never opens a browser: where the flow would, it stops and the
  connection fails with :class:`SignInNeeded`, naming the server and saying
  ``run: hermes mcp login NAME``.
- :func:`sign_in`, what ``hermes mcp login`` runs, and :func:`sign_out`.

Tokens are never logged: nothing here logs them, and they travel only in headers and bodies of
requests to the server and its authorization server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
import webbrowser
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from hermes_core.atomic_write import write_atomically
from hermes_core.config import McpOAuthConfig, McpServerConfig
from hermes_core.errors import HermesError
from hermes_core.paths import Environment
from hermes_core.private_files import PRIVATE_FILE_MODE
from hermes_core.version import __version__

__all__ = [
    "SIGN_IN_TIMEOUT",
    "LoopbackRedirect",
    "SignIn",
    "SignInNeeded",
    "TokenFile",
    "auth_for",
    "sign_in",
    "sign_in_fingerprint",
    "sign_out",
    "token_path",
]

log = logging.getLogger("hermes_core.mcp")

SIGN_IN_TIMEOUT = 300.0
"""Seconds ``hermes mcp login`` waits for the user to finish in the browser."""

TOKENS_DIR = "mcp-auth"
CALLBACK_PATH = "/callback"
_UNUSED_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI a connection that cannot sign in declares: it never receives anything."""


def token_path(env: Environment, server: str) -> Path:
    """Where the sign-in of ``server`` is kept: ``$HERMES_HOME/mcp-auth/NAME.json``."""
    return env.home / TOKENS_DIR / f"{server}.json"


def sign_in_fingerprint(server: str, env: Environment) -> str:
    """A hash that changes when the sign-in of ``server`` does (login, logout, refresh): a
    connect failure recorded before it no longer stands for the server. Never the tokens."""
    try:
        found = token_path(env, server).stat()
    except OSError:
        return "signed-out"
    return hashlib.sha256(f"{found.st_mtime_ns}:{found.st_size}".encode()).hexdigest()[:16]


_Model = TypeVar("_Model", OAuthToken, OAuthClientInformationFull, OAuthMetadata)


class SignInNeeded(HermesError):
    """A server that needs sign-in (again, or with more scopes) and a connection that may not
    open a browser."""

    def __init__(self, server: str, detail: str) -> None:
        self.server = server
        self.reason = f"{detail}: run: hermes mcp login {server}"
        super().__init__(f"MCP server {server!r} {self.reason}")


class _NoTracebackForSignInNeeded(logging.Filter):
    """The SDK logs every exception of its flow with a traceback; :class:`SignInNeeded` is
    not a fault, and the connection's error says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SignInNeeded))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_NoTracebackForSignInNeeded())


# Token storage --------------------------------------------------------------------------------


class TokenFile:
    """The SDK's token storage for one server, kept in :func:`token_path`.

    The file holds ``url`` (the server it belongs to; a record of another URL is ignored),
    ``tokens`` with ``expires_at``, the ``client`` hermes registered, the server's metadata,
    and ``wanted_scope`` (the scopes a step-up asked for, requested by the next sign-in).
    A pre-registered client (``oauth.client_id``) comes from the configuration and is never
    written. With ``keep_registration`` (a sign-in) the stored tokens are not used (they are
    replaced when the new ones come) nor is a registered client whose redirect URI is not
    ``redirect_uri``; without it (a connection that cannot sign in) a client registered on
    the way is used and forgotten: it was registered with a redirect URI nobody listens on.
    """

    def __init__(
        self,
        path: Path,
        url: str,
        oauth: McpOAuthConfig | None,
        *,
        redirect_uri: str,
        keep_registration: bool,
    ) -> None:
        self.path = path
        self.url = url
        self._oauth = oauth
        self._redirect_uri = redirect_uri
        self._keep_registration = keep_registration
        self._record = self._read()
        self._unsaved_client: OAuthClientInformationFull | None = None
        if keep_registration:  # a sign-in: anew, and with a client that knows this redirect
            self._record.pop("tokens", None)
            self._record.pop("expires_at", None)
            if self.registered_redirect != redirect_uri:
                self._record.pop("client", None)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("the sign-in file %s cannot be read, ignored: %s", self.path, exc)
            return {}
        if not isinstance(data, dict) or data.get("url") != self.url:
            return {}
        return data

    def _save(self) -> None:
        self._record["url"] = self.url
        text = json.dumps(self._record, indent=2, sort_keys=True)
        write_atomically(self.path, text + "\n", mode=PRIVATE_FILE_MODE)

    def _model(self, key: str, model: type[_Model]) -> _Model | None:
        value = self._record.get(key)
        if value is None:
            return None
        try:
            return model.model_validate(value)
        except ValidationError:
            return None

    @property
    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it says."""
        value = self._record.get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def wanted_scope(self) -> str | None:
        """The scopes a step-up asked for since the last sign-in."""
        value = self._record.get("wanted_scope")
        return value if isinstance(value, str) and value else None

    @property
    def registered_redirect(self) -> str | None:
        """The redirect URI of the client hermes registered, if it did."""
        client = self._model("client", OAuthClientInformationFull)
        if client is None or not client.redirect_uris:
            return None
        return str(client.redirect_uris[0])

    def metadata(self) -> tuple[OAuthMetadata | None, ProtectedResourceMetadata | None]:
        """The authorization server's and the resource's metadata seen at the last sign-in."""
        resource = self._record.get("resource_metadata")
        try:
            prm = None if resource is None else ProtectedResourceMetadata.model_validate(resource)
        except ValidationError:
            prm = None
        return self._model("authorization_server", OAuthMetadata), prm

    def remember(
        self,
        metadata: OAuthMetadata | None,
        resource: ProtectedResourceMetadata | None,
    ) -> None:
        """Keep the metadata the tokens came with (saved with the next tokens)."""
        for key, model in (("authorization_server", metadata), ("resource_metadata", resource)):
            if model is not None:
                self._record[key] = model.model_dump(mode="json", exclude_none=True)

    def want_scope(self, scope: str | None) -> None:
        """Note the scopes a step-up asked for, for the next sign-in (saved when signed in
        before; a server never signed in to leaves no file)."""
        if scope and scope != self.wanted_scope and self._record.get("tokens"):
            self._record["wanted_scope"] = scope
            self._save()

    async def get_tokens(self) -> OAuthToken | None:
        return self._model("tokens", OAuthToken)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self._record["expires_at"] = (
            time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        )
        if self._keep_registration:  # a sign-in asked for what a step-up wanted
            self._record.pop("wanted_scope", None)
        if self._unsaved_client is not None and self._keep_registration:
            self._record["client"] = self._unsaved_client.model_dump(mode="json", exclude_none=True)
        self._save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        configured = self._oauth.client_id if self._oauth is not None else None
        if configured is not None:
            assert self._oauth is not None
            secret = self._oauth.client_secret
            method = self._oauth.token_endpoint_auth_method or (
                "client_secret_basic" if secret else "none"
            )
            return OAuthClientInformationFull(
                client_id=configured,
                client_secret=secret,
                redirect_uris=[AnyUrl(self._redirect_uri)],
                token_endpoint_auth_method=method,
            )
        return self._unsaved_client or self._model("client", OAuthClientInformationFull)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        # Saved with the tokens: a registration whose sign-in never finished is not kept.
        self._unsaved_client = client_info


# The redirect listener ------------------------------------------------------------------------

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


# The provider ---------------------------------------------------------------------------------


class _Provider(OAuthClientProvider):
    """The SDK's provider, with hermes' storage and one change of path: without a
    :class:`SignIn`, where the flow would send the user to the browser it records why and
    stops."""

    def __init__(
        self,
        server: str,
        url: str,
        store: TokenFile,
        metadata: OAuthClientMetadata,
        client_metadata_url: str | None,
        extra_scope: str | None,
        interactive: SignIn | None,
    ) -> None:
        super().__init__(
            server_url=url,
            client_metadata=metadata,
            storage=store,
            redirect_handler=interactive.send_user if interactive is not None else None,
            callback_handler=interactive.wait if interactive is not None else None,
            client_metadata_url=client_metadata_url,
        )
        self.server = server
        self.store = store
        self.extra_scope = extra_scope
        self.interactive = interactive
        self.sign_in_needed: SignInNeeded | None = None

    async def _initialize(self) -> None:
        await super()._initialize()
        # The SDK knows a token's expiry only from the answer that brought it; the stored
        # expiry and endpoints let a later process refresh it instead of using it expired.
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self.store.expires_at
        metadata, resource = self.store.metadata()
        if self.context.oauth_metadata is None:
            self.context.oauth_metadata = metadata
        if self.context.protected_resource_metadata is None and resource is not None:
            self.context.protected_resource_metadata = resource
            if resource.authorization_servers:
                self.context.auth_server_url = str(resource.authorization_servers[0])

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        # Without a browser, a 401 ends here: discovering and registering would only lead to a
        # sign-in this connection cannot do. Once, first, the token is refreshed: the server
        # may refuse one hermes still thinks good (revoked, or expired by the server's clock).
        refreshed = False
        while True:
            flow = super()._auth_flow(request)
            refused = False
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and response.status_code == 401 and not self.interactive:
                        refused = True
                        break
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()
            if not refused:
                return
            if refreshed or not self.context.can_refresh_token():
                raise self._needs_the_user(refused=True)
            refreshed = True
            self.context.token_expiry_time = time.time() - 1  # the next flow refreshes first

    async def _perform_authorization(self) -> httpx2.Request:
        scope = union_scopes(self.context.client_metadata.scope, self.extra_scope)
        self.context.client_metadata.scope = union_scopes(scope, self.store.wanted_scope)
        if self.interactive is None:
            raise self._needs_the_user()
        return await super()._perform_authorization()

    def _needs_the_user(self, *, refused: bool = False) -> SignInNeeded:
        """Why this connection stops: no sign-in, one the server ``refused`` (a ``401``), or a
        step-up to scopes the stored token was not granted (noted for the next sign-in)."""
        scope = self.context.client_metadata.scope
        tokens = self.context.current_tokens
        if tokens is None:
            detail = "needs sign-in"
        elif refused:
            detail = "refused the stored sign-in, sign in again"
        elif set((scope or "").split()) - set((tokens.scope or "").split()):
            self.store.want_scope(scope)
            detail = f"needs more permission (scope {scope!r})"
        else:
            detail = "refused the stored sign-in, sign in again"
        self.sign_in_needed = SignInNeeded(self.server, detail)
        return self.sign_in_needed

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        self.store.remember(self.context.oauth_metadata, self.context.protected_resource_metadata)
        await super()._handle_token_response(response)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if not refreshed:
            log.info("MCP server %r: refreshing the sign-in failed", self.server)
        return refreshed


def auth_for(
    server: str, config: McpServerConfig, env: Environment, interactive: SignIn | None = None
) -> _Provider | None:
    """The ``httpx`` auth of a connection to the URL server ``server`` (``config`` expanded),
    or ``None`` when the entry sends its own ``Authorization`` header. ``interactive`` is the
    sign-in of ``hermes mcp login``; without it the connection fails with
    :class:`SignInNeeded` where a browser would be needed."""
    assert config.url is not None
    if any(key.lower() == "authorization" for key in config.headers):
        return None
    oauth = config.oauth
    path = token_path(env, server)
    if interactive is not None:
        redirect_uri = interactive.redirect.redirect_uri
    else:
        redirect_uri = _UNUSED_REDIRECT
    signing_in = interactive is not None
    store = TokenFile(
        path, config.url, oauth, redirect_uri=redirect_uri, keep_registration=signing_in
    )
    if interactive is None:
        redirect_uri = store.registered_redirect or redirect_uri
    metadata = OAuthClientMetadata(
        client_name="hermes",
        software_id="hermes-core",
        software_version=__version__,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    extra = " ".join(oauth.scopes) if oauth is not None and oauth.scopes else None
    return _Provider(
        server,
        config.url,
        store,
        metadata,
        oauth.client_metadata_url if oauth is not None else None,
        extra,
        interactive,
    )


# login and logout -----------------------------------------------------------------------------


async def sign_in(
    server: str,
    config: McpServerConfig,
    env: Environment,
    *,
    say: Callable[[str], None],
    open_browser: bool = True,
) -> tuple[int, bool]:
    """``hermes mcp login``: sign in to the URL server ``server`` anew (its stored tokens are
    not used), with the browser or a printed URL, then connect and list its tools; returns
    how many it lists and whether it asked for sign-in at all. Raises
    :class:`~hermes_core.mcp.connection.McpConnectError` when that fails."""
    from hermes_core.mcp.connection import McpConnectError, open_connection
    from hermes_core.mcp.expand import expand_server_config

    oauth = config.oauth
    try:
        url = expand_server_config(server, config, env).url or ""
    except HermesError as exc:
        raise McpConnectError(server, str(exc)) from None
    path = token_path(env, server)
    stored = TokenFile(path, url, oauth, redirect_uri="", keep_registration=False)
    port = oauth.redirect_port if oauth is not None else 0
    registered = stored.registered_redirect
    registered_port = urlsplit(registered).port if registered else None
    redirect: LoopbackRedirect | None = None
    if not port and registered_port:
        # A registered client knows its redirect URI: keep it when that port is free.
        with contextlib.suppress(OSError):
            redirect = await LoopbackRedirect(registered_port).__aenter__()
    if redirect is None:
        try:
            redirect = await LoopbackRedirect(port).__aenter__()
        except OSError as exc:
            where = f" (mcp_servers.{server}.oauth.redirect_port)" if port else ""
            reason = f"cannot listen for the redirect on 127.0.0.1:{port}{where}: {exc}"
            raise McpConnectError(server, reason) from None
    try:
        interactive = SignIn(redirect, say, open_browser)
        timeout = config.connect_timeout + SIGN_IN_TIMEOUT
        async with open_connection(
            server, config.model_copy(update={"connect_timeout": timeout}), env, interactive
        ) as connection:
            return len(connection.tools), interactive.state != ""
    finally:
        await redirect.__aexit__(None, None, None)


def sign_out(server: str, env: Environment) -> bool:
    """``hermes mcp logout``: remove what the sign-in of ``server`` kept; whether there was
    anything."""
    path = token_path(env, server)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True

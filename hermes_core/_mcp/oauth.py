"""Signing in to remote MCP servers: the spec's OAuth 2.1 authorization, through the SDK.

The ``mcp`` SDK's :class:`~mcp.client.auth.OAuthClientProvider` (an ``httpx`` auth) does the
protocol: on a ``401`` it discovers the protected-resource metadata (RFC 9728) and the
authorization server's (RFC 8414, OpenID discovery), registers a client (RFC 7591) or uses a
client ID metadata document or a pre-registered client, picks the scopes (``WWW-Authenticate``,
then ``scopes_supported``), runs the authorization-code grant with PKCE, steps up on
``403 insufficient_scope`` and refreshes expired tokens. This module gives it what is hermes':

- :class:`~hermes_core._mcp.tokens.TokenFile` (:mod:`hermes_core._mcp.tokens`), the SDK's token
  storage: ``$HERMES_HOME/mcp-auth/NAME.json``, ``0600`` in a ``0700`` directory, holding the
  tokens, the registered client and the server's metadata (so a token is refreshed at the
  right endpoint in a later process); bound to the server's URL, so tokens never go to another
  server that takes the name.
- :class:`~hermes_core._mcp.loopback.LoopbackRedirect` (:mod:`hermes_core._mcp.loopback`), the
  redirect listener on ``127.0.0.1`` that receives the code.
- :func:`auth_for` (this module), the provider of one connection. Without a
  :class:`~hermes_core._mcp.loopback.SignIn` (every command but ``hermes mcp login``) it never
  opens a browser: where the flow would, it stops and the connection fails with
  :class:`SignInNeeded`, naming the server and saying ``run: hermes mcp login NAME``.
- :func:`~hermes_core._mcp.login.sign_in`, what ``hermes mcp login`` runs
  (:mod:`hermes_core._mcp.login`, above the connection), and
  :func:`~hermes_core._mcp.tokens.sign_out`.

Tokens are never logged: nothing here logs them, and they travel only in headers and bodies of
requests to the server and its authorization server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from hermes_core._config import McpServerConfig
from hermes_core._errors import HermesError
from hermes_core._mcp.loopback import SIGN_IN_TIMEOUT, LoopbackRedirect, SignIn
from hermes_core._mcp.tokens import (
    TokenFile,
    sign_in_fingerprint,
    sign_out,
    token_path,
    url_without_user,
)
from hermes_core._paths import Environment
from hermes_core._version import __version__

# The names of the storage and the browser side are re-exported: this module has offered them.
__all__ = [
    "SIGN_IN_TIMEOUT",
    "LoopbackRedirect",
    "SignIn",
    "SignInNeeded",
    "TokenFile",
    "auth_for",
    "sign_in_fingerprint",
    "sign_out",
    "token_path",
]

log = logging.getLogger("hermes_core._mcp")

_UNUSED_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI a connection that cannot sign in declares: it never receives anything."""


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
        self._loaded = False
        self._turn: AsyncExitStack | None = None
        """This process's turn at refreshing (:meth:`TokenFile.turn`), while a refresh runs."""
        self._turn_task: int | None = None

    @property
    def _initialized(self) -> bool:
        """Never, for the SDK's flow: it then calls :meth:`_initialize` at every request."""
        return False

    @_initialized.setter
    def _initialized(self, value: bool) -> None:
        pass

    async def _initialize(self) -> None:
        # The SDK's flow calls this under its lock right before it decides to refresh, at every
        # request (_initialized): the last moment to take the tokens another process saved,
        # and the turn a refresh is made in, held until its answer is saved.
        if not self._loaded:
            await super()._initialize()
            self._loaded = True
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
        if not self._refresh_next():
            return
        await self._take_turn()
        self._take_newer()
        if not self._refresh_next():  # another process's tokens are good: no refresh
            await self._end_turn()

    def _refresh_next(self) -> bool:
        """Whether the SDK's flow refreshes the tokens next (its own test)."""
        return not self.context.is_token_valid() and self.context.can_refresh_token()

    def _take_newer(self) -> None:
        """Take the tokens another hermes process saved since this one read them: its refresh
        used up the refresh token held here, when the server rotates them. An unexpired access
        token among them needs no refresh; else the refresh sends the newest refresh token."""
        tokens = self.store.newer_tokens(self.context.current_tokens)
        if tokens is not None:
            self.context.current_tokens = tokens
            self.context.token_expiry_time = self.store.expires_at

    async def _take_turn(self) -> None:
        turn = AsyncExitStack()
        try:
            await turn.enter_async_context(self.store.turn())
        except TimeoutError:
            # Another process holds it (stopped, or hung): a refresh now could use up the
            # refresh token it holds, and could not be saved; the request fails saying so.
            raise
        except OSError as exc:  # the save says it too; the refresh goes on without the turn
            log.warning("MCP server %r: the sign-in file cannot be locked: %s", self.server, exc)
            return
        self._turn, self._turn_task = turn, anyio.get_current_task().id

    async def _end_turn(self, *, of_this_task: bool = False) -> None:
        if self._turn is None or (of_this_task and self._turn_task != anyio.get_current_task().id):
            return
        turn, self._turn = self._turn, None
        await turn.aclose()

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
                await self._end_turn(of_this_task=True)  # a refresh cut short ends it too
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
        try:
            refreshed = await super()._handle_refresh_response(response)  # saved in the turn
        finally:
            await self._end_turn()
        if not refreshed:
            log.info("MCP server %r: refreshing the sign-in failed", self.server)
        return refreshed


def auth_for(
    server: str, config: McpServerConfig, env: Environment, interactive: SignIn | None = None
) -> _Provider | None:
    """The ``httpx`` auth of a connection to the URL server ``server`` (``config`` expanded),
    or ``None`` when the entry sends its own ``Authorization`` header or its URL has a
    password (``https://me:pw@host/mcp``: ``httpx`` sends it as HTTP Basic auth, as curl does;
    a user alone, ``https://me@host/mcp``, is no credential: it signs in to the URL without it).
    ``interactive`` is the sign-in of ``hermes mcp login``; without it the connection fails
    with :class:`SignInNeeded` where a browser would be needed."""
    assert config.url is not None
    if any(key.lower() == "authorization" for key in config.headers):
        return None
    if urlsplit(config.url).password is not None:  # an httpx auth would take Basic's place
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
        url_without_user(config.url),  # the resource the server names: no user part in it
        store,
        metadata,
        oauth.client_metadata_url if oauth is not None else None,
        extra,
        interactive,
    )

"""``hermes mcp login``: sign in to a URL server anew, with the browser or a printed URL, then
connect and list its tools (:func:`sign_in`). Above both the connection and the sign-in
provider (:mod:`hermes_core._mcp.oauth`), which know nothing of it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit

from hermes_core._config import McpServerConfig
from hermes_core._errors import HermesError
from hermes_core._mcp.connection import open_connection
from hermes_core._mcp.expand import expand_server_config
from hermes_core._mcp.failures import McpConnectError
from hermes_core._mcp.loopback import SIGN_IN_TIMEOUT, LoopbackRedirect, SignIn
from hermes_core._mcp.tokens import TokenFile, token_path
from hermes_core._paths import Environment

__all__ = ["sign_in"]


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
    :class:`~hermes_core._mcp.failures.McpConnectError` when that fails."""
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

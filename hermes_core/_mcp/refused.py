"""A URL server that refuses the credentials hermes sends it: :class:`RefusedCredentials`.

An entry whose URL has a password (sent as HTTP Basic auth) or that sends its own
``Authorization`` header gets no OAuth sign-in (:func:`~hermes_core._mcp.oauth.auth_for`), so
a ``401`` or ``403`` to it is no request to sign in: the credentials the user gave are wrong.
The SDK makes such an answer ``MCP error -32603: Server returned an error response``; the
connection says instead, in one line, what was refused, where it is kept and how to give it
again.
"""

from __future__ import annotations

import re

import httpx2

from hermes_core._config import McpServerConfig
from hermes_core._paths import Environment
from hermes_core._redaction import shown_url

__all__ = ["RefusedCredentials"]

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
_REFUSALS = frozenset({401, 403})


class RefusedCredentials:
    """Notes a ``401`` or ``403`` that the URL server ``name`` (``config`` as written, its
    ``${VAR}`` references unexpanded) answers to a request carrying ``Authorization``."""

    def __init__(self, name: str, config: McpServerConfig, env: Environment) -> None:
        self._name = name
        self._config = config
        self._env = env
        self.status: int | None = None

    def watch(self, client: httpx2.AsyncClient, auth: object) -> httpx2.AsyncClient:
        """``client``, noting refusals when hermes sends the user's own credentials (``auth``,
        an OAuth sign-in, is ``None``: it handles a ``401`` itself)."""
        if auth is None:
            hooks = client.event_hooks
            hooks["response"].append(self._note)
            client.event_hooks = hooks
        return client

    async def _note(self, response: httpx2.Response) -> None:
        if response.status_code in _REFUSALS and "authorization" in response.request.headers:
            self.status = response.status_code

    def reason(self) -> str | None:
        """Why the connection failed, when the server refused the credentials: ``HTTP 401:
        the server refused the credentials hermes sent to URL (what they are); correct VAR in
        .env or run: hermes mcp add NAME ... --force``; ``None`` when it did not. Said once: the
        next failure is another one."""
        status, self.status = self.status, None
        if status is None:
            return None
        name, config = self._name, self._config
        assert config.url is not None
        header = next((key for key in config.headers if key.lower() == "authorization"), None)
        if header is not None:
            what = f"the {header} header of mcp_servers.{name}.headers"
            written = config.headers[header]
            again = f"--url URL --header '{header}: ...'"
        else:
            what = f"the password and secret query values of mcp_servers.{name}.url"
            written = config.url
            again = "--url URL"
        variables = list(dict.fromkeys(_REFERENCE.findall(written)))
        if variables:
            what += ", " + ", ".join(f"${{{variable}}}" for variable in variables)
            where = f"correct {', '.join(variables)} in {self._env.dotenv_path}"
        else:
            where = f"correct them in {self._env.config_path}"
        return (
            f"HTTP {status}: the server refused the credentials hermes sent to "
            f"{shown_url(config.url)} ({what}); {where}, or give them again: "
            f"hermes mcp add {name} {again} --force"
        )

"""``mcp_servers``: one entry's keys (a stdio command or a streamable HTTP URL, its sign-in),
and the rule of a server's name."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from hermes_core._config.checks import After, NamesList, Number, http_url
from hermes_core._config.sections import Section
from hermes_core._shown import shown

MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")
"""An MCP server name: letters, digits, ``-`` and single ``_``. It becomes part of tool names
(``mcp__<server>__<tool>``), so ``__``, which separates those parts, is not allowed."""
MCP_SERVER_NAME_RULE = "use letters, digits, '-' and single '_' (it becomes part of tool names)"


def check_mcp_server_name(name: str) -> str:
    """``name`` if it is a valid MCP server name, else ``ValueError`` saying the rule."""
    if not MCP_SERVER_NAME.fullmatch(name) or name.endswith("_"):
        raise ValueError(f"MCP server name {shown(name)}: {MCP_SERVER_NAME_RULE}")
    return name


def _client_metadata_url(value: str | None) -> str | None:
    if value is None:
        return value
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/"):
        raise ValueError(
            f"expected an https:// URL with a path (the client ID metadata document), "
            f"got {shown(value)}"
        )
    return value


class McpOAuthConfig(Section):
    """``mcp_servers.NAME.oauth``: how hermes signs in to a URL server that needs it
    (``hermes mcp login NAME``). Every key is optional: without a client, hermes registers
    itself with the server's authorization server (dynamic client registration)."""

    client_id: str | None = None
    """A client registered beforehand with the authorization server (``${VAR}`` allowed)."""
    client_secret: str | None = None
    """Its secret (write ``${VAR}``: the value belongs in ``$HERMES_HOME/.env``)."""
    token_endpoint_auth_method: (
        Literal["client_secret_basic", "client_secret_post", "none"] | None
    ) = None
    """How the pre-registered client authenticates to the token endpoint; default
    ``client_secret_basic`` with a secret, ``none`` without."""
    client_metadata_url: Annotated[str | None, After(_client_metadata_url)] = None
    """An https URL of a client ID metadata document, used as the client ID where the
    authorization server supports it (instead of registering)."""
    scopes: NamesList = []
    """Scopes asked for besides the ones the server names."""
    redirect_port: Annotated[int, Number(low=0, high=65535, whole=True)] = 0
    """The port of the loopback redirect listener (``http://127.0.0.1:PORT/callback``); 0 picks
    a free one. Set it when the client was registered with a fixed redirect URI."""

    def _validate(self) -> None:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("'client_secret' needs 'client_id'")


class McpServerConfig(Section):
    """One entry of ``mcp_servers``: a stdio command or a streamable HTTP URL."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: Annotated[str | None, After(http_url)] = None
    headers: dict[str, str] = {}
    include: NamesList = []
    exclude: NamesList = []
    timeout: Annotated[float, Number(above=0)] = 60.0
    connect_timeout: Annotated[float, Number(above=0)] = 30.0
    manifest_max_age: Annotated[float, Number(low=0)] = 86400.0
    """Seconds a tool manifest stays fresh: a read-only command does not start a server whose
    last listing is younger (docs/mcp.md, "Tool manifests")."""
    retry_interval: Annotated[float, Number(low=0)] = 300.0
    """Seconds a failed connect is believed: a read-only command does not start the server
    again before they have passed."""
    max_result_chars: Annotated[int, Number(low=1, whole=True)] = 100_000
    """The most of one call's result (its text and other content, and its structured content
    as JSON) that is passed on: a server answering megabytes would fill a model's context."""
    enabled: bool = True
    oauth: McpOAuthConfig | None = None
    """Signing in to a URL server (:class:`McpOAuthConfig`)."""

    def _validate(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.oauth is not None and self.url is None:
            raise ValueError("'oauth' is for a 'url' server (a stdio server signs in by itself)")

"""An MCP server that needs sign-in: the SDK's own resource server and authorization server
(protected-resource metadata, authorization-server metadata, dynamic client registration, PKCE,
refresh tokens) in one process on 127.0.0.1, with a ``whoami`` tool.

``python oauth_server.py PORT [--token-lifetime SECONDS] [--revoke-on-refresh]``. The
authorization endpoint approves at once (it redirects to the client's redirect URI with a
code): a browser that follows redirects stands for the user clicking "allow". Access tokens live
``--token-lifetime`` seconds (expired ones are refused), so a client must refresh them. Refresh
tokens rotate: a refresh returns a new one and the one it used is refused from then on; with
``--revoke-on-refresh`` the access token issued with it is refused too.
"""

from __future__ import annotations

import argparse
import secrets
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class ApprovingProvider:
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self, lifetime: int, revoke_on_refresh: bool = False) -> None:
        self.lifetime = lifetime
        self.revoke_on_refresh = revoke_on_refresh
        self.issued_with: dict[str, str] = {}
        """The access token issued with each refresh token."""
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = AuthorizationCode(
            code=secrets.token_urlsafe(16),
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        self.issued_with[refresh] = access
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: RefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        issued = self.issued_with.pop(refresh_token.token, None)
        if self.revoke_on_refresh and issued is not None:
            self.access.pop(issued, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int, lifetime: int, revoke_on_refresh: bool = False) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "signed-in",
        auth_server_provider=ApprovingProvider(lifetime, revoke_on_refresh),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools"], default_scopes=["tools"]
            ),
            required_scopes=["tools"],
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Who the server thinks is calling."""
        return "a signed-in client"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--revoke-on-refresh", action="store_true")
    options = parser.parse_args()
    app = build(
        options.port, options.token_lifetime, options.revoke_on_refresh
    ).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning")

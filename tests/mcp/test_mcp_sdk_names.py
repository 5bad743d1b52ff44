"""The mcp SDK's private names hermes' sign-in relies on (``hermes_core/_mcp/oauth.py``): its
``_Provider`` makes the SDK's flow call ``_initialize`` at every request by answering
``_initialized`` with ``False``, takes its turn at refreshing there by the SDK's own test, and
reads and writes the flow's context. A release of the SDK that renames one of them would not
fail a sign-in at once: processes would again refresh one rotating refresh token each, signing
each other out. This says which name moved, at the SDK upgrade."""

from __future__ import annotations

import dataclasses
import inspect

from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import OAuthContext


def test_the_sdk_flow_asks_initialized_then_initialize_under_its_lock_then_refreshes() -> None:
    flow = inspect.getsource(OAuthClientProvider._auth_flow)
    lines = [line.strip() for line in flow.splitlines()]

    lock = lines.index("async with self.context.lock:")
    asked = lines.index("if not self._initialized:")
    assert lines[asked + 1] == "await self._initialize()"
    refresh = lines.index(
        "if not self.context.is_token_valid() and self.context.can_refresh_token():"
    )
    assert lock < asked < refresh
    assert "await self._handle_refresh_response(refresh_response)" in flow


def test_the_methods_and_context_fields_hermes_uses_are_there() -> None:
    for name in ("_initialize", "_handle_refresh_response", "_handle_token_response"):
        assert inspect.iscoroutinefunction(getattr(OAuthClientProvider, name)), name
    assert callable(OAuthClientProvider._perform_authorization)
    fields = {field.name for field in dataclasses.fields(OAuthContext)}
    used = {
        "current_tokens",
        "token_expiry_time",
        "oauth_metadata",
        "protected_resource_metadata",
        "auth_server_url",
        "client_metadata",
        "lock",
    }
    assert used <= fields, used - fields
    assert callable(OAuthContext.is_token_valid)
    assert callable(OAuthContext.can_refresh_token)

"""Where a sign-in to a remote MCP server is kept: :class:`TokenFile`, the SDK's token storage
in ``$HERMES_HOME/mcp-auth/NAME.json`` (``0600`` in a ``0700`` directory), and what reads or
removes it without the SDK's flow (:func:`token_path`, :func:`sign_in_fingerprint`,
:func:`sign_out`). Tokens are never logged."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from hermes_core._atomic_write import held_exclusively, write_atomically
from hermes_core._config import McpOAuthConfig
from hermes_core._paths import Environment
from hermes_core._private_files import PRIVATE_FILE_MODE
from hermes_core._redaction import REDACTED, shown_url, url_secrets

__all__ = [
    "TokenFile",
    "recorded_url",
    "sign_in_fingerprint",
    "sign_out",
    "token_path",
    "url_without_user",
]

log = logging.getLogger("hermes_core._mcp")

LOCK_WAIT = 20.0
"""How long (seconds) a refresh or a save waits for another process's lock of a sign-in file
(a refresh holds it for its exchange, well under a second): a process stopped or hung holding
it makes it a one-line error, within a server's default ``connect_timeout``."""


def token_path(env: Environment, server: str) -> Path:
    """Where the sign-in of ``server`` is kept: ``$HERMES_HOME/mcp-auth/NAME.json``, in the
    home's :attr:`~hermes_core._paths.Environment.data_home` (a credential of the user's, never
    in a repository's tree, nor one a repository planted there)."""
    return env.mcp_tokens_dir / f"{server}.json"


def sign_in_fingerprint(server: str, env: Environment) -> str:
    """A hash that changes when the sign-in of ``server`` does (login, logout, refresh): a
    connect failure recorded before it no longer stands for the server. Never the tokens."""
    try:
        found = token_path(env, server).stat()
    except OSError:
        return "signed-out"
    return hashlib.sha256(f"{found.st_mtime_ns}:{found.st_size}".encode()).hexdigest()[:16]


def recorded_url(url: str) -> str:
    """``url`` as a token file names it: without its user part, and the value of each secret
    query key (:func:`~hermes_core._redaction.url_secrets`: ``?token=``) as ``[redacted]``, so a
    password never lands in the file."""
    try:
        host = url_without_user(url)
    except ValueError:
        return shown_url(url)
    return url_secrets(host, lambda _name, _value: REDACTED)


def url_without_user(url: str) -> str:
    """``url`` without its user part (``https://me@host/mcp`` is ``https://host/mcp``): the
    server a sign-in is to. :class:`ValueError` for a URL ``urlsplit`` refuses."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


_TURNS: set[Path] = set()
"""The lock files this process holds for a refresh (:meth:`TokenFile.turn`); the refreshes of
one sign-in take turns in a process too (each waits for the lock in a worker thread)."""

_Model = TypeVar("_Model", OAuthToken, OAuthClientInformationFull, OAuthMetadata)


class TokenFile:
    """The SDK's token storage for one server, kept in :func:`token_path`.

    The file holds ``url`` (the server it belongs to, as :func:`recorded_url` writes it; a
    record of another URL is ignored, and one written before, with the URL's password, is
    rewritten without it when read),
    ``tokens`` with ``expires_at``, the ``client`` hermes registered, the server's metadata,
    and ``wanted_scope`` (the scopes a step-up asked for, requested by the next sign-in).
    A pre-registered client (``oauth.client_id``) comes from the configuration and is never
    written. With ``keep_registration`` (a sign-in) the stored tokens are not used (they are
    replaced when the new ones come) nor is a registered client whose redirect URI is not
    ``redirect_uri``; without it (a connection that cannot sign in) a client registered on
    the way is used and forgotten: it was registered with a redirect URI nobody listens on.

    Several hermes processes save the same file (one refreshes the tokens while another notes a
    step-up): each save takes an exclusive lock of ``.NAME.json.lock`` beside it, reads the file
    again, changes only the keys this process changed, and replaces it atomically, so neither
    writes over what the other just saved; the rewrite of an older file too. Only a sign-in
    writes a file that no longer holds this URL's sign-in (removed by ``hermes mcp logout``,
    or another URL's): a refresh does not bring it back.

    A refresh takes the same lock for its whole exchange (:meth:`turn`) and first reads the
    file again (:meth:`newer_tokens`): an authorization server that rotates refresh tokens
    refuses the one this process read at start once another process has refreshed it.
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
        self.url = recorded_url(url)
        self._url_as_given = url
        self._oauth = oauth
        self._redirect_uri = redirect_uri
        self._keep_registration = keep_registration
        self._lock = path.with_name(f".{path.name}.lock")
        self._changed: set[str] = set()
        """The keys this process changed since it last saved: a save writes those only."""
        self._record = self._read()
        self._unsaved_client: OAuthClientInformationFull | None = None
        if keep_registration:  # a sign-in: anew, and with a client that knows this redirect
            self._drop("tokens", "expires_at")
            if self.registered_redirect != redirect_uri:
                self._drop("client")

    def _read(self) -> dict[str, Any]:
        data, old = self._stored()
        if old:  # written before URLs were kept without their secrets: no longer with them
            try:
                with self._exclusively():
                    data, old = self._stored()  # another process may have saved it meanwhile
                    if old:
                        self._write(data)
            except OSError as exc:
                log.warning("the sign-in file %s cannot be rewritten: %s", self.path, exc)
        return data

    def _stored(self) -> tuple[dict[str, Any], bool]:
        """The record the file holds for this URL, and whether it names the URL with its
        secrets (written by an older hermes)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}, False
        except (OSError, ValueError) as exc:
            log.warning("the sign-in file %s cannot be read, ignored: %s", self.path, exc)
            return {}, False
        if not isinstance(data, dict) or data.get("url") not in (self.url, self._url_as_given):
            return {}, False
        return data, data["url"] != self.url

    def _set(self, key: str, value: Any) -> None:
        self._record[key] = value
        self._changed.add(key)

    def _drop(self, *keys: str) -> None:
        for key in keys:
            self._record.pop(key, None)
            self._changed.add(key)

    def _save(self) -> None:
        with self._exclusively():
            record, _old = self._stored()
            if not record and not self._keep_registration:
                # Signed out (``hermes mcp logout``) or signed in to another URL since this
                # process read it: a refresh must not bring the old sign-in back.
                log.info("MCP sign-in file %s no longer holds this sign-in: not saved", self.path)
                return
            for key in self._changed:
                if key in self._record:
                    record[key] = self._record[key]
                else:
                    record.pop(key, None)
            self._write(record)
        self._record = record
        self._changed.clear()

    def _exclusively(self) -> contextlib.AbstractContextManager[None]:
        """The lock of the file for a save, unless this process holds it already: a turn at
        refreshing (:meth:`turn`, of this file or of another connection's to the same
        server), which waits for this save to go on; a second lock of its own would wait for
        ever."""
        if self._lock in _TURNS:
            return contextlib.nullcontext()
        return held_exclusively(self._lock, LOCK_WAIT)

    def _write(self, record: dict[str, Any]) -> None:
        record["url"] = self.url
        text = json.dumps(record, indent=2, sort_keys=True)
        write_atomically(self.path, text + "\n", mode=PRIVATE_FILE_MODE)

    def _model(self, key: str, model: type[_Model]) -> _Model | None:
        return self._record_model(self._record, key, model)

    @staticmethod
    def _record_model(record: dict[str, Any], key: str, model: type[_Model]) -> _Model | None:
        value = record.get(key)
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
                self._set(key, model.model_dump(mode="json", exclude_none=True))

    def want_scope(self, scope: str | None) -> None:
        """Note the scopes a step-up asked for, for the next sign-in (saved when signed in
        before; a server never signed in to leaves no file)."""
        if scope and scope != self.wanted_scope and self._record.get("tokens"):
            self._set("wanted_scope", scope)
            self._save()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """This process's turn at refreshing the tokens: the lock every save takes, held for
        the block (waited for in a worker thread: the event loop goes on meanwhile). Another
        process refreshing the same sign-in waits for it, then finds the tokens saved in it
        (:meth:`newer_tokens`) instead of sending a refresh token the server has replaced."""
        with contextlib.ExitStack() as held:
            await anyio.to_thread.run_sync(self._take_turn, held)
            yield

    def _take_turn(self, held: contextlib.ExitStack) -> None:
        held.enter_context(held_exclusively(self._lock, LOCK_WAIT))
        # Noted in the thread that took it: a save in the event loop meanwhile must not wait
        # for a lock this process holds, while the turn waits for the loop.
        _TURNS.add(self._lock)
        held.callback(_TURNS.discard, self._lock)

    def newer_tokens(self, held: OAuthToken | None) -> OAuthToken | None:
        """The tokens the file holds now when they are not ``held`` (the ones this process
        uses): another process refreshed them, or signed in again, since this one read them.
        They become this process's, with their :attr:`expires_at`. ``None`` when the file holds
        the same access token, or none for this URL (signed out: nothing comes back)."""
        record, _old = self._stored()
        stored = self._record_model(record, "tokens", OAuthToken)
        if stored is None or "tokens" in self._changed:
            return None
        if held is not None and stored.access_token == held.access_token:
            return None
        self._record["tokens"] = record["tokens"]
        self._record["expires_at"] = record.get("expires_at")
        return stored

    async def get_tokens(self) -> OAuthToken | None:
        return self._model("tokens", OAuthToken)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._set("tokens", tokens.model_dump(mode="json", exclude_none=True))
        self._set(
            "expires_at",
            time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None,
        )
        if self._keep_registration:  # a sign-in asked for what a step-up wanted
            self._drop("wanted_scope")
        if self._unsaved_client is not None and self._keep_registration:
            self._set("client", self._unsaved_client.model_dump(mode="json", exclude_none=True))
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


def sign_out(server: str, env: Environment) -> bool:
    """``hermes mcp logout``: remove what the sign-in of ``server`` kept; whether there was
    anything."""
    path = token_path(env, server)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True

"""``HttpGateway``: the five routes of the gateway protocol over httpx, with their timeouts and
retries.

| route | timeout | retry |
|---|---|---|
| ``POST v1/connectors/search`` | 30 s | none |
| ``POST v1/connectors/schemas`` | 10 s | one |
| ``POST v1/connectors/execute`` | 60 s | one, with the same ``x-idempotency-key`` |
| ``POST v1/connectors/connections`` | 30 s | never |
| ``GET v1/connectors`` (every page) | 10 s | one |

401 and 403 mean signed out, 404 that the gateway does not serve this account; a 429 is retried
after its ``Retry-After`` when the route allows a retry and the wait fits in its timeout; 5xx,
timeouts and transport errors are retried where the table allows. Every failure is an answer
with ``failure`` set, never an exception.

Every answer is read with a cap, :data:`MAX_ANSWER_BYTES` (16 MiB): a longer one is refused as
soon as it passes the cap, before it is decoded, so that a gateway cannot make the host hold
hundreds of megabytes. An answer nested too deeply to decode (``[[[[...`` 100,000 deep) is a
failure too.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import anyio
import anyio.lowlevel
import httpx

from hermes_core import __version__
from hermes_core._plugin_support import (
    loopback_host,
    read_capped,
    retry_after_seconds,
    shown_url,
    tls_context,
    urls_shown_in,
)
from hermes_core.connectors import (
    ConnectorState,
    ExecuteCall,
    GatewayConnections,
    GatewayExecution,
    GatewayFailure,
    GatewayListing,
    GatewaySchemas,
    GatewaySearch,
)

from . import wire

T = TypeVar("T")

log = logging.getLogger("hermes_core.connectors.http")

_RETRY_PAUSE = 0.25
"""Seconds before retrying after a transport error or a 5xx."""
_DEFAULT_RETRY_AFTER = 1.0
"""Seconds to wait on a 429 that gives no usable ``Retry-After``."""
_MAX_PAGES = 50
"""Pages of ``GET v1/connectors`` followed at most."""
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""The longest answer body read from the gateway (16 MiB); a longer one is a failure."""


@dataclass(frozen=True)
class Route:
    """One route: method, path (relative to the gateway URL), timeout per attempt, attempts."""

    method: str
    path: str
    timeout: float
    attempts: int


SEARCH = Route("POST", "v1/connectors/search", 30.0, 1)
SCHEMAS = Route("POST", "v1/connectors/schemas", 10.0, 2)
EXECUTE = Route("POST", "v1/connectors/execute", 60.0, 2)
CONNECTIONS = Route("POST", "v1/connectors/connections", 30.0, 1)
LIST = Route("GET", "v1/connectors", 10.0, 2)


class HttpGateway:
    """A client of the gateway at ``url`` (its routes are relative to it) for ``token``; a
    search waits up to ``search_timeout`` seconds when that is longer than its route's 30 s.

    Connections are kept alive on the event loop that uses the client; on another event loop a
    new pool is made. :meth:`aclose` releases them.
    """

    def __init__(self, url: str, token: str, *, search_timeout: float | None = None) -> None:
        # A route is joined to the URL's path; its query (a tenant, say) goes with every
        # request, and a fragment, which HTTP never sends, is left out.
        parts = urlsplit(url)
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        self.base = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self._query = parse_qsl(parts.query, keep_blank_values=True)
        self.search_timeout = search_timeout
        self._headers = {
            "authorization": f"Bearer {token}",
            "accept": "application/json",
            "accept-encoding": "gzip, deflate",  # the codings read_capped expands, step by step
            "user-agent": f"hermes-core/{__version__}",
        }
        self._client: httpx.AsyncClient | None = None
        self._loop: anyio.lowlevel.EventLoopToken | None = None
        self._warned: set[str] = set()
        if _in_the_clear(self.base):
            log.warning(
                "tools.connectors.url is %s: plain HTTP beyond this machine's loopback, so the "
                "connector token crosses the network unencrypted with every request, and whoever "
                "sees it can use your connected apps; use the gateway's https:// URL",
                shown_url(url),  # a password or key in it stays out of the log
            )

    def __repr__(self) -> str:
        return f"HttpGateway({self.base!r})"  # never the token

    def _http(self) -> httpx.AsyncClient:
        loop = anyio.lowlevel.current_token()
        if self._client is None or self._loop != loop:
            # Proxies and certificates are not taken from the process environment: hermes-core
            # reads it only through its Environment.
            self._client = httpx.AsyncClient(
                headers=self._headers,
                timeout=None,  # each attempt runs under its route's deadline instead
                trust_env=False,
                verify=tls_context(trust_env=False) if self.base.startswith("https:") else False,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the connections of this event loop's pool."""
        client, self._client = self._client, None
        if client is not None and self._loop == anyio.lowlevel.current_token():
            await client.aclose()

    # Routes -----------------------------------------------------------------------------------

    async def search(self, use_cases: Sequence[str]) -> GatewaySearch:
        """``POST v1/connectors/search``, every use case in one request."""
        route = SEARCH
        if self.search_timeout is not None and self.search_timeout > route.timeout:
            # tools.connectors.search_timeout bounds the whole search; the route must not cut
            # it shorter.
            route = replace(route, timeout=self.search_timeout)
        body = await self._send(route, wire.search_body(use_cases))
        if isinstance(body, GatewayFailure):
            return GatewaySearch(failure=body)
        read = self._read(SEARCH, wire.read_search, body, len(use_cases))
        if isinstance(read, GatewayFailure):
            return GatewaySearch(failure=read)
        results, schemas, connections = read
        return GatewaySearch(results, schemas, connections)

    async def schemas(self, slugs: Sequence[str]) -> GatewaySchemas:
        """``POST v1/connectors/schemas``."""
        body = await self._send(SCHEMAS, {"tools": list(slugs)})
        if isinstance(body, GatewayFailure):
            return GatewaySchemas(failure=body)
        read = self._read(SCHEMAS, wire.read_schemas_answer, body)
        if isinstance(read, GatewayFailure):
            return GatewaySchemas(failure=read)
        return GatewaySchemas(*read)

    async def execute(self, calls: Sequence[ExecuteCall]) -> GatewayExecution:
        """``POST v1/connectors/execute`` with one idempotency key for all its attempts."""
        key = uuid.uuid4().hex
        body = await self._send(EXECUTE, wire.execute_body(calls), {"x-idempotency-key": key})
        if isinstance(body, GatewayFailure):
            return GatewayExecution(failure=body)
        read = self._read(EXECUTE, wire.read_execute, body, calls)
        if isinstance(read, GatewayFailure):
            return GatewayExecution(failure=read)
        return GatewayExecution(read)

    async def connect(self, connectors: Sequence[str], reinitiate: bool) -> GatewayConnections:
        """``POST v1/connectors/connections`` (never retried: it starts authorizations)."""
        request = {"connectors": list(connectors), "reinitiate": reinitiate}
        body = await self._send(CONNECTIONS, request)
        if isinstance(body, GatewayFailure):
            return GatewayConnections(failure=body)
        read = self._read(CONNECTIONS, wire.read_connections, body, connectors)
        if isinstance(read, GatewayFailure):
            return GatewayConnections(failure=read)
        return GatewayConnections(read)

    async def list_connectors(self) -> GatewayListing:
        """``GET v1/connectors``, following ``nextCursor`` over every page. A cursor asked for
        already ends paging, and an app listed again keeps its first entry (:func:`_add_page`):
        each is one warning, never an app listed twice."""
        items: dict[str, ConnectorState] = {}
        cursor: str | None = None
        asked: set[str] = set()
        for _ in range(_MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            body = await self._send(LIST, None, params=params)
            if isinstance(body, GatewayFailure):
                return GatewayListing(failure=body)
            read = self._read(LIST, wire.read_listing, body)
            if isinstance(read, GatewayFailure):
                return GatewayListing(failure=read)
            page, cursor = read
            again = _add_page(items, page)
            if cursor is not None and cursor in asked:
                self._warn_once(
                    f"the connector gateway repeated the cursor {cursor!r} of {LIST.path}: "
                    "paging stopped there, each app listed once"
                )
                break
            if again:
                self._warn_once(
                    f"the connector gateway listed {', '.join(sorted(set(again)))} more than "
                    f"once in {LIST.path}: the first entry is kept"
                )
            if cursor is None:
                break
            asked.add(cursor)
        return GatewayListing(list(items.values()))

    def _warn_once(self, message: str) -> None:
        # The list is polled every few seconds while `hermes connectors connect` waits.
        if message not in self._warned:
            self._warned.add(message)
            log.warning("%s", message)

    # One request ------------------------------------------------------------------------------

    def _read(self, route: Route, read: Callable[..., T], *given: Any) -> T | GatewayFailure:
        try:
            return read(*given)
        except wire.Malformed as exc:
            return GatewayFailure(
                "error", f"the answer to {route.path} does not follow the protocol: {exc}"
            )

    async def _send(
        self,
        route: Route,
        body: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None = None,
        *,
        params: Mapping[str, str] | None = None,
    ) -> Any | GatewayFailure:
        """The decoded JSON of a 2xx answer to ``route``, or the failure, after the attempts
        the route allows."""
        url = self.base + route.path
        named = shown_url(url)  # what a message says: it reaches the model and the terminal
        try:
            content = json.dumps(body, allow_nan=False).encode() if body is not None else None
        except (TypeError, ValueError) as exc:
            return GatewayFailure("error", f"the request cannot be sent as JSON: {exc}")
        sent = {**(headers or {}), "content-type": "application/json"} if content else headers
        failure = GatewayFailure("unreachable", f"{named} was not asked")
        # The URL's query first, then the route's: httpx's params would replace a query.
        query = httpx.QueryParams([*self._query, *(params or {}).items()])
        for attempt in range(route.attempts):
            more = attempt + 1 < route.attempts
            try:
                with anyio.fail_after(route.timeout):
                    request = self._http().stream(
                        route.method, url, content=content, headers=sent, params=query
                    )
                    async with request as response:
                        answer = await read_capped(response, MAX_ANSWER_BYTES)
            except TimeoutError:
                failure = GatewayFailure(
                    "unreachable", f"{named} did not answer within {route.timeout:g} s"
                )
            except httpx.HTTPError as exc:
                failure = GatewayFailure(
                    "unreachable",
                    f"cannot reach {named}: {type(exc).__name__}: {urls_shown_in(str(exc))}",
                )
            else:
                if answer is None:
                    return GatewayFailure(
                        "error",
                        f"{named} answered more than {MAX_ANSWER_BYTES >> 20} MiB "
                        f"({MAX_ANSWER_BYTES:,} bytes, the most a gateway answer may hold): the "
                        "answer was not read",
                    )
                verdict = _verdict(named, response, answer)
                if not isinstance(verdict, GatewayFailure):
                    return verdict
                failure = verdict
                if failure.kind == "rate_limited":
                    wait = failure.retry_after
                    if not more or wait is None or wait > route.timeout:
                        return failure
                    await anyio.sleep(wait)
                    continue
                if failure.kind != "unreachable":
                    return failure
            if more:
                await anyio.sleep(_RETRY_PAUSE)
        return failure


def _in_the_clear(url: str) -> bool:
    """Whether ``url`` is plain HTTP to a host beyond this machine's loopback (a name counts as
    beyond it: what it resolves to may change)."""
    parts = urlsplit(url)
    return parts.scheme == "http" and not loopback_host(parts.hostname or "")


def _add_page(items: dict[str, ConnectorState], page: Sequence[ConnectorState]) -> list[str]:
    """Add one page of the connector list to ``items`` (by connector); the connectors already
    listed are not added again (their first entry is kept) and are returned."""
    again: list[str] = []
    for item in page:
        if item.connector in items:
            again.append(item.connector)
        else:
            items[item.connector] = item
    return again


def _verdict(url: str, response: httpx.Response, content: bytes) -> Any | GatewayFailure:
    """The decoded body of a 2xx answer, else the failure it stands for (naming ``url``, as a
    message may show it)."""
    status = response.status_code
    try:
        body: Any = json.loads(content) if content else None
    except (ValueError, RecursionError) as exc:
        body = None
        if 200 <= status < 300:
            deep = isinstance(exc, RecursionError)
            what = "JSON nested too deeply to read" if deep else "a body not JSON"
            return GatewayFailure("error", f"{url} answered HTTP {status} with {what}")
    if 200 <= status < 300:
        return body
    told = wire.error_text(body, "")
    said = told or f"HTTP {status}"
    detail = f" ({told})" if told else ""  # the status is said once, not twice
    if status in (401, 403):
        return GatewayFailure("signed_out", f"{url} refused the token ({said})")
    if status == 404:
        return GatewayFailure("not_served", f"{url} does not serve this account ({said})")
    if status == 429:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        return GatewayFailure(
            "rate_limited",
            f"{url} is rate limiting ({said})",
            retry_after=_DEFAULT_RETRY_AFTER if wait is None else wait,
        )
    if status >= 500:
        return GatewayFailure("unreachable", f"{url} answered HTTP {status}{detail}")
    if 300 <= status < 400 and response.headers.get("location"):
        target = shown_url(response.headers["location"])
        return GatewayFailure(
            "error",
            f"{url} answered HTTP {status}, a redirect to {target}: a "
            "gateway's redirects are not followed (the token would go with them); if the gateway "
            "moved, set tools.connectors.url to its new address",
        )
    return GatewayFailure("error", f"{url} refused the request: HTTP {status}{detail}")

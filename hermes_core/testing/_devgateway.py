"""The reference gateway: a real HTTP server serving the gateway protocol from a fixture file.

``hermes connectors dev-gateway --fixtures FILE [--host 127.0.0.1] [--port N]`` runs it; tests
run it on 127.0.0.1, as a child process or in a thread (:class:`DevGateway`). It speaks the five
routes of ``spec/connectors.md`` under ``/v1/connectors`` and accepts any bearer token unless the
fixture sets ``token``.

- **Search** finds, for each use case, the tools one of whose words (the connector's slug and
  name, the words of the tool slug and of its description) is a word of the use case of at
  least three letters (case and a final ``s`` ignored), in fixture order: its order carries no
  ranking, and hermes-core must not trust it.
- **Execute** answers a tool's fixture ``result``; ``TOOL_NOT_FOUND`` for a slug it does not
  serve; ``CONNECTION_REQUIRED`` (``CONNECTION_EXPIRED`` for an expired connection) with a
  ``connectUrl`` when the app is not connected; ``INVALID_ARGUMENTS`` when a required argument
  is missing. A repeated ``x-idempotency-key`` answers the first answer again without running
  anything.
- A ``connectUrl`` is a real URL on this server, ``/_dev/connect/<connector>``: an HTTP GET of it
  connects the app (it stands in for the user finishing OAuth in a browser).

Test-only routes (no token needed):

- ``POST /_dev/faults`` ``{"slug": S, "fault": F, "ms": N, "retry_after": N, "times": N}``: ``S``
  is a tool slug, a connector slug or ``"*"``; a request concerning it (searching, describing,
  running or connecting it) then gets ``F``: ``delay`` (``ms`` milliseconds before answering),
  ``rate_limit`` (429 with ``Retry-After: retry_after``, default 1), ``error`` (500); ``times``
  requests (default: every one). ``expired`` expires the app's connection at once;
  ``prefixed_not_found`` makes the tool ``S`` (``<CONNECTOR>_X``) answer ``TOOL_NOT_FOUND`` under
  that slug and serves it under its literal slug ``X``. ``DELETE /_dev/faults`` clears them.
- ``GET /_dev/requests`` lists the protocol requests received (route, body, idempotency key,
  status), ``DELETE /_dev/requests`` forgets them; ``GET /_dev/state`` shows each app's
  connection.
"""

from __future__ import annotations

import copy
import json
import socket
import sys
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_core.testing._gateway_fixtures import Fixtures
from hermes_core.testing._gateway_state import (
    FAULTS,
    PAGE_SIZE,
    Answer,
    GatewayState,
    Refused,
    error_answer,
    faulted,
    missing_arguments,
    required_field,
    schema_of,
)

__all__ = ["FAULTS", "DevGateway", "GatewayState", "listening_line"]


def listening_line(url: str) -> str:
    """What the command prints on standard error once it accepts connections."""
    return f"listening on {url}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: GatewayState

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (it gave up on a delayed answer) is no error of ours."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests and the user read ``/_dev/requests`` instead."""

    # Plumbing ---------------------------------------------------------------------------------

    def _body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise Refused(400, "BAD_REQUEST", "the body is not JSON") from None

    def _send(self, answer: Answer) -> None:
        if isinstance(answer.body, str):
            payload = answer.body.encode()
            kind = "text/plain; charset=utf-8"
        else:
            payload = json.dumps(answer.body).encode()
            kind = "application/json"
        reason = HTTPStatus(answer.status).phrase
        headers = {"content-type": kind, "content-length": str(len(payload)), **answer.headers}
        head = f"{self.protocol_version} {answer.status} {reason}\r\n" + "".join(
            f"{key}: {value}\r\n" for key, value in headers.items()
        )
        # One write for the whole answer: a client waits for one segment, not two.
        self.wfile.write(head.encode("latin-1") + b"\r\n" + payload)

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        try:
            body = self._body()
            if path.startswith("/_dev/"):
                answer = self._dev(path, body)
            elif path.startswith("/v1/connectors"):
                answer = self._protocol(path, body, parse_qs(parts.query))
            else:
                raise Refused(404, "NOT_FOUND", f"no route {self.command} {path}")
        except Refused as refused:
            answer = error_answer(refused)
        self._send(answer)

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    @property
    def _state(self) -> GatewayState:
        return self.server.state

    def _base(self) -> str:
        return f"http://{self.headers.get('host') or _address(self.server)}"

    # Test-only routes -------------------------------------------------------------------------

    def _dev(self, path: str, body: Any) -> Answer:
        state = self._state
        with state.lock:
            if path.startswith("/_dev/connect/") and self.command == "GET":
                connector = path[len("/_dev/connect/") :]
                if connector not in state.apps:
                    raise Refused(404, "NOT_FOUND", f"no connector {connector!r}")
                state.status[connector] = "active"
                name = state.apps[connector].name
                return Answer(200, f"{name} is connected. You can close this page.\n")
            if path == "/_dev/faults" and self.command == "POST":
                state.add_fault(body)
                return Answer(200, {"ok": True})
            if path == "/_dev/faults" and self.command == "DELETE":
                state.faults.clear()
                state.literal.clear()
                state.hidden.clear()
                return Answer(200, {"ok": True})
            if path == "/_dev/requests" and self.command == "GET":
                return Answer(200, {"requests": copy.deepcopy(state.requests)})
            if path == "/_dev/requests" and self.command == "DELETE":
                state.requests.clear()
                return Answer(200, {"ok": True})
            if path == "/_dev/state" and self.command == "GET":
                return Answer(200, {"connections": dict(state.status)})
        raise Refused(404, "NOT_FOUND", f"no route {self.command} {path}")

    # The protocol -----------------------------------------------------------------------------

    def _protocol(self, path: str, body: Any, query: Mapping[str, list[str]]) -> Answer:
        state = self._state
        route = {
            ("POST", "/v1/connectors/search"): "search",
            ("POST", "/v1/connectors/schemas"): "schemas",
            ("POST", "/v1/connectors/execute"): "execute",
            ("POST", "/v1/connectors/connections"): "connections",
            ("GET", "/v1/connectors"): "list",
        }.get((self.command, path))
        key = self.headers.get("x-idempotency-key")
        record: dict[str, Any] = {"route": route, "method": self.command, "path": path}
        record.update({"body": body, "idempotency_key": key})
        try:
            if route is None:
                raise Refused(404, "NOT_FOUND", f"no route {self.command} {path}")
            self._authorize()
            with state.lock:
                replay = state.replies.get(key) if route == "execute" and key else None
                if replay is not None:
                    record["replayed"] = True
                    answer = replay
                    concerned: set[str] = set()
                else:
                    answer, concerned = getattr(self, f"_{route}")(body, query)
                faults = state.faults_for(concerned)
            answer = faulted(answer, faults)
            if route == "execute" and key and answer.status == 200:
                with state.lock:
                    state.replies.setdefault(key, answer)
        except Refused as refused:
            answer = error_answer(refused)
        record["status"] = answer.status
        with state.lock:
            state.requests.append(record)
        return answer

    def _authorize(self) -> None:
        header = self.headers.get("authorization") or ""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refused(401, "UNAUTHORIZED", "a bearer token is required")
        required = self._state.fixtures.token
        if required is not None and token.strip() != required:
            raise Refused(401, "UNAUTHORIZED", "the token is not accepted")

    def _search(self, body: Any, query: Any) -> tuple[Answer, set[str]]:
        queries = required_field(body, "queries", list)
        results, schemas, apps = [], {}, {}
        for index, item in enumerate(queries):
            use_case = item.get("useCase") if isinstance(item, Mapping) else None
            if not isinstance(use_case, str):
                raise Refused(400, "BAD_REQUEST", f"queries[{index}].useCase must be text")
            found = self._state.search(use_case)
            results.append({"useCase": use_case, "tools": [tool.slug for _, tool in found]})
            for app, tool in found:
                schemas[tool.slug] = schema_of(app, tool)
                apps[app.slug] = app
        connections = [
            {"connector": slug, "connected": self._state.status[slug] == "active"} for slug in apps
        ]
        answer = {"results": results, "schemas": schemas, "connections": connections}
        return Answer(200, answer), {*schemas, *apps}

    def _schemas(self, body: Any, query: Any) -> tuple[Answer, set[str]]:
        slugs = [slug for slug in required_field(body, "tools", list) if isinstance(slug, str)]
        schemas, missing, concerned = {}, [], set(slugs)
        for slug in slugs:
            found = self._state.find(slug)
            if found is None:
                missing.append(slug)
            else:
                schemas[slug] = schema_of(*found)
                concerned.add(found[0].slug)
        return Answer(200, {"schemas": schemas, "notFound": missing}), concerned

    def _execute(self, body: Any, query: Any) -> tuple[Answer, set[str]]:
        state = self._state
        results, concerned = [], set()
        for index, entry in enumerate(required_field(body, "tools", list)):
            if not isinstance(entry, Mapping):
                raise Refused(400, "BAD_REQUEST", f"tools[{index}] must be an object")
            connector, slug = str(entry.get("connector", "")), str(entry.get("tool", ""))
            concerned |= {connector, slug}
            result: dict[str, Any] = {"connector": connector, "tool": slug}
            tool = state.tool(connector, slug)
            arguments = entry.get("arguments", {})
            if tool is None:
                result["error"] = {
                    "code": "TOOL_NOT_FOUND",
                    "message": f"{connector} has no tool {slug}",
                }
            elif state.status[connector] != "active":
                expired = state.status[connector] == "expired"
                result["error"] = {
                    "code": "CONNECTION_EXPIRED" if expired else "CONNECTION_REQUIRED",
                    "message": f"the {state.apps[connector].name} connection "
                    + ("expired" if expired else "is not set up"),
                    "connectUrl": f"{self._base()}/_dev/connect/{connector}",
                }
            elif not isinstance(arguments, Mapping):
                result["error"] = {"code": "INVALID_ARGUMENTS", "message": "not an object"}
            elif missing := missing_arguments(tool, arguments):
                result["error"] = {
                    "code": "INVALID_ARGUMENTS",
                    "message": f"missing required arguments: {', '.join(missing)}",
                }
            else:
                concerned.add(tool.slug)
                result["data"] = copy.deepcopy(tool.result)
            results.append(result)
        return Answer(200, {"results": results}), concerned

    def _connections(self, body: Any, query: Any) -> tuple[Answer, set[str]]:
        state = self._state
        wanted = [
            slug for slug in required_field(body, "connectors", list) if isinstance(slug, str)
        ]
        reinitiate = bool(body.get("reinitiate")) if isinstance(body, Mapping) else False
        results = []
        for slug in wanted:
            if slug not in state.apps:
                results.append({"connector": slug, "status": "failed"})
            elif state.status[slug] == "active" and not reinitiate:
                results.append({"connector": slug, "status": "active"})
            else:
                if state.status[slug] != "active":
                    state.status[slug] = (
                        "expired" if state.status[slug] == "expired" else "initiated"
                    )
                results.append(
                    {
                        "connector": slug,
                        "status": "initiated",
                        "connectUrl": f"{self._base()}/_dev/connect/{slug}",
                    }
                )
        return Answer(200, {"results": results}), set(wanted)

    def _list(self, body: Any, query: Mapping[str, list[str]]) -> tuple[Answer, set[str]]:
        state = self._state
        cursor = (query.get("cursor") or ["0"])[0]
        start = int(cursor) if cursor.isdigit() else 0
        apps = list(state.apps)
        page = apps[start : start + PAGE_SIZE]
        items = [
            {
                "connector": slug,
                "connected": state.status[slug] == "active",
                "connectionStatus": state.status[slug],
            }
            for slug in page
        ]
        after = start + PAGE_SIZE
        answer = {"items": items, "nextCursor": str(after) if after < len(apps) else None}
        return Answer(200, answer), set(page)


def _address(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    text = host.decode() if isinstance(host, bytes) else str(host)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


class DevGateway:
    """The reference gateway on a real socket: :meth:`start` serves it in a thread (tests),
    :meth:`serve_forever` in the calling thread (the command). ``port`` 0 picks a free one."""

    def __init__(self, fixtures: Fixtures, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = GatewayState(fixtures)
        server = _Server6 if ":" in host else _Server
        self._server = server((host, port), _Handler)
        self._server.state = self.state
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT/``: the gateway URL for ``tools.connectors.url``."""
        return f"http://{_address(self._server)}/"

    def start(self) -> DevGateway:
        """Serve in a daemon thread; it accepts connections when this returns."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # so that close() returns at once
            name="hermes-dev-gateway",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve until :meth:`close` (or an interrupt)."""
        self._server.serve_forever()

    def close(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> DevGateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

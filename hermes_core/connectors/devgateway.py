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
import re
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_core.connectors.fixtures import FixtureConnector, Fixtures, FixtureTool

__all__ = ["FAULTS", "DevGateway", "GatewayState", "listening_line"]

FAULTS = frozenset({"delay", "rate_limit", "error", "expired", "prefixed_not_found"})
_PAGE_SIZE = 25
_STOP_WORDS = frozenset({"the", "and", "for", "with", "from", "into", "that", "this", "your"})
_WORD = re.compile(r"[a-z0-9]+")


def listening_line(url: str) -> str:
    """What the command prints on standard error once it accepts connections."""
    return f"listening on {url}"


def _words(*texts: str) -> set[str]:
    words: set[str] = set()
    for text in texts:
        for word in _WORD.findall(text.lower()):
            words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


class _Refused(Exception):
    """An error answer: its HTTP status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class _Fault:
    slug: str
    fault: str
    ms: int = 0
    retry_after: float = 1.0
    times: int | None = None


@dataclass
class _Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class GatewayState:
    """What the reference gateway knows and remembers, shared by its request threads."""

    def __init__(self, fixtures: Fixtures) -> None:
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.apps: dict[str, FixtureConnector] = {app.slug: app for app in fixtures.connectors}
        self.status: dict[str, str] = {
            app.slug: "active" if app.connected else "not_connected" for app in fixtures.connectors
        }
        self.faults: list[_Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.replies: dict[str, _Answer] = {}
        self.literal: dict[tuple[str, str], FixtureTool] = {}
        """(connector, literal slug) -> tool, for tools under ``prefixed_not_found``..."""
        self.hidden: set[tuple[str, str]] = set()
        """...whose (connector, prefixed slug) then answers ``TOOL_NOT_FOUND``."""
        self._words = {
            (app.slug, tool.slug): _words(app.slug, app.name, tool.slug, tool.description)
            for app in fixtures.connectors
            for tool in app.tools
        }

    # Lookups ----------------------------------------------------------------------------------

    def tool(self, connector: str, slug: str) -> FixtureTool | None:
        """The tool ``slug`` of ``connector`` as a call asks for it."""
        app = self.apps.get(connector)
        if app is None or (connector, slug) in self.hidden:
            return None
        literal = self.literal.get((connector, slug))
        if literal is not None:
            return literal
        return next((tool for tool in app.tools if tool.slug == slug), None)

    def find(self, slug: str) -> tuple[FixtureConnector, FixtureTool] | None:
        """The app and tool of a tool slug, whichever app serves it."""
        for app in self.fixtures.connectors:
            for tool in app.tools:
                if tool.slug == slug:
                    return app, tool
        return None

    def search(self, use_case: str) -> list[tuple[FixtureConnector, FixtureTool]]:
        """The tools found for one use case, in fixture order."""
        wanted = {w for w in _words(use_case) if len(w) >= 3 and w not in _STOP_WORDS}
        return [
            (app, tool)
            for app in self.fixtures.connectors
            for tool in app.tools
            if wanted & self._words[(app.slug, tool.slug)]
        ]

    # Faults -----------------------------------------------------------------------------------

    def add_fault(self, data: Any) -> None:
        """Register a fault (``POST /_dev/faults``); ``expired`` and ``prefixed_not_found`` act
        at once."""
        if not isinstance(data, Mapping):
            raise _Refused(400, "BAD_REQUEST", "a fault is an object {slug, fault, ...}")
        slug, kind = data.get("slug"), data.get("fault")
        if not isinstance(slug, str) or not slug:
            raise _Refused(400, "BAD_REQUEST", "slug must be a tool slug, a connector or '*'")
        if kind not in FAULTS:
            raise _Refused(400, "BAD_REQUEST", f"fault must be one of {sorted(FAULTS)}")
        if kind == "expired":
            connector = slug if slug in self.apps else None
            found = self.find(slug)
            connector = connector or (found[0].slug if found else None)
            if connector is None:
                raise _Refused(400, "BAD_REQUEST", f"no connector or tool {slug!r}")
            self.status[connector] = "expired"
            return
        if kind == "prefixed_not_found":
            found = self.find(slug)
            prefix = found[0].slug.upper() + "_" if found else ""
            if found is None or not slug.startswith(prefix) or slug == prefix:
                raise _Refused(400, "BAD_REQUEST", f"{slug!r} is no tool slug <CONNECTOR>_X")
            self.literal[(found[0].slug, slug[len(prefix) :])] = found[1]
            self.hidden.add((found[0].slug, slug))
            return
        times = data.get("times")
        fault = _Fault(
            slug,
            kind,
            ms=int(data.get("ms", 0)),
            retry_after=float(data.get("retry_after", 1)),
            times=int(times) if times is not None else None,
        )
        self.faults.append(fault)

    def faults_for(self, concerned: Iterable[str]) -> list[_Fault]:
        """The faults a request concerning these slugs gets (each used up by one)."""
        slugs = set(concerned) | {"*"}
        chosen = []
        for fault in self.faults:
            if fault.slug in slugs and (fault.times is None or fault.times > 0):
                if fault.times is not None:
                    fault.times -= 1
                chosen.append(fault)
        return chosen


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
            raise _Refused(400, "BAD_REQUEST", "the body is not JSON") from None

    def _send(self, answer: _Answer) -> None:
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
                raise _Refused(404, "NOT_FOUND", f"no route {self.command} {path}")
        except _Refused as refused:
            answer = _error(refused)
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

    def _dev(self, path: str, body: Any) -> _Answer:
        state = self._state
        with state.lock:
            if path.startswith("/_dev/connect/") and self.command == "GET":
                connector = path[len("/_dev/connect/") :]
                if connector not in state.apps:
                    raise _Refused(404, "NOT_FOUND", f"no connector {connector!r}")
                state.status[connector] = "active"
                name = state.apps[connector].name
                return _Answer(200, f"{name} is connected. You can close this page.\n")
            if path == "/_dev/faults" and self.command == "POST":
                state.add_fault(body)
                return _Answer(200, {"ok": True})
            if path == "/_dev/faults" and self.command == "DELETE":
                state.faults.clear()
                state.literal.clear()
                state.hidden.clear()
                return _Answer(200, {"ok": True})
            if path == "/_dev/requests" and self.command == "GET":
                return _Answer(200, {"requests": copy.deepcopy(state.requests)})
            if path == "/_dev/requests" and self.command == "DELETE":
                state.requests.clear()
                return _Answer(200, {"ok": True})
            if path == "/_dev/state" and self.command == "GET":
                return _Answer(200, {"connections": dict(state.status)})
        raise _Refused(404, "NOT_FOUND", f"no route {self.command} {path}")

    # The protocol -----------------------------------------------------------------------------

    def _protocol(self, path: str, body: Any, query: Mapping[str, list[str]]) -> _Answer:
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
                raise _Refused(404, "NOT_FOUND", f"no route {self.command} {path}")
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
            answer = _faulted(answer, faults)
            if route == "execute" and key and answer.status == 200:
                with state.lock:
                    state.replies.setdefault(key, answer)
        except _Refused as refused:
            answer = _error(refused)
        record["status"] = answer.status
        with state.lock:
            state.requests.append(record)
        return answer

    def _authorize(self) -> None:
        header = self.headers.get("authorization") or ""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _Refused(401, "UNAUTHORIZED", "a bearer token is required")
        required = self._state.fixtures.token
        if required is not None and token.strip() != required:
            raise _Refused(401, "UNAUTHORIZED", "the token is not accepted")

    def _search(self, body: Any, query: Any) -> tuple[_Answer, set[str]]:
        queries = _field(body, "queries", list)
        results, schemas, apps = [], {}, {}
        for index, item in enumerate(queries):
            use_case = item.get("useCase") if isinstance(item, Mapping) else None
            if not isinstance(use_case, str):
                raise _Refused(400, "BAD_REQUEST", f"queries[{index}].useCase must be text")
            found = self._state.search(use_case)
            results.append({"useCase": use_case, "tools": [tool.slug for _, tool in found]})
            for app, tool in found:
                schemas[tool.slug] = _schema(app, tool)
                apps[app.slug] = app
        connections = [
            {"connector": slug, "connected": self._state.status[slug] == "active"} for slug in apps
        ]
        answer = {"results": results, "schemas": schemas, "connections": connections}
        return _Answer(200, answer), {*schemas, *apps}

    def _schemas(self, body: Any, query: Any) -> tuple[_Answer, set[str]]:
        slugs = [slug for slug in _field(body, "tools", list) if isinstance(slug, str)]
        schemas, missing, concerned = {}, [], set(slugs)
        for slug in slugs:
            found = self._state.find(slug)
            if found is None:
                missing.append(slug)
            else:
                schemas[slug] = _schema(*found)
                concerned.add(found[0].slug)
        return _Answer(200, {"schemas": schemas, "notFound": missing}), concerned

    def _execute(self, body: Any, query: Any) -> tuple[_Answer, set[str]]:
        state = self._state
        results, concerned = [], set()
        for index, entry in enumerate(_field(body, "tools", list)):
            if not isinstance(entry, Mapping):
                raise _Refused(400, "BAD_REQUEST", f"tools[{index}] must be an object")
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
            elif missing := _missing(tool, arguments):
                result["error"] = {
                    "code": "INVALID_ARGUMENTS",
                    "message": f"missing required arguments: {', '.join(missing)}",
                }
            else:
                concerned.add(tool.slug)
                result["data"] = copy.deepcopy(tool.result)
            results.append(result)
        return _Answer(200, {"results": results}), concerned

    def _connections(self, body: Any, query: Any) -> tuple[_Answer, set[str]]:
        state = self._state
        wanted = [slug for slug in _field(body, "connectors", list) if isinstance(slug, str)]
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
        return _Answer(200, {"results": results}), set(wanted)

    def _list(self, body: Any, query: Mapping[str, list[str]]) -> tuple[_Answer, set[str]]:
        state = self._state
        cursor = (query.get("cursor") or ["0"])[0]
        start = int(cursor) if cursor.isdigit() else 0
        apps = list(state.apps)
        page = apps[start : start + _PAGE_SIZE]
        items = [
            {
                "connector": slug,
                "connected": state.status[slug] == "active",
                "connectionStatus": state.status[slug],
            }
            for slug in page
        ]
        after = start + _PAGE_SIZE
        answer = {"items": items, "nextCursor": str(after) if after < len(apps) else None}
        return _Answer(200, answer), set(page)


def _address(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    text = host.decode() if isinstance(host, bytes) else str(host)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


def _field(body: Any, name: str, kind: type) -> Any:
    value = body.get(name) if isinstance(body, Mapping) else None
    if not isinstance(value, kind):
        raise _Refused(400, "BAD_REQUEST", f"the body needs {name!r} ({kind.__name__})")
    return value


def _schema(app: FixtureConnector, tool: FixtureTool) -> dict[str, Any]:
    schema = {
        "connector": app.slug,
        "tool": tool.slug,
        "description": tool.description,
        "inputSchema": copy.deepcopy(dict(tool.input_schema)),
    }
    if tool.annotations:
        schema["annotations"] = copy.deepcopy(dict(tool.annotations))
    return schema


def _missing(tool: FixtureTool, arguments: Mapping[str, Any]) -> list[str]:
    required = tool.input_schema.get("required")
    if not isinstance(required, list):
        return []
    return [str(name) for name in required if name not in arguments]


def _error(refused: _Refused) -> _Answer:
    return _Answer(refused.status, {"error": {"code": refused.code, "message": refused.message}})


def _faulted(answer: _Answer, faults: list[_Fault]) -> _Answer:
    delay = sum(fault.ms for fault in faults if fault.fault == "delay")
    if delay:
        time.sleep(delay / 1000)
    for fault in faults:
        if fault.fault == "rate_limit":
            return _Answer(
                429,
                {"error": {"code": "RATE_LIMITED", "message": "slow down"}},
                {"retry-after": f"{fault.retry_after:g}"},
            )
        if fault.fault == "error":
            return _Answer(
                500, {"error": {"code": "INTERNAL", "message": "the gateway failed (a fault)"}}
            )
    return answer


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

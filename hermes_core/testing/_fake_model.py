"""``FakeModelServer``: a scripted stand-in for a model's HTTP API (no model can run in CI).

A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire
(``POST /v1/chat/completions``) and the Anthropic messages wire (``POST /v1/messages``), plain
and streamed, answering :class:`FakeTurn` s (see :mod:`._fake_model_wire` for what it sends;
a request the vendor refuses outright, as one with too many cache breakpoints, gets its 400),
the OpenAI-style images API (``POST /v1/images/generations``, :mod:`._fake_images`), and
the model listing both APIs answer (``GET /v1/models``, each in its vendor's shape: what
``hermes doctor`` asks, costing no tokens).
It serves in its own threads, so an async test's event loop is never blocked, and records
every request; as an HTTP proxy (``HTTP_PROXY``), those for any host (OpenRouter's ``/api/v1``).
"""

from __future__ import annotations

import asyncio
import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from hermes_core.testing._fake_images import IMAGES_PATH, images_answer
from hermes_core.testing._fake_model_wire import (
    ERROR_MESSAGES,
    FakeTurn,
    Wire,
    anthropic_answer,
    anthropic_events,
    context_overflow_turn,
    error_body,
    models_answer,
    openai_answer,
    openai_chunks,
    request_tokens,
)
from hermes_core.testing._fake_refusals import refusal
from hermes_core.testing._fake_requests import (
    RecordedRequest,
    empty_text_refusal,
    roles_refusal,
)

__all__ = ["FakeModelServer", "RecordedRequest", "Responder"]

_ROUTES: Mapping[str, Wire] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}
MODELS_PATH = "/v1/models"


Responder = Callable[[RecordedRequest], FakeTurn]
"""Picks the answer to a request (instead of the next scripted turn)."""


class _Abort(Exception):
    """The client went away, or the server is closing: stop answering."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a cancelled stream) is no error of ours."""
        if not isinstance(sys.exc_info()[1], ConnectionError | _Abort):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``FakeModelServer.requests`` instead."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        headers = {key.lower(): value for key, value in self.headers.items()}
        # Anthropic's SDK says its API version; an OpenAI client does not.
        wire: Wire = "anthropic" if "anthropic-version" in headers else "openai"
        if path.rstrip("/").removeprefix("/api") != MODELS_PATH:
            self._json(404, error_body(wire, 404, f"no route {path}"))
            return
        fake = self.server.fake
        request = fake._received(wire, path, headers, {})
        try:
            if not self._key_refused(request):
                self._json(200, models_answer(wire, fake.models))
        finally:
            fake._finished(request)

    def _key_refused(self, request: RecordedRequest) -> bool:
        """Answer 401, as the vendor does, when the server takes one key and got another."""
        wanted = self.server.fake.api_key
        if wanted is None or request.api_key == wanted:
            return False
        message = ERROR_MESSAGES[401].replace("{key}", request.api_key or "")
        self._json(401, error_body(request.wire, 401, message))
        return True

    def do_POST(self) -> None:
        path = urlsplit(self.path).path  # a proxy's request names the whole URL
        wire = _ROUTES.get(path.rstrip("/").removeprefix("/api"))
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if wire is None and path.rstrip("/") == IMAGES_PATH:
            self._images(path, raw)
            return
        if wire is None:
            self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, error_body(wire, 400, "the body is not JSON"))
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        fake = self.server.fake
        request = fake._received(wire, path, headers, body)
        try:
            if self._key_refused(request):
                return
            refused = (
                refusal(wire, body)
                or (fake.strict_roles and roles_refusal(wire, body))
                or (fake.strict_text and empty_text_refusal(wire, body))
            )
            self._answer(request, refused or fake._turn_for(request))
        except (_Abort, ConnectionError):
            request.disconnected = True
            self.close_connection = True
        finally:
            fake._finished(request)

    def _images(self, path: str, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, error_body("openai", 400, "the body is not JSON"))
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        fake = self.server.fake
        request = fake._received("openai", path, headers, body)
        try:
            if not str(body.get("prompt") or "").strip():
                self._json(400, error_body("openai", 400, "'prompt' is a required property"))
            else:
                self._json(200, images_answer(body))
        finally:
            fake._finished(request)

    def _answer(self, request: RecordedRequest, turn: FakeTurn | str) -> None:
        wire, body = request.wire, request.body
        if isinstance(turn, str):  # nothing scripted: a 400 saying so fails the test at once
            self._json(400, error_body(wire, 400, turn))
            return
        if turn.delay:
            self._hold(None, turn.delay)
        if turn.gate is not None and (turn.hold_after == 0 or not request.stream):
            self._hold(turn.gate)
        if turn.error is not None:
            message = turn.error_message or ERROR_MESSAGES.get(turn.error, "Scripted error.")
            message = message.replace("{key}", request.api_key or "")
            retry = turn.error == 429 and turn.retry_after is not None
            extra = {"retry-after": f"{turn.retry_after:g}"} if retry else {}
            body = error_body(wire, turn.error, message, turn.error_code)
            self._json(turn.error, body, extra)
            return
        if not request.stream:
            build = openai_answer if wire == "openai" else anthropic_answer
            self._json(200, build(turn, body, request.number))
            return
        if wire == "openai":
            events = [
                f"data: {json.dumps(c)}\n\n" for c in openai_chunks(turn, body, request.number)
            ]
            events.append("data: [DONE]\n\n")
        else:
            events = [
                f"event: {name}\ndata: {json.dumps(data)}\n\n"
                for name, data in anthropic_events(turn, body, request.number)
            ]
        self._start_stream()
        for sent, event in enumerate(events):
            if turn.gate is not None and sent == turn.hold_after:
                self._hold(turn.gate)
            self._chunk(event.encode())
        self._chunk(b"")

    def _hold(self, gate: threading.Event | None, for_: float = 0) -> None:
        """Wait for ``gate`` (or ``for_`` seconds); give up when the client goes away (a
        cancelled request) or the server closes."""
        closing = self.server.fake._closing
        end = time.monotonic() + for_
        while True:
            if gate is not None:
                if gate.wait(0.02):
                    return
            else:
                left = end - time.monotonic()
                if left <= 0:
                    return
                closing.wait(min(0.02, left))
            if closing.is_set() or self._client_gone():
                raise _Abort

    def _client_gone(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return peeked == b""

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        head = {"content-type": "application/json", "content-length": str(len(data))}
        self._head(status, {**head, **(headers or {})})
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self._head(
            200,
            {
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "transfer-encoding": "chunked",
            },
        )

    def _head(self, status: int, headers: Mapping[str, str]) -> None:
        lines = [f"{self.protocol_version} {status} {HTTPStatus(status).phrase}\r\n"]
        lines += [f"{key}: {value}\r\n" for key, value in headers.items()]
        self.wfile.write("".join(lines).encode("latin-1") + b"\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class FakeModelServer:
    """A fake model API on 127.0.0.1 for tests: both wire formats, scripted answers, every
    request recorded. No model runs: each answer is the next :class:`FakeTurn` of ``turns``
    (more can be added with :meth:`add`), or what ``responder`` picks for the request (when
    several conversations run at once). A request with nothing scripted gets a 400 saying so.
    With ``context_limit``, a request past that many tokens (a quarter of its JSON's
    characters) gets the vendor's context-overflow 400 instead, taking no scripted turn. With
    ``strict_roles``, a conversation whose user and assistant messages do not take turns gets
    the 400 of a local server's chat template (:func:`._fake_requests.roles_refusal`); with
    ``strict_text``, one with a tool result of no text gets Gemini's 400
    (:func:`._fake_requests.empty_text_refusal`).
    ``GET /v1/models`` lists ``models``. With ``api_key``, a request sending another key (or
    none) gets the vendor's 401, as a real API answers a wrong key.

    Use it as a context manager, sync or async (it serves in its own threads)::

        with FakeModelServer([FakeTurn(text="Hello!")]) as server:
            settings = ModelSettings("openai", "fake-model", base_url=server.openai_base_url)
            ...
            assert server.requests[0].first_user_text == "Hi"

    ``max_in_flight`` is the most requests answered at once so far; :meth:`wait_for` waits
    for a condition on the server (from a thread), :meth:`wait_for_async` from an event loop.
    """

    def __init__(
        self,
        turns: Iterable[FakeTurn] = (),
        *,
        responder: Responder | None = None,
        context_limit: int | None = None,
        strict_roles: bool = False,
        strict_text: bool = False,
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
    ) -> None:
        self.context_limit = context_limit
        self.models = tuple(models)
        """The model names ``GET /v1/models`` lists."""
        self.api_key = api_key
        """The one key the server takes (``None``: any, or none)."""
        self.strict_roles = strict_roles
        self.strict_text = strict_text
        self._turns: deque[FakeTurn] = deque(turns)
        self._responder = responder
        self._requests: list[RecordedRequest] = []
        self._changed = threading.Condition()
        self._closing = threading.Event()
        self._in_flight = 0
        self.max_in_flight = 0
        """The most requests the server was answering at the same time."""
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread: threading.Thread | None = None

    # Script and records -----------------------------------------------------------------------

    def add(self, *turns: FakeTurn) -> None:
        """Script more answers, after those not yet given."""
        with self._changed:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        """How many scripted turns are not given yet."""
        with self._changed:
            return len(self._turns)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order."""
        with self._changed:
            return list(self._requests)

    @property
    def in_flight(self) -> int:
        """How many requests the server is answering now."""
        with self._changed:
            return self._in_flight

    def _received(
        self, wire: Wire, path: str, headers: Mapping[str, str], body: Any
    ) -> RecordedRequest:
        with self._changed:
            request = RecordedRequest(len(self._requests) + 1, wire, path, dict(headers), body)
            self._requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._changed.notify_all()
            return request

    def _turn_for(self, request: RecordedRequest) -> FakeTurn | str:
        tokens = request_tokens(request.body)
        if self.context_limit is not None and tokens > self.context_limit:
            return context_overflow_turn(request.wire, tokens, self.context_limit)
        if self._responder is not None:
            try:
                return self._responder(request)
            except Exception as error:  # a broken test says so, as a refusal nobody retries
                return f"FakeModelServer: the responder raised {error!r}"
        with self._changed:
            if self._turns:
                return self._turns.popleft()
        return f"FakeModelServer: no scripted turn left for request {request.number}"

    def _finished(self, request: RecordedRequest) -> None:
        with self._changed:
            request.done = True
            self._in_flight -= 1
            self._changed.notify_all()

    def wait_for(self, condition: Callable[[FakeModelServer], bool], timeout: float = 30.0) -> None:
        """Block until ``condition(server)`` holds (checked at every request's start and end);
        :class:`TimeoutError` after ``timeout`` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self), timeout):
                raise TimeoutError(f"FakeModelServer: condition not met in {timeout:g} s")

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> None:
        """Block until ``count`` requests have arrived."""
        self.wait_for(lambda server: len(server._requests) >= count, timeout)

    async def wait_for_async(
        self, condition: Callable[[FakeModelServer], bool], timeout: float = 30.0
    ) -> None:
        """:meth:`wait_for` without blocking the event loop."""
        await asyncio.to_thread(self.wait_for, condition, timeout)

    # Lifetime ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The ``model.base_url`` of the ``openai`` provider (the path ends in ``/v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The ``model.base_url`` of the ``anthropic`` provider (its SDK adds ``/v1``)."""
        return self.url

    def start(self) -> FakeModelServer:
        """Serve in a daemon thread; it accepts connections when this returns."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="hermes-fake-model",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: held answers are dropped, the socket closed."""
        self._closing.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> FakeModelServer:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

"""Fakes of the remote search services web_search talks to, on 127.0.0.1: a SearXNG instance
speaking its JSON API, and the Brave Search API replaying the wire format of its documentation
(brave_web_search.json, the shape of the documented WebSearchApiResponse). Each records the
requests it was sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

BRAVE_ANSWER = Path(__file__).with_name("brave_web_search.json")
BRAVE_KEY = "brave-test-key-0123"

SEARXNG_RESULTS = [
    {
        "url": f"https://site{n}.example/otters",
        "title": f"Otter result {n}",
        "content": f"Snippet {n} about river otters.",
        "engine": "duckduckgo",
        "parsed_url": ["https", f"site{n}.example", "/otters", "", "", ""],
        "template": "default.html",
        "engines": ["duckduckgo", "brave"],
        "positions": [n],
        "score": 1.0 / n,
        "category": "general",
        "publishedDate": None,
    }
    for n in range(1, 13)
]


@dataclass
class FakeService:
    """A running fake: its ``url`` and the ``requests`` (path, query, headers) it was sent."""

    url: str
    requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = field(default_factory=list)


def _answer(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def _serving(respond: Any) -> Iterator[FakeService]:
    service = FakeService("")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            service.requests.append((parts.path, query, dict(self.headers.items())))
            respond(self, parts.path, query)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    service.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def fake_searxng(*, json_enabled: bool = True) -> Iterator[FakeService]:
    """A fake SearXNG instance: ``/search?format=json`` answers its JSON; another format, or
    JSON when ``json_enabled`` is false, is 403 as a real instance answers."""

    def respond(handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]]) -> None:
        if path != "/search":
            _answer(handler, 404, {"error": "not found"})
        elif query.get("format") != ["json"] or not json_enabled:
            _answer(handler, 403, {"error": "forbidden"})
        else:
            _answer(
                handler,
                200,
                {
                    "query": query["q"][0],
                    "number_of_results": 0,
                    "results": SEARXNG_RESULTS,
                    "answers": [],
                    "corrections": [],
                    "infoboxes": [],
                    "suggestions": ["river otter facts"],
                    "unresponsive_engines": [],
                },
            )

    with _serving(respond) as service:
        yield service


@contextmanager
def fake_brave() -> Iterator[FakeService]:
    """A fake Brave Search API at ``/res/v1/web/search``: 401 without the right
    ``X-Subscription-Token``, else the documented answer."""
    recorded = json.loads(BRAVE_ANSWER.read_text(encoding="utf-8"))

    def respond(handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]]) -> None:
        if path != "/res/v1/web/search":
            _answer(handler, 404, {"error": "not found"})
        elif handler.headers.get("X-Subscription-Token") != BRAVE_KEY:
            _answer(handler, 401, {"type": "ErrorResponse", "error": {"status": 401}})
        else:
            _answer(handler, 200, recorded)

    with _serving(respond) as service:
        yield service


FLOOD_BYTES = 64 * 1024 * 1024
DRIP_PAUSE = 0.25
DRIP_BYTES = 80


@contextmanager
def fake_flooding_search(how: str) -> Iterator[FakeService]:
    """A fake search service (SearXNG's and Brave's paths alike) whose every answer is a 200
    of JSON that never ends well: ``flood``, 64 MiB of it (a search answer is a few KB);
    ``drip``, a byte every quarter of a second, 80 in all (20 s)."""

    def respond(handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()  # no length: the answer ends when the connection closes
        try:
            if how == "flood":
                handler.wfile.write(b'{"results": [], "web": {"results": []}, "pad": "')
                for _ in range(FLOOD_BYTES >> 20):
                    handler.wfile.write(b" " * (1 << 20))
                handler.wfile.write(b'"}')
            else:
                for _ in range(DRIP_BYTES):
                    handler.wfile.write(b" ")
                    handler.wfile.flush()
                    time.sleep(DRIP_PAUSE)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader stopped, as it should

    with _serving(respond) as service:
        yield service


@contextmanager
def fake_failing_search(status: int, headers: dict[str, str]) -> Iterator[FakeService]:
    """A fake search service (SearXNG's and Brave's paths alike) answering every request with
    ``status`` and ``headers`` (a rate limit's 429 and its Retry-After, a 503 of a service
    down, a 404 of an address that is no instance)."""

    def respond(handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]]) -> None:
        data = b"<html><body>not a search answer</body></html>"
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    with _serving(respond) as service:
        yield service

"""Fixtures of the browser tools' tests: a real headless Chromium (the user's, as the tools find
it; missing, the tests fail with the install command), a local site on 127.0.0.1 served by a
real HTTP server, and hosts whose browser may reach it."""

from __future__ import annotations

import html
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hermes_core import Config, Environment, ToolResult
from hermes_core.testing import make_host
from plugins_builtin.browser.chromium import ChromiumMissing, find_chromium

PAGES = {
    "/": (
        "<title>Sign in</title><h1>Sign in</h1>"
        '<form action="/welcome" method="get">'
        '<label>Email <input name="email" type="email"></label>'
        '<label for="p">Password</label><input id="p" name="password" type="password">'
        '<button type="submit">Send</button></form>'
        '<a href="/about">About us</a>'
    ),
    "/about": "<title>About</title><h1>About us</h1><p>We make test pages.</p>",
    "/hostile": (
        "<title>Hostile</title><h1>Hostile</h1>"
        "<script>alert('first alert'); window.open('/about');</script>"
        '<a href="/file.bin" download>Get the file</a>'
        '<img src="http://10.0.0.1/pixel.png" alt="pixel">'
    ),
    "/long-named": "<title>" + "Long " * 20_000 + "</title><h1>Named at length</h1>"
    "<script>history.replaceState(null, '', '/long-named?' + 'x'.repeat(300000));</script>",
    # Every cut at a raw 200 or 300 characters falls between an "e" and its accent.
    "/accented": "<title>x" + "e\u0301" * 400 + "</title><h1>Accented</h1>",
    # Lone surrogates (half a UTF-16 pair), which no UTF-8 output can hold, in the title and text.
    "/surrogates": "<title>s</title><h1 id=h>x</h1><p id=p>y</p><script>"
    "h.textContent = 'head \\ud800 lone'; p.textContent = 'para \\ud83d end';"
    "document.title = 'title \\udc00 lone';</script>",
    "/papers": '<title>Papers</title><a href="/paper.pdf">The paper</a>'
    '<a href="/photo.png">The photo</a>',
    "/pictures": '<title>Pictures</title><img src="/photo.png">',
    "/to-never": '<title>Waiting</title><a href="/never">Never</a>',
    # Asks to stay at each unload ("unsaved changes"), once a click has activated it.
    "/stay": "<title>Stay</title><button>Edit</button><a href='/about'>Leave</a><script>"
    "addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });"
    "</script>",
    # Taller than Chromium can draw in one image.
    "/very-tall": "<title>Very tall</title><style>body { margin: 0 }</style>"
    "<div style='height:600000px'>The top</div>",
    "/sockets": "<title>Sockets</title><h1>Sockets</h1>"
    "<script>new WebSocket('ws://10.0.0.2/'); new WebSocket('wss://169.254.169.254/');</script>",
    "/once": "<title>Once</title><h1>Loaded once</h1>",
    # Opens an alert every 10 ms, for ever: each is dismissed, and the next one is there.
    "/alerts": "<title>Alerts</title><h1>Alerts</h1><script>setInterval(() => alert('x'), 10);"
    "</script>",
    "/upload": "<title>Upload</title><label>Your file <input type=file></label>",
    "/tall": "<title>Tall</title>"
    + "".join(f"<p style='height:400px'>row {n}</p>" for n in range(30)),
}

REDIRECTS = {
    "/to-metadata": "http://169.254.169.254/latest/meta-data/",
    "/to-metadata-tls": "https://169.254.169.254/latest/meta-data/",
    "/to-file": "file:///etc/passwd",
    "/to-data": "data:text/html,<h1>from data</h1>",
}

# Addresses that are no web page: a PDF and an image, served inline (no attachment header).
_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e1d2a7"
    "940000000049454e44ae426082"
)
FILES = {"/paper.pdf": ("application/pdf", _PDF), "/photo.png": ("image/png", _PNG)}


@dataclass
class Site:
    """The local site: its address and what it saw."""

    url: str
    seen: list[str]
    release: threading.Event

    def at(self, path: str) -> str:
        return self.url + path


def _handler(seen: list[str], release: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            seen.append(self.path)
            parts = urlsplit(self.path)
            if parts.path == "/never" or (parts.path == "/once" and seen.count("/once") > 1):
                release.wait(120)  # a page that never answers (/once: after its first time)
                return
            if parts.path == "/welcome":
                email = parse_qs(parts.query).get("email", [""])[0]
                self._send(f"<title>Welcome</title><h1>Welcome, {html.escape(email)}</h1>")
            elif parts.path in REDIRECTS:
                self.send_response(302)
                self.send_header("Location", REDIRECTS[parts.path])
                self.end_headers()
            elif parts.path == "/file.bin":
                body = b"\0" * 1024
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Disposition", 'attachment; filename="file.bin"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif parts.path in FILES:
                kind, body = FILES[parts.path]
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif parts.path == "/visits":
                count = int(self.headers.get("Cookie", "visits=0").split("=")[-1] or 0) + 1
                self._send(f"<title>Visits</title><p>visit number {count}</p>", cookie=count)
            elif parts.path in PAGES:
                self._send(PAGES[parts.path])
            else:
                self.send_error(404)

        def _send(self, page: str, cookie: int | None = None) -> None:
            body = f"<!doctype html><html><body>{page}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")  # going back asks again
            self.send_header("Content-Length", str(len(body)))
            if cookie is not None:
                self.send_header("Set-Cookie", f"visits={cookie}; Path=/")
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def anyio_backend() -> str:
    """Playwright for Python runs on asyncio."""
    return "asyncio"


def ok_text(result: ToolResult) -> str:
    """The text of ``result``, which must not be an error (its text says why it is)."""
    assert not result.is_error, result.text_content
    return result.text_content


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium the tools will drive; missing, the test fails saying how to install one."""
    try:
        return find_chromium(None, os.environ)
    except ChromiumMissing as exc:
        pytest.fail(f"the browser tests need a Chromium: {exc}")


@pytest.fixture
def site() -> Iterator[Site]:
    """The local site on 127.0.0.1, with a form, a hostile page and a page that never loads."""
    seen: list[str] = []
    release = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(seen, release))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}", seen, release)
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def browser_env(tmp_path: Path, **variables: str) -> Environment:
    """A home, a project and a cache of the test's own; ``PATH`` as the test runs with."""
    return Environment(
        home=tmp_path / "home",
        cwd=tmp_path / "project",
        variables={
            "PATH": os.environ.get("PATH", os.defpath),
            "HERMES_CACHE_DIR": str(tmp_path / "cache"),
            **variables,
        },
    )


def browser_config(**entry: Any) -> Config:
    """The browser allowed to reach 127.0.0.1 (unless ``allowed_hosts`` says otherwise), with
    approvals off (the tests call the tools themselves)."""
    entry.setdefault("allowed_hosts", ["127.0.0.1"])
    return Config.model_validate(
        {"plugins": {"entries": {"browser": entry}}, "approvals": {"policy": "off"}}
    )


@pytest.fixture
def host_factory(tmp_path: Path, chromium: str) -> Iterator[Any]:
    """Make started hosts with the bundled plugins (closed after the test)."""
    made: list[Any] = []

    def make(config: Config | None = None, **variables: str) -> Any:
        host = make_host(config or browser_config(), browser_env(tmp_path, **variables))
        made.append(host)
        return host

    yield make
    for host in made:
        host.close()

"""A real HTTP server on 127.0.0.1 serving a small site for the web tools: an article among
navigation and ads (also compressed), a redirect chain, a 20 MB page, gzip bombs, files of other
types, redirects to private addresses, a page that drips one byte at a time, a charset no codec
reads; it records the Host header of every request."""

from __future__ import annotations

import functools
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARTICLE_TEXT = (
    "The river otter population of the valley has doubled in ten years, the survey found.",
    "Biologists counted the animals along forty kilometres of the river each spring, and the "
    "counts rose steadily once the old weir was taken down and the water ran clean again.",
    "Fishermen who once saw otters as rivals now report them to the survey team themselves.",
)
NAVIGATION = ("Home", "World news", "Sport", "Subscribe to our newsletter")
ADVERT = "Buy the Turbo Blender 3000 today, fifty percent off for a limited time"
FOOTER = "Copyright Valley Gazette, all rights reserved, privacy policy"

_MENU = "".join(f'<li><a href="/{n}">{n}</a></li>' for n in NAVIGATION)
ARTICLE = f"""<!doctype html>
<html><head><title>Otters return to the valley | Valley Gazette</title></head>
<body>
<header><nav><ul>{_MENU}</ul></nav></header>
<div class="advert" id="ad-top"><a href="/ad">{ADVERT}</a></div>
<main><article>
<h1>Otters return to the valley</h1>
{"".join(f"<p>{p}</p>" for p in ARTICLE_TEXT)}
</article></main>
<aside class="sidebar"><h3>Most read</h3><ul><li><a href="/x">Local fair cancelled</a></li>
<li><a href="/y">Bridge repairs start</a></li></ul></aside>
<footer><p>{FOOTER}</p></footer>
</body></html>
""".encode()

LATIN1_TEXT = "Le café est très bon ici, et la crème brûlée du chef aussi, disent les clients. "
LATIN1_PAGE = (
    "<!doctype html><html><head><title>Café crème</title></head><body><article>"
    f"<h1>Café crème</h1><p>{LATIN1_TEXT * 4}</p><p>{LATIN1_TEXT * 4}</p></article></body></html>"
)
"""A French page with no charset of its own (no BOM, no meta): its server names one."""

QUOTED_TEXT = "It\u2019s the \u201cbest\u201d caf\u00e9 in town \u2014 5 \u20ac a cup, they say. "
QUOTED_PAGE = (
    "<!doctype html><html><head><title>Caf\u00e9 \u201cNord\u201d</title></head><body><article>"
    f"<p>{QUOTED_TEXT * 6}</p><p>{QUOTED_TEXT * 6}</p></article></body></html>"
)
"""Curly quotes, a dash and the euro sign: windows-1252's letters where ISO-8859-1 has control
characters (0x80-0x9F), in a page its server says is ISO-8859-1, as many do."""

UNDECLARED_TEXTS = {
    "shift_jis": "東京の天気は晴れです。今日は公園へ散歩に行きましょう、と友達が言いました。",
    "gbk": "北京今天天气很好，我们去公园散步吧，朋友们都这么说。",
    "euc-kr": "오늘 서울 날씨가 좋습니다. 공원에 산책하러 갑시다, 친구들이 말했습니다.",
    "cp1251": "Сегодня в Москве хорошая погода, пойдём гулять в парк, говорят друзья. ",
}
"""Text of pages in the older charsets of other scripts, served naming no charset anywhere."""


def undeclared_page(charset: str) -> bytes:
    """An article in ``charset``'s script, in that charset, naming no charset anywhere."""
    text = UNDECLARED_TEXTS[charset]
    page = (
        f"<!doctype html><html><head><title>{text[:8]}</title></head><body><article>"
        f"<h1>{text[:8]}</h1><p>{text * 4}</p><p>{text * 4}</p></article></body></html>"
    )
    return page.encode(charset)


SHORT_LATIN_TEXTS = (
    "Ça va très bien, merci.",
    "Får jag en kopp kaffe?",
    "Smørrebrød er godt.",
    "Ïle, maïs, Noël.",
)
"""French, Swedish and Danish of one sentence and few accented letters: in windows-1252 with no
charset named, charset-normalizer calls each Big5 or Johab (a Chinese or Korean charset)."""
KATAKANA_TEXT = "ソフトウェア・エンジニア"
"""Japanese of katakana alone: in Shift_JIS each a lead byte 0x83 or 0x81 and a second byte in
ASCII (0x40-0x7E), so its bytes outside ASCII stand alone, as a Latin text's accented letters."""
SHORT_LATIN_PAGE = (
    "<html><head><title>Smørrebrød</title></head><body><p>Smørrebrød er godt.</p></body></html>"
)
"""A Danish page of one sentence naming no charset: Johab (Korean) to charset-normalizer."""


CZECH_TEXT = "Příliš žluťoučký kůň úpěl ďábelské ódy, řekl šťastný Čech. "
CZECH_PAGE = (
    '<!doctype html><html><head><meta http-equiv="Content-Type" content="text/html; '
    'charset=windows-1250"><title>Žluťoučký kůň</title></head><body><article>'
    f"<h1>Žluťoučký kůň</h1><p>{CZECH_TEXT * 4}</p><p>{CZECH_TEXT * 4}</p></article></body></html>"
)
"""A Czech page that names its charset in a ``<meta>`` only (windows-1250)."""

LONG_ARTICLE = (
    b"<!doctype html><html><body><article><h1>A long article</h1>"
    + b"".join(
        b"<p>Otter %d of the valley, counted again by the survey team.</p>\n" % n
        for n in range(20_000)
    )
    + b"</article></body></html>"
)
"""1.3 MB of HTML, 20,000 paragraphs; gzipped (what /gzip-as-html serves, as text/html with no
coding named), about 50 KB."""

SLOW_TO_EXTRACT = b"<html><body>" + b"<p>a</p>" * 125_000 + b"</body></html>"
"""1 MB of one-letter paragraphs: seconds of trafilatura's CPU (about 6 s a megabyte here)."""

BIG_BYTES = 20 * 1024 * 1024
_BIG_PARAGRAPH = (
    b"<p>Paragraph %d of the very long page, one of many until the page weighs twenty "
    b"megabytes, so that a reader must stop long before its end.</p>\n"
)


@dataclass
class LocalSite:
    """The running site: ``port``, ``url(path)``, the ``hosts`` header of each request."""

    port: int
    hosts: list[str] = field(default_factory=list)
    big_bytes_sent: list[int] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def _handler(site: LocalSite, routes: dict[str, Callable[[BaseHTTPRequestHandler], None]]) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            site.hosts.append(self.headers.get("Host", ""))
            route = routes.get(self.path.split("?")[0])
            try:
                if route is None:
                    _send(self, 404, "text/plain", b"not found")
                else:
                    route(self)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _redirect(status: int, location: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def _big(site: LocalSite) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(BIG_BYTES))
        handler.end_headers()
        head = b"<!doctype html><html><head><title>A huge page</title></head><body><article>"
        handler.wfile.write(head)
        sent = len(head)
        number = 0
        try:
            while sent < BIG_BYTES:
                block = b"".join(_BIG_PARAGRAPH % (number + i) for i in range(500))
                number += 500
                chunk = block[: BIG_BYTES - sent]
                handler.wfile.write(chunk)
                sent += len(chunk)
        finally:
            site.big_bytes_sent.append(sent)

    return answer


BOMB_BYTES = 256 * 1024 * 1024
"""What the gzip bombs expand to: about 250 KB of gzip (and 1 KB of gzip in gzip)."""


@functools.cache
def gzip_bomb() -> bytes:
    """One gzip member of :data:`BOMB_BYTES` spaces."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1024 * 1024)
    return b"".join(packer.compress(block) for _ in range(BOMB_BYTES // len(block))) + (
        packer.flush()
    )


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return packer.compress(data) + packer.flush()


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _encoded(encoding: str, body: Callable[[], bytes]) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        data = body()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Encoding", encoding)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return answer


DRIP_BYTES = 40
DRIP_PAUSE = 0.25
"""The dripping page: one byte every DRIP_PAUSE seconds, DRIP_BYTES in all (10 s)."""


def _drip(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain; charset=utf-8")
    handler.send_header("Content-Length", str(DRIP_BYTES))
    handler.end_headers()
    for _ in range(DRIP_BYTES):
        handler.wfile.write(b"d")
        handler.wfile.flush()
        time.sleep(DRIP_PAUSE)


LISTING = (
    b'<!DOCTYPE HTML>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    b"<title>Directory listing for /</title>\n</head>\n<body>\n"
    b"<h1>Directory listing for /</h1>\n<hr>\n<ul>\n"
    b'<li><a href="a.txt">a.txt</a></li>\n<li><a href="article.html">article.html</a></li>\n'
    b"</ul>\n<hr>\n</body>\n</html>\n"
)
"""What ``python -m http.server`` serves for a directory: a heading trafilatura writes as a
plain line, not a markdown heading."""


MARKED_TITLE = "e\u0301" * 400
"""A title of 400 "é" written as an e and a combining acute: 800 code points, 400 letters."""


def _titled(title: str, text: str) -> bytes:
    return (
        f"<html><head><title>{title}</title></head><body><article><p>{text}</p></article>"
        "</body></html>"
    ).encode()


@contextmanager
def local_site() -> Iterator[LocalSite]:
    """The site, served until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    site = LocalSite(server.server_address[1])
    routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {
        "/article": lambda h: _send(h, 200, "text/html; charset=utf-8", ARTICLE),
        "/listing": lambda h: _send(h, 200, "text/html; charset=utf-8", LISTING),
        "/r1": _redirect(302, "/r2"),
        "/r2": _redirect(301, f"http://127.0.0.1:{site.port}/r3"),
        "/r3": _redirect(307, "article"),
        "/loop": _redirect(302, "/loop"),
        "/big": _big(site),
        "/report.pdf": lambda h: _send(h, 200, "application/pdf", b"%PDF-1.7\n" + b"0" * 1000),
        "/notes.txt": lambda h: _send(
            h, 200, "text/plain; charset=utf-8", "Plain notes: é".encode()
        ),
        "/data.json": lambda h: _send(
            h, 200, "application/json", json.dumps({"otters": 42, "river": "Wye"}).encode()
        ),
        "/long.txt": lambda h: _send(h, 200, "text/plain", b"word " * 20000),
        "/to-private": _redirect(302, "http://intranet.example/admin"),
        "/to-loopback": _redirect(302, f"http://127.0.0.1:{site.port}/article"),
        "/to-metadata": _redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/missing": lambda h: _send(h, 404, "text/plain", b"gone"),
        "/drip": _drip,
        "/odd-charset.txt": lambda h: _send(
            h, 200, "text/plain; charset=x-no-such-codec", b"Notes in an odd charset"
        ),
        "/rot13.txt": lambda h: _send(h, 200, "text/plain; charset=rot13", b"Abgrf"),
        "/huge-title": lambda h: _send(
            h,
            200,
            "text/html; charset=utf-8",
            b"<html><head><title>"
            + b"Read me " * 100_000
            + b"</title></head><body><article><p>"
            + ARTICLE_TEXT[1].encode()
            + b"</p></article></body></html>",
        ),
        "/marked-title": lambda h: _send(
            h, 200, "text/html; charset=utf-8", _titled(MARKED_TITLE, ARTICLE_TEXT[1])
        ),
        "/one-word-title": lambda h: _send(
            h, 200, "text/html; charset=utf-8", _titled("W" * 800, ARTICLE_TEXT[1])
        ),
        "/cjk-title": lambda h: _send(
            h, 200, "text/html; charset=utf-8", _titled("川獺の谷" * 200, ARTICLE_TEXT[1])
        ),
        "/gzip-as-html": lambda h: _send(h, 200, "text/html", _gzip(LONG_ARTICLE)),
        "/gzip-as-utf8-html": lambda h: _send(
            h, 200, "text/html; charset=utf-8", _gzip(LONG_ARTICLE)
        ),
        "/gzip-in-gzip-as-html": lambda h: _send(h, 200, "text/html", _gzip(_gzip(LONG_ARTICLE))),
        "/latin1.txt": lambda h: _send(h, 200, "text/plain", LATIN1_TEXT.encode("cp1252")),
        "/utf16-said-utf8": lambda h: _send(
            h, 200, "text/html; charset=utf-8", LATIN1_PAGE.encode("utf-16")
        ),
        "/utf16-said-latin1.txt": lambda h: _send(
            h, 200, "text/plain; charset=iso-8859-1", LATIN1_TEXT.encode("utf-16")
        ),
        "/latin1-odd-charset.txt": lambda h: _send(
            h, 200, "text/plain; charset=x-foo", LATIN1_TEXT.encode("cp1252")
        ),
        "/latin1": lambda h: _send(
            h, 200, "text/html; charset=iso-8859-1", LATIN1_PAGE.encode("latin-1")
        ),
        "/latin1-undeclared": lambda h: _send(h, 200, "text/html", LATIN1_PAGE.encode("latin-1")),
        "/latin1-odd-charset": lambda h: _send(
            h, 200, "text/html; charset=x-foo", LATIN1_PAGE.encode("latin-1")
        ),
        "/cp1252-said-latin1": lambda h: _send(
            h, 200, "text/html; charset=iso-8859-1", QUOTED_PAGE.encode("cp1252")
        ),
        "/cp1252-said-ascii.txt": lambda h: _send(
            h, 200, "text/plain; charset=us-ascii", QUOTED_TEXT.encode("cp1252")
        ),
        **{
            f"/undeclared-{charset}": (
                lambda h, charset=charset: _send(h, 200, "text/html", undeclared_page(charset))
            )
            for charset in UNDECLARED_TEXTS
        },
        **{
            f"/undeclared-{charset}.txt": (
                lambda h, charset=charset: _send(
                    h, 200, "text/plain", (UNDECLARED_TEXTS[charset] * 4).encode(charset)
                )
            )
            for charset in UNDECLARED_TEXTS
        },
        **{
            f"/short-latin-{index}.txt": (
                lambda h, text=text: _send(h, 200, "text/plain", text.encode("cp1252"))
            )
            for index, text in enumerate(SHORT_LATIN_TEXTS)
        },
        "/katakana.txt": lambda h: _send(h, 200, "text/plain", KATAKANA_TEXT.encode("shift_jis")),
        "/short-latin-page": lambda h: _send(
            h, 200, "text/html", SHORT_LATIN_PAGE.encode("cp1252")
        ),
        "/cp1250-in-meta": lambda h: _send(h, 200, "text/html", CZECH_PAGE.encode("cp1250")),
        "/utf8-said-latin1": lambda h: _send(
            h, 200, "text/html; charset=iso-8859-1", LATIN1_PAGE.encode("utf-8")
        ),
        "/article.gz": _encoded("gzip", lambda: _gzip(ARTICLE)),
        "/article.deflate": _encoded("deflate", lambda: _raw_deflate(ARTICLE)),
        "/bomb": _encoded("gzip", gzip_bomb),
        "/bomb-in-gzip": _encoded("gzip, gzip", lambda: _gzip(gzip_bomb())),
        "/article.br": _encoded("br", lambda: ARTICLE),
        # A page that builds itself with JavaScript: no text as served.
        "/app": lambda h: _send(
            h,
            200,
            "text/html",
            b"<!doctype html><html><head><title>Dashboard</title>"
            b'<script src="/app.js"></script></head><body><div id="root"></div></body></html>',
        ),
        "/slow-to-extract": lambda h: _send(h, 200, "text/html", SLOW_TO_EXTRACT),
        "/unclosed": lambda h: _send(h, 200, "text/html", b"<html><body>"),
        "/empty": lambda h: _send(h, 200, "text/html", b""),
    }
    server.RequestHandlerClass = _handler(site, routes)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

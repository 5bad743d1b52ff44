"""Cost of web_extract on pages of several sizes, served by a local HTTP server: the fetch alone
(the address check, the pinned connection, the streamed read: the baseline) and the fetch with
the main-text extraction (trafilatura), measured in the same run, alternating round by round.
The ratio is what extraction adds; the time per MB is why ``max_bytes`` defaults to 2 MB. Run:

    python benchmarks/web_extract.py [--rounds 5]

It prints, per page size, the median milliseconds of each way and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio

from plugins_builtin.web import WebSettings, fetcher_of
from plugins_builtin.web.extract import extract

SIZES = {"50 kB": 50_000, "500 kB": 500_000, "2 MB": 2_000_000}
_NAV = "<nav>" + "".join(f'<a href="/{n}">Section {n}</a>' for n in range(40)) + "</nav>"


def page(size: int) -> bytes:
    """An article of numbered paragraphs among navigation, about ``size`` bytes."""
    head = f"<!doctype html><html><head><title>Page</title></head><body>{_NAV}<article>"
    parts = [head.encode()]
    total, number = len(parts[0]), 0
    while total < size:
        paragraph = (
            f"<p>Paragraph {number} of the article says something new about the river and "
            f"the otters that live along it, in words a reader would keep.</p>\n"
        ).encode()
        parts.append(paragraph)
        total += len(paragraph)
        number += 1
    parts.append(b"</article><footer>Footer</footer></body></html>")
    return b"".join(parts)


@contextmanager
def serving(pages: dict[str, bytes]) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def main(rounds: int) -> None:
    pages = {f"/{name.replace(' ', '')}": page(size) for name, size in SIZES.items()}
    settings = WebSettings(allowed_hosts=["127.0.0.1"], max_bytes=5_000_000, max_chars=10**7)
    fetcher = fetcher_of(settings)
    with serving(pages) as port:

        def fetch(path: str) -> object:
            return anyio.run(fetcher.fetch, f"http://127.0.0.1:{port}{path}")

        def fetch_and_extract(path: str) -> object:
            page = anyio.run(fetcher.fetch, f"http://127.0.0.1:{port}{path}")
            return extract(page, 10**7, settings.max_bytes)

        ways: dict[str, Callable[[str], object]] = {
            "fetch": fetch,
            "fetch+extract": fetch_and_extract,
        }
        fetch_and_extract(next(iter(pages)))  # trafilatura's import and first parse
        print(f"{'page':8s} {'fetch ms':>10s} {'+extract ms':>12s} {'ratio':>7s} {'s/MB':>6s}")
        for name, path in zip(SIZES, pages, strict=True):
            times: dict[str, list[float]] = {way: [] for way in ways}
            for round_number in range(rounds):
                order = list(ways) if round_number % 2 else list(ways)[::-1]
                for way in order:
                    started = time.perf_counter()
                    ways[way](path)
                    times[way].append((time.perf_counter() - started) * 1000.0)
            base = statistics.median(times["fetch"])
            full = statistics.median(times["fetch+extract"])
            per_mb = (full - base) / 1000.0 / (len(pages[path]) / 1e6)
            print(f"{name:8s} {base:10.1f} {full:12.1f} {full / base:7.1f} {per_mb:6.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    main(parser.parse_args().rounds)

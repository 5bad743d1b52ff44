"""The browser tools' costs (issue 34): a session's first ``browser_navigate`` (the address proxy,
Playwright's driver and Chromium started, the page loaded and snapshotted), a later navigation,
a click that sends a form, and the session's end, against a plain HTTP GET of the same page in
the same run (the baseline: what fetching costs without a browser). Medians over ``--rounds``
sessions; needs the extra ``browser`` and a Chromium.

    python benchmarks/browser.py --rounds 5 [--write]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx

from hermes_core import Config, Environment
from hermes_core.testing import make_host

_PAGE = (
    b"<!doctype html><title>Form</title><h1>Sign in</h1>"
    b'<form action="/" method="get"><label>Email <input name="email"></label>'
    b'<button type="submit">Send</button></form>'
)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(_PAGE)))
        self.end_headers()
        self.wfile.write(_PAGE)


async def _round(host: Any, url: str) -> dict[str, float]:
    times: dict[str, float] = {}
    started = time.perf_counter()
    async with httpx.AsyncClient(trust_env=False) as client:
        (await client.get(url)).raise_for_status()
    times["HTTP GET (baseline)"] = time.perf_counter() - started
    async with host.session() as session:
        started = time.perf_counter()
        first = await host.dispatch("browser_navigate", {"url": url}, session)
        times["first browser_navigate (start + load + snapshot)"] = time.perf_counter() - started
        assert not first.is_error, first.text_content
        started = time.perf_counter()
        later = await host.dispatch("browser_navigate", {"url": url + "?again"}, session)
        times["later browser_navigate"] = time.perf_counter() - started
        ref = later.text_content.split('button "Send" [ref=')[1].split("]")[0]
        started = time.perf_counter()
        clicked = await host.dispatch("browser_click", {"ref": ref}, session)
        times["browser_click sending the form"] = time.perf_counter() - started
        assert not clicked.is_error, clicked.text_content
        ended = time.perf_counter()
    times["session end (browser closed)"] = time.perf_counter() - ended
    return times


def main() -> None:
    """Run the rounds and print (or ``--write``) the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    arguments = parser.parse_args()
    import os

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    config = Config.model_validate(
        {
            "plugins": {"entries": {"browser": {"allowed_hosts": ["127.0.0.1"]}}},
            "approvals": {"policy": "off"},
        }
    )
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = Environment(
            home=root / "home", cwd=root, variables={"PATH": os.environ.get("PATH", "")}
        )
        host = make_host(config, env)
        try:
            rounds = [anyio.run(_round, host, url) for _ in range(arguments.rounds)]
        finally:
            host.close()
            server.shutdown()
    baseline = statistics.median(r["HTTP GET (baseline)"] for r in rounds)
    lines = [
        "## The browser tools (issue 34)",
        "",
        f"`python benchmarks/browser.py --rounds {arguments.rounds} --write`: medians over "
        f"{arguments.rounds} sessions against a local page, Debian's Chromium, headless, on a "
        f"machine shared with other work (load average {os.getloadavg()[0]:.2f}).",
        "",
        "| step | median | against the HTTP GET |",
        "|---|---|---|",
    ]
    for name in rounds[0]:
        median = statistics.median(r[name] for r in rounds)
        lines.append(f"| {name} | {median * 1000:.0f} ms | {median / baseline:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if arguments.write:
        from _report import write_section

        write_section("## The browser tools (issue 34)", text)


if __name__ == "__main__":
    main()

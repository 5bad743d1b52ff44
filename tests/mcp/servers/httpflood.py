"""A real MCP server over streamable HTTP on 127.0.0.1 (``httpflood.py PORT``), written on the
standard library: ``toolbox.py``'s tools answered as JSON, and ``flood``, whose answer is an
``application/json`` body without end (a megabyte every 20 ms), as a broken or hostile server
may send. With ``--gzip`` every answer is gzip-compressed, whatever the client asked for."""

from __future__ import annotations

import gzip
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox

toolbox.TOOLS.append(
    {
        "name": "flood",
        "description": "Answers with a JSON body without end.",
        "inputSchema": {"type": "object", "properties": {}},
    }
)
GZIP = "--gzip" in sys.argv[2:]


class Answers(toolbox.ToolboxServer):
    """toolbox's answers, kept instead of written to stdout."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []

    def _send(self, message: dict[str, Any]) -> None:
        self.sent.append({"jsonrpc": "2.0", **message})

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        self.sent.clear()
        self._handle(request)
        return self.sent[0]


ANSWERS = Answers()
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # a body ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        message = json.loads(body)
        if "id" not in message:  # a notification, or an answer to the server
            self.send_response(202)
            self.end_headers()
            return
        params = message.get("params") or {}
        self.send_response(200)
        self.send_header("content-type", "application/json")
        flood = message.get("method") == "tools/call" and params.get("name") == "flood"
        if GZIP and not flood:
            self.send_header("content-encoding", "gzip")
        self.end_headers()
        if flood:
            head = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"'
            chunk = b"x" * (1024 * 1024)
            try:
                self.wfile.write(head % message["id"])
                while True:
                    self.wfile.write(chunk)
                    time.sleep(0.02)
            except OSError:  # the client went away
                return
        with LOCK:
            data = json.dumps(ANSWERS.answer(message)).encode()
        self.wfile.write(gzip.compress(data) if GZIP else data)

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    do_DELETE = do_GET


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()

"""A real MCP server over streamable HTTP on 127.0.0.1 (``httpflood.py PORT``), written on the
standard library: ``toolbox.py``'s tools answered as JSON, and ``flood``, whose answer is an
``application/json`` body without end (a megabyte every 20 ms), as a broken or hostile server
may send, and ``bomb``, whose answer is a gzip bomb: about 250 KB of gzip-compressed JSON that
expands to 256 MiB (a 256 MiB text). With ``--encoding gzip`` (or ``deflate``, ``raw-deflate``)
every other answer is compressed so, whatever the client asked for, as some proxies and CDNs do.
With ``--members N`` a gzip answer is N gzip members one after the other (RFC 1952 allows it;
a proxy may join them), the bomb one member a megabyte. ``untrailed`` and ``cut`` answer in
gzip cut short: without the 8-byte trailer, and cut in the middle of the compressed data.
``void`` and ``stall`` answer gzip that expands to nothing, without end: empty gzip members
(20 bytes each), and one member of empty deflate blocks (5 bytes each).
With ``--dribble`` the first 4 bytes of every answer are sent one at a time, 50 ms apart, as a
server flushing byte by byte does. With ``--sse`` every answer but ``flood``'s is one
server-sent event (``text/event-stream``), the bomb's too: one event of 256 MiB."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import zlib
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
toolbox.TOOLS.append(
    {
        "name": "bomb",
        "description": "Answers with a gzip bomb: a few hundred KB expanding to 256 MiB.",
        "inputSchema": {"type": "object", "properties": {}},
    }
)
for name, description in [
    ("untrailed", "Answers in gzip without its trailer."),
    ("cut", "Answers in gzip cut in the middle."),
    ("void", "Answers empty gzip members without end."),
    ("stall", "Answers a gzip member of empty deflate blocks without end."),
]:
    toolbox.TOOLS.append(
        {
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": {}},
        }
    )
ENCODING = sys.argv[sys.argv.index("--encoding") + 1] if "--encoding" in sys.argv else ""
MEMBERS = int(sys.argv[sys.argv.index("--members") + 1]) if "--members" in sys.argv else 1
SSE = "--sse" in sys.argv
DRIBBLE = "--dribble" in sys.argv
EVENT = b"event: message\ndata: " if SSE else b""
"""What comes before an answer's JSON: an SSE event's head with ``--sse``."""
END = b"\n\n" if SSE else b""
BOMB_MIB = 256


def compress(data: bytes, encoding: str) -> bytes:
    """``data`` as ``Content-Encoding: encoding`` (gzip, or deflate: zlib's format) sends it;
    ``raw-deflate`` is sent as ``deflate`` without zlib's header, as some servers send it."""
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[encoding]
    if encoding == "gzip" and MEMBERS > 1:
        step = -(-len(data) // MEMBERS)
        return b"".join(gzip_member(data[at : at + step]) for at in range(0, len(data), step))
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


def gzip_member(data: bytes) -> bytes:
    """``data`` as one gzip member."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


class Bomb:
    """The bomb's compressed body up to the request's id, made once (about a second)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._head = b""
        self._packer: Any = None

    def answer(self, ident: int) -> bytes:
        """The whole compressed answer to request ``ident``: the id comes last, so only the
        tail is compressed for each request."""
        if MEMBERS > 1:
            return self._members(ident)
        with self._lock:
            if self._packer is None:
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                head = b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
                parts = [packer.compress(EVENT + head)]
                chunk = b"x" * (1024 * 1024)
                parts += [packer.compress(chunk) for _ in range(BOMB_MIB)]
                self._head, self._packer = b"".join(parts), packer
            packer = self._packer.copy()
        tail = b'"}]},"id":%d}' % ident + END
        return self._head + packer.compress(tail) + packer.flush()

    def _members(self, ident: int) -> bytes:
        """The bomb one gzip member a megabyte (each about 1 KB)."""
        head = gzip_member(EVENT + b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"')
        megabyte = gzip_member(b"x" * (1024 * 1024))
        tail = gzip_member(b'"}]},"id":%d}' % ident + END)
        return head + megabyte * BOMB_MIB + tail


BOMB = Bomb()


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

    def setup(self) -> None:
        super().setup()
        # Each small write its own segment, so the client reads them as they come.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_body(self, body: bytes) -> None:
        """``body``, its first bytes one at a time with ``--dribble``."""
        start = 4 if DRIBBLE else 0
        for byte in body[:start]:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.05)
        self.wfile.write(body[start:])

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        message = json.loads(body)
        if "id" not in message:  # a notification, or an answer to the server
            self.send_response(202)
            self.end_headers()
            return
        params = message.get("params") or {}
        called = params.get("name") if message.get("method") == "tools/call" else None
        flood = called == "flood"
        self.send_response(200)
        sse = SSE and not flood
        self.send_header("content-type", "text/event-stream" if sse else "application/json")
        if called in ("bomb", "untrailed", "cut", "void", "stall"):
            self.send_header("content-encoding", "gzip")
        elif ENCODING and not flood:
            self.send_header("content-encoding", ENCODING.removeprefix("raw-"))
        self.end_headers()
        if called == "bomb":
            self.wfile.write(BOMB.answer(message["id"]))
            return
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
        if called in ("void", "stall"):
            # void: empty members; stall: a gzip header, then non-final stored blocks of no
            # bytes (what a sync flush writes), each expanding to nothing
            head = gzip_member(b"")[:10] if called == "stall" else b""
            unit = b"\x00\x00\x00\xff\xff" if called == "stall" else gzip_member(b"")
            endless = unit * (1024 * 1024 // len(unit))
            try:
                self.wfile.write(head)
                while True:
                    self.wfile.write(endless)
            except OSError:  # the client went away
                return
        if called in ("untrailed", "cut"):  # echo's answer to a long text, cut short
            text = " ".join(map(str, range(2000)))
            echo = {**message, "params": {"name": "echo", "arguments": {"text": text}}}
            with LOCK:
                answer = ANSWERS.answer(echo)
            whole = gzip_member(EVENT + json.dumps(answer).encode() + END)
            self.wfile.write(whole[:-8] if called == "untrailed" else whole[: len(whole) // 2])
            return
        with LOCK:
            data = EVENT + json.dumps(ANSWERS.answer(message)).encode() + END
        self.send_body(compress(data, ENCODING) if ENCODING else data)

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    do_DELETE = do_GET


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()

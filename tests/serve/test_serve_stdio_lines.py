"""``hermes serve`` over stdio reads its client's lines as JSON-RPC 2.0 says: a line that is not
JSON gets a parse error (``-32700``), one that is JSON but no message an invalid request
(``-32600``), a line longer than the longest message hermes reads (64 MiB) an invalid request
without being held whole; each answered with ``"id": null`` (the request's own ``id`` when it
is a request that can be read), noted on stderr, and serving goes on with the next line."""

from __future__ import annotations

from typing import Any

import pytest
from serving import RawStdio, ServeHome, raw_stdio

from tests.peak_rss import child_peak_rss_growth

pytestmark = pytest.mark.subprocess

MIB = 1024 * 1024


def _error(answer: dict[str, Any]) -> tuple[Any, int]:
    assert answer["jsonrpc"] == "2.0", answer
    assert "result" not in answer, answer
    return answer["id"], answer["error"]["code"]


def _noted(served: ServeHome) -> list[str]:
    logged = (served.root / "stderr.log").read_text()
    return [line for line in logged.splitlines() if "answered with -32" in line]


def _pong(wire: RawStdio, ident: int) -> None:
    wire.request(ident, "ping")
    assert wire.receive() == {"jsonrpc": "2.0", "id": ident, "result": {}}


def test_lines_that_are_not_json_rpc_get_their_errors_and_serving_goes_on(
    served: ServeHome,
) -> None:
    served.write_config()
    with raw_stdio(served) as wire:
        wire.send(b"hello, is this thing on?")  # before initialize, too
        assert _error(wire.receive()) == (None, -32700)
        assert wire.initialize()["result"]["serverInfo"]["name"] == "hermes"
        wire.send(b'{"jsonrpc": "2.0", "id": 2, "method": ')  # cut short
        assert _error(wire.receive()) == (None, -32700)
        wire.send(b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": "\xff"}}')
        assert wire.receive()["id"] == 2  # bytes not UTF-8 inside a string, as before
        wire.send(b"[1, 2]")  # valid JSON, not a message (a batch: MCP has none)
        assert _error(wire.receive()) == (None, -32600)
        wire.send(b"42")
        assert _error(wire.receive()) == (None, -32600)
        wire.send(b'{"jsonrpc": "2.0"}')  # an object, but neither request nor response
        assert _error(wire.receive()) == (None, -32600)
        wire.send(b'{"jsonrpc": "2.0", "id": 3, "method": 7}')  # a request MCP cannot read
        assert _error(wire.receive()) == (3, -32600)
        wire.send(b"   ")  # a blank line is no message, and nothing to answer
        _pong(wire, 4)
        status = wire.close()
    logged = (served.root / "stderr.log").read_text()
    assert status == 0, logged
    noted = _noted(served)
    assert len(noted) == 6, logged
    assert all(line.startswith("hermes serve: warning: ") for line in noted), logged


def test_a_line_past_64_mib_is_refused_without_being_held_and_serving_goes_on(
    served: ServeHome,
) -> None:
    # A 300 MB line made serve peak at 1.2 GB: the SDK's reader kept any line whole.
    served.write_config()
    with raw_stdio(served) as wire:
        wire.initialize()
        _pong(wire, 1)
        with child_peak_rss_growth(wire.process.pid) as peak:
            wire.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "')
            for _ in range(160):
                wire.write(b"x" * MIB)
            wire.send(b'"}}')
            assert _error(wire.receive()) == (None, -32600)
            _pong(wire, 3)
        status = wire.close()
    logged = (served.root / "stderr.log").read_text()
    assert status == 0, logged
    # What is read of the line before it passes 64 MiB, and no more.
    assert peak.grown < 100, f"serve grew by {peak.grown:.0f} MiB reading a 160 MiB line"
    noted = _noted(served)
    assert len(noted) == 1, logged
    assert "longer than 64 MiB" in noted[0], logged


def test_a_request_whose_id_mcp_cannot_read_is_answered_not_taken_as_a_notification(
    served: ServeHome,
) -> None:
    # MCP's ids are integers and strings; the SDK's message types read a request with any
    # other id as a notification (they ignore the key), so its client waited forever.
    served.write_config()
    with raw_stdio(served) as wire:
        wire.initialize()
        for ident in (b"8.5", b"true", b"null", b"[1]", b"{}"):
            wire.send(b'{"jsonrpc": "2.0", "id": ' + ident + b', "method": "ping"}')
            answer = wire.receive()
            assert _error(answer) == (None, -32600), ident
            assert "id" in answer["error"]["data"]["details"], answer
        wire.send(b'{"jsonrpc": "2.0", "id": 2.5, "method": "tools/call", "params": {"a": "\xff"}}')
        assert _error(wire.receive()) == (None, -32600)  # read again as UTF-8 replaced, too
        _pong(wire, 1)
        status = wire.close()
    logged = (served.root / "stderr.log").read_text()
    assert status == 0, logged
    assert len(_noted(served)) == 6, logged

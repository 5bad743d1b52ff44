"""JSON-RPC batches (an array of requests and notifications in one message), which the MCP
revision 2025-03-26 says servers MUST accept and 2025-06-18 removed: ``hermes serve`` answers a
batch of a session at 2025-03-26 (over stdio: the version ``initialize`` agreed; over HTTP: the
``MCP-Protocol-Version`` header, whose absence means 2025-03-26) with one array of the answers
to its requests, each element answered on its own; a batch of notifications only gets nothing
(HTTP ``202``); an empty batch, a batch past the cap, a batch before ``initialize`` (which must
come first and alone) and a batch of a later revision get one invalid request (``-32600``)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import httpx
import pytest
from serving import HttpServe, RawStdio, ServeHome, http_serve, processes_mentioning, raw_stdio

pytestmark = pytest.mark.subprocess

MAX_BATCH = 64
"""The most messages hermes reads in one batch (docs/mcp.md)."""
NOTE = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}


def _ping(ident: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "ping"}


def _send(wire: RawStdio, batch: Any) -> None:
    wire.send(json.dumps(batch).encode())


def _invalid(answer: Any) -> str:
    """The details of a lone invalid request with ``"id": null``."""
    assert isinstance(answer, dict), answer
    assert answer["id"] is None, answer
    assert answer["error"]["code"] == -32600, answer
    details: str = answer["error"]["data"]["details"]
    return details


def _by_id(answers: Any) -> dict[Any, dict[str, Any]]:
    assert isinstance(answers, list), answers
    return {answer["id"]: answer for answer in answers}


MIXED = [
    _ping(1),
    NOTE,
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": 3, "method": 7},  # a request MCP cannot read
    42,  # no message at all
    {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
]


def _check_mixed(answers: Any) -> None:
    found = _by_id(answers)
    assert len(answers) == 5, answers
    assert found[1]["result"] == {}
    assert "tool_search" in [tool["name"] for tool in found[2]["result"]["tools"]]
    assert found[3]["error"]["code"] == -32600
    assert found[None]["error"]["code"] == -32600
    assert found[4]["error"]["code"] == -32601


def test_a_2025_03_26_session_over_stdio_has_its_batches_answered(served: ServeHome) -> None:
    served.write_config()
    with raw_stdio(served) as wire:
        _send(wire, [_ping(1)])  # before initialize: initialize comes first, and alone
        assert "initialize" in _invalid(wire.receive_line())
        answer = wire.initialize("2025-03-26")
        assert answer["result"]["protocolVersion"] == "2025-03-26"
        _send(wire, MIXED)
        _check_mixed(wire.receive_line())
        _send(wire, [NOTE, NOTE])  # notifications only: nothing is answered
        _send(wire, [])
        assert "empty" in _invalid(wire.receive_line())
        _send(wire, [_ping(n) for n in range(MAX_BATCH + 1)])
        assert str(MAX_BATCH) in _invalid(wire.receive_line())
        init = {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {}}
        _send(wire, [init, _ping(6)])
        found = _by_id(wire.receive_line())
        assert found[5]["error"]["code"] == -32600
        assert found[6]["result"] == {}
        wire.request(7, "ping")
        assert wire.receive_line() == {"jsonrpc": "2.0", "id": 7, "result": {}}
        assert wire.close() == 0


def test_a_session_at_2025_06_18_or_later_over_stdio_gets_invalid_request_for_a_batch(
    served: ServeHome,
) -> None:
    served.write_config()
    with raw_stdio(served) as wire:
        wire.initialize("2025-06-18")
        _send(wire, [_ping(1), _ping(2)])
        assert "2025-06-18" in _invalid(wire.receive_line())
        wire.request(3, "ping")
        assert wire.receive_line() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert wire.close() == 0


def _post(server: HttpServe, body: Any, version: str | None) -> httpx.Response:
    headers = {
        **server.headers,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    return httpx.post(server.url, content=json.dumps(body), headers=headers, timeout=60)


def test_http_answers_a_2025_03_26_batch_with_one_array_and_refuses_later_ones(
    served: ServeHome,
) -> None:
    served.write_config()
    with http_serve(served) as server:
        for version in ("2025-03-26", None):  # no header: 2025-03-26, as the transport says
            answered = _post(server, MIXED, version)
            assert answered.status_code == 200, answered.text
            assert answered.headers["content-type"].startswith("application/json")
            _check_mixed(answered.json())
        only_notes = _post(server, [NOTE, NOTE], "2025-03-26")
        assert only_notes.status_code == 202
        assert only_notes.content == b""
        empty = _post(server, [], "2025-03-26")
        assert empty.status_code == 400
        assert "empty" in _invalid(empty.json())
        too_long = _post(server, [_ping(n) for n in range(MAX_BATCH + 1)], None)
        assert too_long.status_code == 400
        assert str(MAX_BATCH) in _invalid(too_long.json())
        for later in ("2025-06-18", "2025-11-25", "2026-07-28"):
            refused = _post(server, [_ping(1), _ping(2)], later)
            assert refused.status_code == 400, refused.text
            assert _invalid(refused.json())
        no_token = httpx.post(server.url, content=b"[]", timeout=60)
        assert no_token.status_code == 401
        assert server.stop() == 0


def test_a_request_of_a_batch_the_client_cancels_leaves_the_others_answered(
    served: ServeHome,
) -> None:
    marker = str(served.root / "batched-command")
    served.write_config(approvals={"non_interactive": "allow"})
    command = f'{sys.executable} -c "import time; time.sleep(300)" {marker}; echo finished'
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "terminal", "arguments": {"command": command}},
    }
    with raw_stdio(served) as wire:
        wire.initialize("2025-03-26")
        _send(wire, [call, _ping(2)])
        give_up = time.monotonic() + 60  # a guard against a hang, not a performance check
        while not processes_mentioning(marker):
            assert time.monotonic() < give_up, "the batch's command did not start"
            time.sleep(0.1)
        cancel = {"requestId": 1, "reason": "the user stopped it"}
        wire.send(
            json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            ).encode()
        )
        assert wire.receive_line() == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
        wire.request(3, "ping")
        assert wire.receive_line() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert wire.close() == 0


def _check_repeated_id(answers: Any) -> None:
    # MCP: a request id is never used twice in a session; the second of a batch is refused
    # there, in the batch's array, so no answer comes out of it on a line of its own.
    assert isinstance(answers, list), answers
    assert len(answers) == 3, answers
    assert {"jsonrpc": "2.0", "id": 5, "result": {}} in answers
    assert {"jsonrpc": "2.0", "id": 6, "result": {}} in answers
    refused = [answer for answer in answers if "error" in answer]
    assert len(refused) == 1, answers
    assert refused[0]["id"] == 5
    assert refused[0]["error"]["code"] == -32600
    assert "5" in refused[0]["error"]["data"]["details"]


def test_a_request_id_repeated_in_a_batch_is_refused_in_its_array_over_stdio_and_http(
    served: ServeHome,
) -> None:
    served.write_config()
    batch = [_ping(5), _ping(5), _ping(6)]
    with raw_stdio(served) as wire:
        wire.initialize("2025-03-26")
        _send(wire, batch)
        _check_repeated_id(wire.receive_line())
        wire.request(7, "ping")  # the next line is the answer to the next request
        assert wire.receive_line() == {"jsonrpc": "2.0", "id": 7, "result": {}}
        assert wire.close() == 0
    with http_serve(served) as server:
        answered = _post(server, batch, None)
        assert answered.status_code == 200, answered.text
        _check_repeated_id(answered.json())
        assert server.stop() == 0

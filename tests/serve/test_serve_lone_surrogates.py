"""``hermes serve`` over stdio (a real child process, a raw client) answering with a tool's
result that holds a lone surrogate: ``search_files`` finding a file whose name is not UTF-8.
Its writer failed to encode the answer, and the server died with a traceback."""

from __future__ import annotations

import pytest
from serving import ServeHome, raw_stdio

pytestmark = pytest.mark.subprocess


def test_a_result_naming_a_file_that_is_not_utf8_is_answered_as_utf8(served: ServeHome) -> None:
    served.write_config()
    (served.work / "caf\udcff.txt").write_text("hello\n", encoding="utf-8")  # b"caf\xff.txt"
    with raw_stdio(served) as wire:
        wire.initialize()
        wire.request(1, "tools/call", {"name": "search_files", "arguments": {"pattern": "hello"}})
        answer = wire.receive()
        wire.request(2, "ping")
        pong = wire.receive()
        status = wire.close()
    text = answer["result"]["content"][0]["text"]
    assert "caf\ufffd.txt" in text  # a name no UTF-8 holds, as a model is sent it
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert status == 0

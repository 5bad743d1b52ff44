"""``hermes serve`` (a real child process) sending text that holds a lone surrogate, which it
sends as U+FFFD: over stdio (a raw client) ``search_files`` finding a file whose name is not
UTF-8 (its writer failed to encode the answer, and the server died with a traceback); over
streamable HTTP (the SDK client) a plugin tool's description, result and progress."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import mcp_types
import pytest
from serving import BUNDLED, HttpServe, ServeHome, http_serve, raw_stdio

from hermes_core.testing import write_dir_plugin

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


LONE_PLUGIN = """
from hermes_core.plugin import Tool, ToolAnnotations, ToolResult, hookimpl, report_progress


def lone(text: str) -> ToolResult:
    report_progress(1, 1, "read \\ud800 " + text)
    return ToolResult.text("got \\udcff " + text, structured={"key \\ud800": "value \\udc00"})


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            name="lone",
            description="Answers with text no UTF-8 holds: \\ud800.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            handler=lone,
            toolset="lone",
            source_name="lone",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


def with_lone_plugin(served: ServeHome) -> None:
    write_dir_plugin(served.home / "plugins", "lone", LONE_PLUGIN)
    served.write_config(
        plugins={"enabled": [*BUNDLED, "lone"]},
        tools={"tool_search": {"always_visible": ["lone"]}},
    )


@pytest.mark.parametrize(
    "mode", [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]
)
def test_http_sends_a_description_a_result_and_progress_holding_lone_surrogates_as_fffd(
    served: ServeHome, mode: Any
) -> None:
    # Before, the SDK's transport wrote it: an event stream ended empty ("SSE stream ended
    # without a response", a traceback on serve's stderr), or a "\ud800" escape the client's
    # reader refused (-32700).
    with_lone_plugin(served)
    progress: list[str | None] = []

    async def report(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def main(server: HttpServe) -> tuple[list[mcp_types.Tool], mcp_types.CallToolResult]:
        async with server.client(mode=mode) as client:
            with anyio.fail_after(60):  # a guard against a hang, not a performance check
                listed = (await client.list_tools()).tools
                called = await client.call_tool("lone", {"text": "hi"}, progress_callback=report)
            return listed, called

    with http_serve(served) as server:
        listed, called = anyio.run(main, server)
        status = server.stop()
        assert server.process.stderr is not None
        stderr = server.process.stderr.read().decode(errors="replace")
    (tool,) = [tool for tool in listed if tool.name == "lone"]
    assert tool.description == "Answers with text no UTF-8 holds: \ufffd."
    assert [getattr(block, "text", None) for block in called.content] == ["got \ufffd hi"]
    assert called.structured_content == {"key \ufffd": "value \ufffd"}
    assert progress == ["read \ufffd hi"]
    assert status == 0
    assert "Traceback" not in stderr


LONE_CALL = (
    b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
    b'"params": {"name": "lone", "arguments": {"text": "a\\ud800b"}}}'
)
"""A call whose JSON escapes a lone surrogate: valid JSON (RFC 8259 allows the escape), no
valid Unicode."""


def _texts(answer: dict[str, Any]) -> list[str]:
    assert "result" in answer, answer
    return [block["text"] for block in answer["result"]["content"]]


def test_stdio_reads_a_request_escaping_a_lone_surrogate_with_fffd_alone_and_in_a_batch(
    served: ServeHome,
) -> None:
    # Before: -32600 "not a message of MCP: invalid JSON: unexpected end of hex escape at line 1
    # column 110", a JSON parser's words for a message JSON allows.
    with_lone_plugin(served)
    with raw_stdio(served) as wire:
        wire.initialize("2025-03-26")  # the revision that has batches
        wire.send(LONE_CALL % 1)
        alone = wire.receive()
        wire.send(b"[" + LONE_CALL % 2 + b"]")
        batch = wire.receive_line()
        status = wire.close()
    assert _texts(alone) == ["got \ufffd a\ufffdb"]
    (in_batch,) = batch
    assert _texts(in_batch) == ["got \ufffd a\ufffdb"]
    assert status == 0


def _post(server: HttpServe, body: bytes, version: str) -> httpx.Response:
    headers = {
        **server.headers,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": version,
    }
    return httpx.post(server.url, content=body, headers=headers, timeout=60)


def _event_data(answered: httpx.Response) -> dict[str, Any]:
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("text/event-stream"), answered.text
    (data,) = [line[5:] for line in answered.text.splitlines() if line.startswith("data:")]
    found: dict[str, Any] = json.loads(data)
    return found


def test_http_reads_a_request_escaping_a_lone_surrogate_with_fffd_alone_and_in_a_batch(
    served: ServeHome,
) -> None:
    # Before: 400 and -32700 "Parse error: unexpected end of hex escape at line 1 column 110".
    with_lone_plugin(served)
    with http_serve(served) as server:
        alone = _event_data(_post(server, LONE_CALL % 1, "2025-11-25"))
        batch = _post(server, b"[" + LONE_CALL % 2 + b"]", "2025-03-26")
        assert server.stop() == 0
    assert _texts(alone) == ["got \ufffd a\ufffdb"]
    assert batch.status_code == 200, batch.text
    (in_batch,) = batch.json()
    assert _texts(in_batch) == ["got \ufffd a\ufffdb"]


DEEP = 600
"""Nesting a request's arguments this deep is JSON Python reads, not what the U+FFFD pass
walked in as many frames again."""


def _deep_call(ident: int) -> bytes:
    nested = b"[" * DEEP + b'"\\udc80"' + b"]" * DEEP
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
        b'"params": {"name": "lone", "arguments": {"text": "a\\ud800b", "deep": %s}}}'
    ) % (ident, nested)


def test_a_deep_request_escaping_a_lone_surrogate_is_answered_over_stdio_and_http(
    served: ServeHome,
) -> None:
    # Before: the pass making its lone surrogates U+FFFD ran out of frames (RecursionError):
    # serve over stdio died with a traceback, over HTTP the request was never answered.
    with_lone_plugin(served)
    with raw_stdio(served) as wire:
        wire.initialize()
        wire.send(_deep_call(1))
        alone = wire.receive()
        wire.request(2, "ping")
        pong = wire.receive()
        status = wire.close()
    with http_serve(served) as server:
        answered = _post(server, _deep_call(3), "2025-11-25")
        pinged = _post(server, b'{"jsonrpc": "2.0", "id": 4, "method": "ping"}', "2025-11-25")
        assert server.stop() == 0
    assert alone["id"] == 1, alone
    assert alone["error"]["code"] == -32600, alone
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert status == 0
    assert answered.status_code == 400, answered.text
    assert answered.json()["error"]["code"] == -32700, answered.text
    assert _event_data(pinged) == {"jsonrpc": "2.0", "id": 4, "result": {}}

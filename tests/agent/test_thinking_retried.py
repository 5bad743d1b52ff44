"""A connection lost while the model only thought (its thinking streamed as ThinkingDeltas,
no answer yet) is retried, as it was when the thinking was dropped: the thinking is not the
answer, nothing of it is kept, and a long think is where a connection is most often lost.
Once the answer's text has streamed it is not sent again (tests/agent/test_providers.py)."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio

from hermes_core import Config, Environment
from hermes_core.agent import Agent, AgentEvent, Finished, Retrying, ThinkingDelta
from hermes_core.testing import make_host


def _chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
    body = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _DroppingWhileThinking(BaseHTTPRequestHandler):
    """The first request: one delta of thinking, then the connection closed mid-stream (a
    chunked body never ended); the next: the answer."""

    protocol_version = "HTTP/1.1"
    served = 0
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _send(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with self.lock:
            first = type(self).served == 0
            type(self).served += 1
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._send(_chunk({"role": "assistant", "reasoning_content": "Two and three..."}))
        if first:
            self.close_connection = True
            return  # no closing chunk: the client reads an incomplete body
        self._send(_chunk({"content": "Five."}))
        self._send(_chunk({}, "stop"))
        self._send(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")


def test_a_connection_lost_while_the_model_thinks_is_retried(hermes_env: Environment) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DroppingWhileThinking)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    config = Config.model_validate(
        {"model": {"provider": "openai", "model": "m", "base_url": base, "max_retry_wait": 0}}
    )
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    host = make_host(config, replace(hermes_env, variables=variables))

    async def main() -> list[AgentEvent]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session())
        try:
            return [event async for event in conversation.send("Add 2 and 3.")]
        finally:
            await conversation.aclose()
            await agent.aclose()

    try:
        events = anyio.run(main)
    finally:
        host.close()
        server.shutdown()
        server.server_close()
    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "Five."), end.detail
    assert len([event for event in events if isinstance(event, Retrying)]) == 1
    assert _DroppingWhileThinking.served == 2
    thoughts = [event.text for event in events if isinstance(event, ThinkingDelta)]
    assert thoughts == ["Two and three...", "Two and three..."]  # each request's, shown

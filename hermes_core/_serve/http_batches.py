"""A JSON-RPC batch POSTed to ``hermes serve --transport http``: each element served as a POST
of its own, the answers to its requests sent back as one JSON array.

The SDK's streamable HTTP transport reads one message a POST and refused an array with
``-32602`` and a pydantic dump, while MCP 2025-03-26 says servers MUST accept batches.
:class:`HttpBatches` reads a POST whose body is an array (at most the request body limit), and
when :func:`~hermes_core._serve.batches.batch_refusal` allows it for the
``MCP-Protocol-Version`` header (none: 2025-03-26, as the transport says), hands each element to
the SDK's application as a POST of its own, at once (over a stateless server each request is its
own anyway): one element's error is that element's answer. The answers come back in the order of
their elements as ``application/json``; a batch of notifications only gets ``202``. A refused
batch gets ``400`` and one invalid request. Any other POST is read whole too and goes to the
SDK's application as it came, but that each lone surrogate its JSON escapes (``\\ud800``, JSON
but no Unicode, which the SDK's reader refused as a parse error) is read as U+FFFD, as over
stdio; so are a batch's elements.
"""

from __future__ import annotations

import json
from typing import Any, Final

import anyio
import mcp_types
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_core._encodable import encodable_json, encodable_value
from hermes_core._jsonrpc_lines import INVALID_REQUEST, LineRefused
from hermes_core._mcp.failures import validation_problem
from hermes_core._serve.batches import batch_refusal, element_refusal

__all__ = ["HttpBatches"]

_INTERNAL_ERROR: Final = -32603
_UNSTATED_VERSION: Final = "2025-03-26"
"""The version a request without ``MCP-Protocol-Version`` is read as (streamable HTTP)."""


class HttpBatches:
    """ASGI middleware: a POST of ``path`` whose body is a JSON array is read as a batch (see
    the module docstring); every other request goes to ``app`` as it came (a POST's lone
    surrogate escapes read as U+FFFD)."""

    def __init__(
        self, app: ASGIApp, path: str, security: TransportSecuritySettings, max_body: int
    ) -> None:
        self.app = app
        self.path = path
        self.security = TransportSecurityMiddleware(security)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        stated = headers.get("content-length", "")
        if stated.isdigit() and int(stated) > self.max_body:
            await self.app(scope, receive, send)  # refused by the SDK's limit, unread
            return
        seen, first = await _peek(receive)
        if first != b"[":
            await self._single(scope, receive, send, seen)
            return
        body = await _whole_body(seen, receive, self.max_body)
        if body is None:
            await _too_long(self.max_body)(scope, receive, send)
            return
        try:
            batch = encodable_value(json.loads(body))
        except (ValueError, RecursionError):
            batch = None
        if not isinstance(batch, list):
            await self.app(scope, _replaying([_body_message(body)], receive), send)
            return
        refused = await self.security.validate_request(Request(scope, receive), is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        version = headers.get("mcp-protocol-version") or _UNSTATED_VERSION
        refusal = batch_refusal(batch, version)
        if refusal is not None:
            answer = LineRefused(INVALID_REQUEST, refusal).answer(None)
            await _json(answer, 400)(scope, receive, send)
            return
        answers = await self._serve_batch(scope, receive, batch)
        if not answers:
            await Response(status_code=202)(scope, receive, send)
            return
        await _json(answers, 200)(scope, receive, send)

    async def _single(
        self, scope: Scope, receive: Receive, send: Send, seen: list[Message]
    ) -> None:
        """A POST whose body is no array (``seen``: its first messages) to the SDK's
        application, read whole, each lone surrogate it escapes as U+FFFD (which the SDK's
        reader refused as a parse error); one the Host/Origin checks refuse goes unread."""
        refused = await self.security.validate_request(Request(scope, receive), is_post=True)
        if refused is not None:  # the SDK answers it in its words; hermes reads none of it
            await self.app(scope, _replaying(seen, receive), send)
            return
        body = await _whole_body(seen, receive, self.max_body)
        if body is None:
            await _too_long(self.max_body)(scope, receive, send)
            return
        if b"\\u" in body:
            text = body.decode("utf-8", errors="replace")
            read = encodable_json(text)
            if read is not text:
                body = read.encode()
                scope = {**scope, "headers": _with_length(scope["headers"], len(body))}
        await self.app(scope, _replaying([_body_message(body)], receive), send)

    async def _serve_batch(
        self, scope: Scope, receive: Receive, batch: list[Any]
    ) -> list[dict[str, Any]]:
        """The answers to ``batch``'s requests, in its order; the client leaving cancels what
        still runs (each element's call is told so, as a POST of its own would be)."""
        gone = anyio.Event()
        answers: list[list[dict[str, Any]]] = [[] for _ in batch]

        async def watch_client() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        taken: set[int | str] = set()
        refusals = [element_refusal(element, taken) for element in batch]

        async def serve(index: int, element: Any) -> None:
            answers[index] = await self._serve_element(scope, element, gone, refusals[index])

        async with anyio.create_task_group() as outer:
            outer.start_soon(watch_client)
            async with anyio.create_task_group() as group:
                for index, element in enumerate(batch):
                    group.start_soon(serve, index, element)
            outer.cancel_scope.cancel()
        return [answer for found in answers for answer in found]

    async def _serve_element(
        self, scope: Scope, element: Any, gone: anyio.Event, refusal: str | None
    ) -> list[dict[str, Any]]:
        ident = element.get("id") if isinstance(element, dict) else None
        if isinstance(ident, bool) or not isinstance(ident, int | str):
            ident = None
        refusal = refusal or _not_a_message(element)
        if refusal is not None:
            return [LineRefused(INVALID_REQUEST, refusal).answer(ident)]
        body = json.dumps(element).encode()
        headers = _with_length(scope["headers"], len(body))
        sent = False

        async def element_receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return _body_message(body)
            await gone.wait()
            return {"type": "http.disconnect"}

        status = 500
        content_type = ""
        chunks: list[bytes] = []

        async def element_send(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app({**scope, "headers": headers}, element_receive, element_send)
        answered = b"".join(chunks)
        if status == 202:
            return []
        found = _answers(answered, content_type)
        if found or ident is None:
            return found
        details = f"HTTP {status} for this element: {answered[:200].decode(errors='replace')}"
        error = {"code": _INTERNAL_ERROR, "message": "Internal error", "data": {"details": details}}
        return [{"jsonrpc": "2.0", "id": ident, "error": error}]


def _not_a_message(element: Any) -> str | None:
    """Why ``element`` is no message of MCP (as stdio serve reads a line), else ``None``."""
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_python(element, by_name=False)
    except ValidationError as exc:
        return f"not a message of MCP: {validation_problem(exc)}"
    if isinstance(message, mcp_types.JSONRPCNotification) and "id" in element:
        return "not a message of MCP: id: a request's id must be an integer or a string"
    return None


def _answers(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """The JSON-RPC answers (results and errors) in an element's response: its JSON body, or
    the ``data`` of its event stream's events (notifications on the stream are left out)."""
    texts: list[str] = []
    if content_type.startswith("text/event-stream"):
        for event in body.decode(errors="replace").replace("\r\n", "\n").split("\n\n"):
            data = [line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")]
            if data:
                texts.append("\n".join(data))
    elif body:
        texts.append(body.decode(errors="replace"))
    found: list[dict[str, Any]] = []
    for text in texts:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        if (
            isinstance(message, dict)
            and "id" in message
            and ("result" in message or "error" in message)
        ):
            found.append(message)
    return found


async def _peek(receive: Receive) -> tuple[list[Message], bytes]:
    """The messages received up to the body's first byte that is not white space, and that
    byte (empty when the body has none)."""
    seen: list[Message] = []
    while True:
        message = await receive()
        seen.append(message)
        if message["type"] != "http.request":
            return seen, b""
        stripped = message.get("body", b"").lstrip()
        if stripped:
            return seen, stripped[:1]
        if not message.get("more_body", False):
            return seen, b""


async def _whole_body(seen: list[Message], receive: Receive, limit: int) -> bytes | None:
    """The whole body, ``seen`` its first messages; ``None`` past ``limit`` bytes."""
    body = bytearray()
    for message in seen:
        body += message.get("body", b"")
    more = seen[-1].get("more_body", False)
    while more and len(body) <= limit:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return None if len(body) > limit else bytes(body)


def _too_long(limit: int) -> Response:
    return Response(f"Request body too large: more than {limit} bytes", status_code=413)


def _with_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``content-length`` saying ``length``."""
    kept = [(name, value) for name, value in headers if name != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


def _body_message(body: bytes) -> Message:
    return {"type": "http.request", "body": body, "more_body": False}


def _replaying(seen: list[Message], receive: Receive) -> Receive:
    """``receive`` that first gives back the messages already ``seen``."""
    pending = list(seen)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _json(content: Any, status: int) -> Response:
    return Response(json.dumps(content), status_code=status, media_type="application/json")

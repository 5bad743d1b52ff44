"""A real MCP server for the progress and elicitation tests.

- ``count`` (``steps``): sends one ``notifications/progress`` a step (``step i of n``) when the
  call carried a progress token, then answers ``counted N``.
- ``ask_secret``: asks a form with one ``password`` field and answers ``got N characters``.
- ``capabilities``: the elicitation capability the client declared, as JSON.
- ``ask`` (``question``): asks the client an ``elicitation/create`` form (``name``, a string
  defaulting to ``Ada``; ``color``, an enum defaulting to ``green``; ``sure``, a boolean), then
  answers with what came back: ``accept {...}``, ``decline`` or ``cancel``; an error result
  when the client declared no elicitation capability.

A form is asked as a request to the client of a dated version (2025-11-25 and before), and as
an ``input_required`` result to a 2026-07-28 client, whose retry of the call carries the reply.

Over stdio it is written on the standard library (``stdio_mcp.py``'s loop), as ``toolbox.py``
is: the SDK's import was most of each start's CPU. ``--sdk`` runs the SDK's low-level server
with the same tools, which ``tests/mcp/test_toolbox_server.py`` checks it against message for
message (the forms, their replies and the progress notifications included).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

# The wire rules are one module beside this file (see toolbox.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_mcp import StdioServer, current, text_result

SERVER_INFO = {"name": "asking", "version": "1.0"}
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ada"},
        "color": {
            "type": "string",
            "title": "Favourite color",
            "enum": ["red", "green", "blue"],
            "default": "green",
        },
        "sure": {"type": "boolean", "title": "Sure?"},
    },
    "required": ["name"],
}
PASSWORD_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"password": {"type": "string", "title": "Password"}},
    "required": ["password"],
}
_READ_ONLY = {"readOnlyHint": True}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "count",
        "description": "Count steps, reporting progress.",
        "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}},
        "annotations": _READ_ONLY,
    },
    {
        "name": "ask_secret",
        "description": "Ask for a password (servers should not) and say how long it was.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": _READ_ONLY,
    },
    {
        "name": "capabilities",
        "description": "The elicitation capability the client declared.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": _READ_ONLY,
    },
    {
        "name": "ask",
        "description": "Ask the user a form and answer with the reply.",
        "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}},
        "annotations": _READ_ONLY,
    },
]


def listing(cursor: str | None) -> dict[str, Any]:
    return {"tools": TOOLS}


def _elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The client's reply to a form (``action``, ``content``), or the ``input_required`` result
    to return to a 2026-07-28 client (it has ``inputRequests``)."""
    request = current()
    form = {"mode": "form", "message": message, "requestedSchema": schema}
    if request.dated:
        reply = request.server.ask("elicitation/create", form)
        if "error" in reply:
            raise RuntimeError(str(reply["error"].get("message")))
        answer: dict[str, Any] = reply["result"]
        return answer
    responses = request.params.get("inputResponses")
    if isinstance(responses, dict) and "form" in responses:
        given: dict[str, Any] = responses["form"]
        return given
    return {
        "inputRequests": {"form": {"method": "elicitation/create", "params": form}},
        "requestState": "asked",
        "resultType": "input_required",
    }


def _elicitation() -> dict[str, Any] | None:
    """The elicitation capability as the SDK reads it: its known modes, each with no fields."""
    declared = (current().capabilities or {}).get("elicitation")
    if not isinstance(declared, dict):
        return None
    return {mode: {} for mode in ("form", "url") if isinstance(declared.get(mode), dict)}


def call(name: str, args: dict[str, Any], cancel: threading.Event) -> dict[str, Any]:
    request = current()
    if name == "count":
        steps = int(args.get("steps", 3))
        token = request.meta.get("progressToken")
        for step in range(1, steps + 1):
            if token is not None:
                progress = {"progress": float(step), "total": float(steps)}
                message = {"progressToken": token, **progress, "message": f"step {step} of {steps}"}
                request.server.notify("notifications/progress", message)
            time.sleep(0.05)
        return text_result(f"counted {steps}")
    if name == "capabilities":
        return text_result(json.dumps(_elicitation(), sort_keys=True))
    if name == "ask_secret":
        reply = _elicit("Log in", PASSWORD_FORM)
        if "inputRequests" in reply:
            return reply
        if reply.get("action") != "accept" or reply.get("content") is None:
            return text_result(str(reply.get("action")))
        return text_result(f"got {len(str(reply['content']['password']))} characters")
    if name == "ask":
        if _elicitation() is None:
            return text_result("the client declared no elicitation capability", error=True)
        reply = _elicit(str(args.get("question", "Who are you?")), FORM)
        if "inputRequests" in reply:
            return reply
        if reply.get("action") != "accept":
            return text_result(str(reply.get("action")))
        return text_result(f"accept {json.dumps(reply.get('content'), sort_keys=True)}")
    return text_result(f"unknown tool {name}", error=True)


async def serve_sdk_stdio() -> None:
    """The SDK's low-level server with the same tools, over stdio (``--sdk``)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

    def text(text: str, *, error: bool = False) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=error
        )

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate({"tools": TOOLS})

    async def elicit(
        ctx: Any, params: types.CallToolRequestParams, message: str, schema: dict[str, Any]
    ) -> Any:
        if ctx.session.can_send_request:
            return await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        if params.input_responses and "form" in params.input_responses:
            return params.input_responses["form"]
        form = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        return types.InputRequiredResult(
            input_requests={"form": types.ElicitRequest(params=form)}, request_state="asked"
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "count":
            steps = int(args.get("steps", 3))
            token = progress_token_from_params(ctx.params)
            for step in range(1, steps + 1):
                if token is not None:
                    await ctx.session.send_progress_notification(
                        token,
                        step,
                        steps,
                        f"step {step} of {steps}",
                        related_request_id=ctx.request_id,
                    )
                await anyio.sleep(0.05)
            return text(f"counted {steps}")
        if params.name == "capabilities":
            declared = ctx.session.client_capabilities
            elicitation = declared.elicitation if declared is not None else None
            shown = elicitation.model_dump(exclude_none=True) if elicitation is not None else None
            return text(json.dumps(shown, sort_keys=True))
        if params.name == "ask_secret":
            reply = await elicit(ctx, params, "Log in", PASSWORD_FORM)
            if not isinstance(reply, types.ElicitResult):
                return reply
            if reply.action != "accept" or reply.content is None:
                return text(reply.action)
            return text(f"got {len(str(reply.content['password']))} characters")
        if params.name == "ask":
            capabilities = ctx.session.client_capabilities
            if capabilities is None or capabilities.elicitation is None:
                return text("the client declared no elicitation capability", error=True)
            question = str(args.get("question", "Who are you?"))
            reply = await elicit(ctx, params, question, FORM)
            if not isinstance(reply, types.ElicitResult):
                return reply
            if reply.action != "accept":
                return text(reply.action)
            return text(f"accept {json.dumps(reply.content, sort_keys=True)}")
        return text(f"unknown tool {params.name}", error=True)

    server: Server[Any] = Server(
        "asking", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:] == ["--sdk"]:
        import anyio

        anyio.run(serve_sdk_stdio)
    else:
        StdioServer(SERVER_INFO, listing, call).run()

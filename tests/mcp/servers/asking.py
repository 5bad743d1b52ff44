"""A real MCP server for the progress and elicitation tests (stdio, the SDK's low-level API).

- ``count`` (``steps``): sends one ``notifications/progress`` a step (``step i of n``) when the
  call carried a progress token, then answers ``counted N``.
- ``ask_secret``: asks a form with one ``password`` field and answers ``got N characters``.
- ``capabilities``: the elicitation capability the client declared, as JSON.
- ``ask`` (``question``): asks the client an ``elicitation/create`` form (``name``, a string
  defaulting to ``Ada``; ``color``, an enum defaulting to ``green``; ``sure``, a boolean), then
  answers with what came back: ``accept {...}``, ``decline`` or ``cancel``; an error result
  when the client declared no elicitation capability.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

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

TOOLS = [
    types.Tool(
        name="count",
        description="Count steps, reporting progress.",
        input_schema={"type": "object", "properties": {"steps": {"type": "integer"}}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="ask_secret",
        description="Ask for a password (servers should not) and say how long it was.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="capabilities",
        description="The elicitation capability the client declared.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="ask",
        description="Ask the user a form and answer with the reply.",
        input_schema={"type": "object", "properties": {"question": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
]


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def _elicit(
    ctx: Any, params: types.CallToolRequestParams, message: str, schema: dict[str, Any]
) -> Any:
    """The client's reply to a form: a request to it (2025 era), or an ``input_required``
    result to return (2026-07-28) whose retry carries the reply."""
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
                    token, step, steps, f"step {step} of {steps}", related_request_id=ctx.request_id
                )
            await anyio.sleep(0.05)
        return _text(f"counted {steps}")
    if params.name == "capabilities":
        declared = ctx.session.client_capabilities
        elicitation = declared.elicitation if declared is not None else None
        shown = elicitation.model_dump(exclude_none=True) if elicitation is not None else None
        return _text(json.dumps(shown, sort_keys=True))
    if params.name == "ask_secret":
        schema = {
            "type": "object",
            "properties": {"password": {"type": "string", "title": "Password"}},
            "required": ["password"],
        }
        reply = await _elicit(ctx, params, "Log in", schema)
        if not isinstance(reply, types.ElicitResult):
            return reply
        if reply.action != "accept" or reply.content is None:
            return _text(reply.action)
        return _text(f"got {len(str(reply.content['password']))} characters")
    if params.name == "ask":
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return _text("the client declared no elicitation capability", error=True)
        question = str(args.get("question", "Who are you?"))
        reply = await _elicit(ctx, params, question, FORM)
        if not isinstance(reply, types.ElicitResult):
            return reply
        if reply.action != "accept":
            return _text(reply.action)
        return _text(f"accept {json.dumps(reply.content, sort_keys=True)}")
    return _text(f"unknown tool {params.name}", error=True)


async def main() -> None:
    from mcp.server.stdio import stdio_server

    server: Server[Any] = Server(
        "asking", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)

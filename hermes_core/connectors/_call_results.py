"""A connector call's answer as the tool result the model reads: the data (cut as MCP results
are), a gateway error (``CONNECTION_REQUIRED`` with the link that connects the app), or a
failure of the gateway itself (signed out, not served, rate limited, ``PROVIDER_ERROR``)."""

from __future__ import annotations

from typing import Any

from hermes_core._errors import HermesError
from hermes_core._result_cut import cut_blocks
from hermes_core._tools import ToolResult
from hermes_core.connectors._gateway import ExecuteError, GatewayFailure
from hermes_core.connectors._signin import SignIn, sign_in_again
from hermes_core.search._render import compact_json

__all__ = [
    "CONNECTION_CODES",
    "SIGN_IN_HINT",
    "client_failure",
    "data_result",
    "error_result",
    "failure_result",
    "failure_text",
]

CONNECTION_CODES = frozenset({"CONNECTION_REQUIRED", "CONNECTION_EXPIRED"})
"""Gateway error codes meaning the app must be connected (again) before the call can run."""

SIGN_IN_HINT = "run 'hermes connectors login' (or set HERMES_CONNECTORS_TOKEN)"
"""What a user signed out of the gateway is told to do."""


def error_result(connector: str, error: ExecuteError, link: str | None) -> ToolResult:
    """The gateway's error for a call of ``connector``; for a connection code, the link that
    connects it (``link``, ``None`` when the gateway gave none) and what to tell the user."""
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.code in CONNECTION_CODES:
        payload = {
            "code": "CONNECTION_REQUIRED",
            "message": error.message or f"{connector} is not connected",
            "connector": connector,
            "connect_url": link,
            "hint": _connect_hint(connector, link),
        }
    elif error.hint:
        payload["hint"] = error.hint
    return ToolResult(
        content=[{"type": "text", "text": compact_json(payload)}],
        structured=payload,
        is_error=True,
        error_code=str(payload["code"]),
        error_message=str(payload["message"]),
    )


def client_failure(exc: BaseException) -> GatewayFailure:
    """What the gateway client raising ``exc`` means for the caller: an ``error`` failure."""
    if isinstance(exc, HermesError):
        return GatewayFailure("error", str(exc))
    return GatewayFailure("error", f"the gateway client failed: {type(exc).__name__}: {exc}")


def failure_text(failure: GatewayFailure, doing: str, sign_in: SignIn) -> str:
    """Why the gateway could not do ``doing`` (``describe``) to a tool, for the model; a
    refused token says how to replace ``sign_in``'s (:func:`~.sign_in_again`)."""
    if failure.kind == "signed_out":
        refused = f"the connector gateway refused the sign-in ({failure.message})"
        return f"{refused}: {sign_in_again(sign_in)}"
    return f"the connector gateway could not {doing} it: {failure.message}"


def failure_result(name: str, failure: GatewayFailure, sign_in: SignIn) -> ToolResult:
    """A call the gateway could not answer: signed out (the hint says how to replace
    ``sign_in``'s token), not served, rate limited, or a ``PROVIDER_ERROR`` (transport,
    timeout, 5xx, an answer off the protocol)."""
    payload: dict[str, Any]
    if failure.kind == "signed_out":
        payload = {
            "code": "SIGNED_OUT",
            "message": f"{name} was not run: the connector gateway refused the sign-in "
            f"({failure.message})",
            "hint": f"Tell the user to {sign_in_again(sign_in)}.",
        }
    elif failure.kind == "not_served":
        payload = {
            "code": "NOT_AVAILABLE",
            "message": f"{name} was not run: the connector gateway does not serve this account",
        }
    elif failure.kind == "rate_limited":
        payload = {
            "code": "RATE_LIMITED",
            "message": f"{name} was not run: the connector gateway is rate limiting "
            f"({failure.message})",
        }
        if failure.retry_after is not None:
            payload["retry_after"] = failure.retry_after
    else:
        payload = {
            "code": "PROVIDER_ERROR",
            "message": f"{name} failed at the connector gateway: {failure.message}",
        }
    return ToolResult(
        content=[{"type": "text", "text": compact_json(payload)}],
        structured=payload,
        is_error=True,
        error_code=payload["code"],
        error_message=payload["message"],
    )


def _connect_hint(connector: str, link: str | None) -> str:
    if link:
        return (
            f"The user has not connected {connector}. Show them connect_url to open in a "
            "browser (or call manage_connections with action 'connect'), then call the tool "
            "again once they say it is done."
        )
    return (
        f"The user has not connected {connector}: call manage_connections with action "
        f"'connect' and connectors ['{connector}'] to get a link for them."
    )


def data_result(data: Any, limit: int) -> ToolResult:
    """A call's data as its result, cut to ``limit`` characters as MCP results are; JSON
    ``null`` is a result of no content, as an MCP tool answering none (not the text ``null``)."""
    if data is None:
        return ToolResult()
    structured = None if isinstance(data, str) else data
    if isinstance(data, str):
        text = data
    else:
        try:
            text = compact_json(data)
        except (TypeError, ValueError):
            text = repr(data)
    blocks, structured = cut_blocks(
        [{"type": "text", "text": text}], structured, limit, "tools.connectors.max_result_chars"
    )
    return ToolResult(content=blocks, structured=structured)

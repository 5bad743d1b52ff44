"""The entries a bridge ``tool_call`` carries, read in every shape it accepts: one rule for the
bridge that runs them (:mod:`hermes_core.search._bridge_arguments` re-exports it) and for the
agent that shows them (the real tools a conversation reports, ACP's titles), which may not
import the bridge."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core._shown import shown

__all__ = ["ROUTER", "BridgeArgumentError", "CallEntry", "carried_calls", "parse_calls"]

ROUTER = "tool_call"
"""The bridge tool that carries calls of other tools."""


class BridgeArgumentError(ValueError):
    """Arguments of a bridge tool that cannot be understood; the message says what to send."""


@dataclass(slots=True)
class CallEntry:
    """One entry of ``tool_call``: the name and the arguments exactly as the caller sent them."""

    name: str
    arguments: Any


_CALL_SHAPE = '{"calls": [{"name": "<tool name>", "arguments": {...}}]}'


def parse_calls(payload: Mapping[str, Any]) -> list[CallEntry]:
    """The entries of a ``tool_call``: ``{calls: [...]}``, ``calls`` as a JSON string, or the
    single shape ``{name, arguments}``. Entry arguments are kept as sent."""
    if "calls" in payload and payload["calls"] is not None:
        calls = payload["calls"]
        if isinstance(calls, str):
            try:
                calls = json.loads(calls)
            except ValueError:
                raise BridgeArgumentError(
                    f"calls is a string that is not valid JSON; send {_CALL_SHAPE}"
                ) from None
            except RecursionError:
                raise BridgeArgumentError(
                    f"calls is a JSON string nested too deeply to read; send {_CALL_SHAPE}"
                ) from None
        if type(calls) is dict or isinstance(calls, Mapping):
            calls = [calls]
    elif "name" in payload:
        calls = [{"name": payload["name"], "arguments": payload.get("arguments")}]
    else:
        raise BridgeArgumentError(f"tool_call needs calls; send {_CALL_SHAPE}")
    if not isinstance(calls, list) or not calls:
        raise BridgeArgumentError(f"calls must be a non-empty list; send {_CALL_SHAPE}")
    entries: list[CallEntry] = []
    for index, call in enumerate(calls):
        if type(call) is not dict and not isinstance(call, Mapping):
            raise BridgeArgumentError(
                f"calls[{index}] must be an object {{name, arguments}}; send {_CALL_SHAPE}"
            )
        name = call.get("name")
        if name is not None and not isinstance(name, str):
            raise BridgeArgumentError(
                f"calls[{index}].name must be a string (the tool's name), not {shown(name)}; "
                f"send {_CALL_SHAPE}"
            )
        if name is None or not name.strip():
            raise BridgeArgumentError(f"calls[{index}].name is missing; send {_CALL_SHAPE}")
        entries.append(CallEntry(name.strip(), call.get("arguments")))
    return entries


def carried_calls(name: str, arguments: Any) -> list[CallEntry] | None:
    """The entries of a call of ``tool_call`` (:func:`parse_calls`); ``None`` for another tool,
    or for arguments the bridge would refuse (then the call runs no tool)."""
    if name != ROUTER or not isinstance(arguments, Mapping):
        return None
    try:
        return parse_calls(arguments)
    except BridgeArgumentError:
        return None

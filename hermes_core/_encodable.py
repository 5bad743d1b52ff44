"""The one rule for text UTF-8 cannot hold, where it leaves the process for a peer: each lone
surrogate becomes U+FFFD.

A Python ``str`` may hold a lone surrogate (U+D800..U+DFFF alone): undecodable bytes read with
``surrogateescape`` (a prompt in argv, a file name on Linux, an environment variable), a JSON
``"\\ud800"`` (an MCP server's result, a model's own arguments). No UTF-8 request body can hold
one: the SDKs and HTTP libraries raise ``UnicodeEncodeError`` and the whole request fails. So the
model request (:func:`hermes_core.agent._requests.request_events`, for every provider) and an MCP
tool call's arguments are made :func:`encodable` first, and so is a JSON-RPC message that
pydantic cannot write (:func:`model_json`: ``hermes serve``'s answers over stdio, hermes' own
to a stdio MCP server), the tools and results ``hermes serve`` hands the SDK's transports
(:mod:`hermes_core._serve.convert`: its HTTP writer raised), what ``hermes acp`` writes
(:func:`json_line`), and the media tools' image prompt and speech text (exported to the
bundled plugins). What hermes writes for itself
(the transcript, the activity log) keeps the text as its JSON escape instead, which reads back
as it was (docs/agent.md).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic import BaseModel

_LONE: Final = re.compile("[\ud800-\udfff]")
_ESCAPED: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate (``\\ud800``), in JSON text."""


def encodable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (the two halves of a pair written
    apart joined into their character)."""
    if text.isascii() or _LONE.search(text) is None:
        return text  # the same object: a caller can tell nothing changed
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def encodable_value(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, strings...) with :func:`encodable` strings and keys;
    ``value`` itself when it holds no string to change."""
    if isinstance(value, (dict, list, tuple)):
        # Written by json's C encoder and searched once: a tool schema walked string by string
        # cost serve 0.8 ms of CPU a tools/list, where a surrogate is almost never there.
        try:
            written = json.dumps(value, ensure_ascii=False, check_circular=False)
        except (TypeError, ValueError, RecursionError):
            written = None  # not JSON data all through: walked
        if written is not None and _LONE.search(written) is None:
            return value
    return _walked(value)


def _walked(value: Any) -> Any:
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        items = [(_walked(k), _walked(v)) for k, v in value.items()]
        if all(
            k is old_k and v is old_v
            for (k, v), (old_k, old_v) in zip(items, value.items(), strict=True)
        ):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        changed = [_walked(item) for item in value]
        if all(new is old for new, old in zip(changed, value, strict=True)):
            return value
        return type(value)(changed)
    return value


def escapes_surrogate(text: str) -> bool:
    """Whether the JSON text ``text`` may hold a surrogate's escape (``\\ud800``), which parses
    to a lone surrogate."""
    return "\\u" in text and _ESCAPED.search(text) is not None


def encodable_json(text: str) -> str:
    """The JSON text ``text`` with each lone surrogate it escapes (``"\\ud800"``: JSON, but no
    Unicode) as U+FFFD, as a peer's message is read: ``text`` itself when it escapes none (a
    pair's two escapes are one character), is no JSON or is nested too deep to walk (its
    reader says why)."""
    if not escapes_surrogate(text):
        return text
    try:
        value = json.loads(text)
        changed = encodable_value(value)  # as deep as json.loads went, in twice the frames
    except (ValueError, RecursionError):
        return text
    if changed is value:
        return text
    return json.dumps(changed, ensure_ascii=False, separators=(",", ":"))


def model_json(model: BaseModel) -> str:
    """The JSON-RPC message ``model`` as one line of JSON (by alias, set fields only), as
    pydantic writes it, or with each lone surrogate as U+FFFD where pydantic cannot (a JSON-RPC
    writer that raised there lost its connection)."""
    from pydantic_core import PydanticSerializationError

    try:
        return model.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return json.dumps(encodable_value(data), ensure_ascii=False, separators=(",", ":"))


def json_line(message: Any) -> str:
    """``message`` (JSON data) as one line of compact JSON in ASCII, each lone surrogate as
    U+FFFD: its escape (``\\ud800``) is JSON that strict readers (serde_json, pydantic) refuse."""
    text = json.dumps(message, separators=(",", ":"))
    # Only then a surrogate's escape: one of a pair (an emoji) or a lone one.
    if "\\ud" not in text:
        return text
    return json.dumps(encodable_value(message), separators=(",", ":"))

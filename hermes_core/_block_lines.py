"""Each content block of a tool result as the text a model reads of it (and ``hermes tools
call`` prints): :func:`block_line`. The cut of a long result (:mod:`hermes_core._result_cut`)
counts these lines, so what a model reads stays within the limit."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["block_line"]

_BASE64: Final = re.compile(r"[A-Za-z0-9+/\s]*(?:=\s*){0,2}", re.ASCII)
"""What :func:`base64.b64decode` takes with ``validate=True`` (its padding aside), in lines
(MIME's, ``base64.encodebytes``': some servers send it so, and decoders skip the breaks)."""
_SPACE: Final = re.compile(r"\s", re.ASCII)


def block_line(block: Mapping[str, Any]) -> str:
    """One content block as text: text as is, anything else as one bracketed line (binary data
    by its type and decoded size, never the data itself; an embedded text resource followed by
    its text), e.g. ``[image: image/png, 4,033 bytes]``."""
    kind = str(block.get("type", "unknown"))
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return _binary(kind, block.get("mimeType"), block.get("data"))
    if kind == "resource_link":
        name, mime, about = (block.get(key) for key in ("name", "mimeType", "description"))
        named = f", {name!s}" if name and name != block.get("uri") else ""
        typed = f" ({mime!s})" if mime else ""
        told = f": {about!s}" if about else ""
        return f"[resource link: {block.get('uri', '')}{named}{typed}{told}]"
    if kind == "resource":
        resource = block.get("resource")
        resource = resource if isinstance(resource, Mapping) else {}
        label = f"resource {resource.get('uri', '')}"
        if "text" in resource:
            return f"[{label}]\n{resource['text']}"
        return _binary(label, resource.get("mimeType"), resource.get("blob"))
    return f"[{kind} content]"


def _binary(label: str, mime_type: object, data: object) -> str:
    """``[image: image/png, 12,345 bytes]``: base64 ``data`` by its decoded size."""
    return f"[{label}: {mime_type or 'no MIME type'}, {_size(data)}]"


def _size(data: object) -> str:
    """The decoded size of base64 ``data``, as ``12,345 bytes``, counted, not decoded: an
    image of 50 MB is said (and counted by the cut) without a copy of its bytes. Padding past
    the last group of four, which :func:`base64.b64decode` let pass, is not base64."""
    if not isinstance(data, str):
        return "no data"
    # Counted, not stripped: a copy of 50 MB of base64 is what this avoids.
    length = len(data) - sum(1 for _ in _SPACE.finditer(data))
    if length % 4 or _BASE64.fullmatch(data) is None:
        return f"{len(data):,} characters that are not base64"
    tail = _SPACE.sub("", data[-200:])  # the padding, past a last line break
    padding = 2 if tail.endswith("==") else 1 if tail.endswith("=") else 0
    return f"{length // 4 * 3 - padding:,} bytes"

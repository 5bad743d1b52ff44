"""What :class:`~hermes_core.testing.FakeModelServer` knows of images: the images a request
shows the model (both vendors' vision inputs, decoded) and its answer to the OpenAI-style
images API (``POST /v1/images/generations``): real PNG files, one colour per prompt, so a test
can open them and tell two prompts' images apart.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import time
import zlib
from typing import Any, Final

__all__ = ["IMAGES_PATH", "fake_png", "images_answer", "images_of"]

IMAGES_PATH: Final = "/v1/images/generations"
_DEFAULT_SIDE: Final = 64
_MAX_SIDE: Final = 1024


def fake_png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    """A valid RGB PNG of one ``colour``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(colour) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def _size(value: Any) -> tuple[int, int]:
    try:
        width, height = (int(side) for side in str(value).lower().split("x"))
    except ValueError:
        return _DEFAULT_SIDE, _DEFAULT_SIDE
    return min(max(width, 1), _MAX_SIDE), min(max(height, 1), _MAX_SIDE)


def images_answer(body: Any) -> dict[str, Any]:
    """The images API's answer to ``body``: ``n`` PNGs (``b64_json``) of ``size`` (64x64 when
    none is asked), coloured by the prompt's hash, the prompt echoed as ``revised_prompt``."""
    prompt = str(body.get("prompt", ""))
    colour = tuple(hashlib.sha256(prompt.encode()).digest()[:3])
    width, height = _size(body.get("size"))
    png = base64.b64encode(fake_png(width, height, (colour[0], colour[1], colour[2]))).decode()
    count = max(1, min(int(body.get("n") or 1), 4))
    return {
        "created": int(time.time()),
        "data": [{"b64_json": png, "revised_prompt": prompt} for _ in range(count)],
    }


def images_of(messages: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    """The images the messages show the model, as ``(media_type, bytes)``, in order: OpenAI's
    ``image_url`` parts (``data:`` URLs) and Anthropic's base64 ``image`` blocks."""
    found: list[tuple[str, bytes]] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image_url":
                url = str(part.get("image_url", {}).get("url", ""))
                head, _, data = url.partition(",")
                media_type = head.removeprefix("data:").removesuffix(";base64")
                found.append((media_type, base64.b64decode(data)))
            elif part.get("type") == "image":
                source = part.get("source", {})
                found.append((str(source.get("media_type")), base64.b64decode(source["data"])))
    return found

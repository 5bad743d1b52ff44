"""The bundled ``openai`` image provider: the OpenAI images API (``POST {base_url}/images/
generations``), or any server that speaks it, over httpx. Imported when an image is first asked
for, not at host start."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import anyio
import httpx

from hermes_core._plugin_support import (
    read_capped,
    retry_after_seconds,
    shown_url,
    tls_context,
)
from hermes_core.plugin import GeneratedImage, ImageError, ImageRequest

from .media_files import image_type
from .settings import MediaEntry


class OpenAIImages:
    """The OpenAI images API as an :class:`~hermes_core.plugin.ImageProvider`. Asks for
    base64 answers (``dall-e-*`` models are told to; ``gpt-image-*`` always send them) and
    refuses an answer that only links to an image: nothing is fetched from an address the
    server picked."""

    def __init__(self, entry: MediaEntry, key: str | None) -> None:
        self._entry = entry
        # The codings read_capped expands, step by step (httpx asks for more when it can).
        headers = {"accept-encoding": "gzip, deflate"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._client = httpx.AsyncClient(
            base_url=entry.image_base_url.rstrip("/"),
            headers=headers,
            timeout=entry.image_timeout,
            verify=tls_context(),
        )
        self._key = key

    def _error(self, message: str, status: int | None = None) -> ImageError:
        if self._key:
            message = message.replace(self._key, "[redacted]")
        return ImageError(
            f"openai images at {shown_url(self._entry.image_base_url)}: {message}",
            provider="openai",
            status=status,
        )

    async def generate(self, request: ImageRequest) -> list[GeneratedImage]:
        """The images the server drew for ``request``."""
        body: dict[str, Any] = {
            "model": self._entry.image_model,
            "prompt": request.prompt,
            "n": request.count,
        }
        if request.size:
            body["size"] = request.size
        if self._entry.image_model.startswith("dall-e"):
            body["response_format"] = "b64_json"
        # The most a whole answer may hold: each image at max_image_bytes, as base64, and 1 MiB.
        cap = request.count * 4 * -(-self._entry.max_image_bytes // 3) + (1 << 20)
        timeout = self._entry.image_timeout
        try:
            # The whole request, however slowly it drips (httpx's timeout is each read's).
            with anyio.fail_after(timeout):
                async with self._client.stream("POST", "/images/generations", json=body) as answer:
                    content = await read_capped(answer, cap)
        except (TimeoutError, httpx.TimeoutException):
            raise self._error(
                f"no answer within {timeout:g} s (plugins.entries.media.image_timeout); try "
                "again, or raise it"
            ) from None
        except httpx.HTTPError as exc:
            raise self._error(f"the server could not be reached ({type(exc).__name__})") from None
        if content is None:
            raise self._error(f"the answer is more than {cap:,} bytes (max_image_bytes); refused")
        if answer.status_code >= 400:
            failure = _failure(answer.status_code, content, self._key)
            raise self._error(f"{failure}{self._hint(answer)}", answer.status_code)
        try:
            items = json.loads(content)["data"]
        except (ValueError, KeyError, TypeError):
            raise self._error("the answer is not an images API answer (no 'data' list)") from None
        if not isinstance(items, list) or not items:
            raise self._error("the answer holds no image")
        # More than asked would be files the model never named.
        return [self._image(item) for item in items[: request.count]]

    def _hint(self, answer: httpx.Response) -> str:
        """What to do about a refusal: the key's variable for a 401, the wait a 429 asks."""
        variable = self._entry.image_api_key_env
        named = "plugins.entries.media.image_api_key_env names"
        if answer.status_code == 401 and self._key:
            return f" (check the key in {variable}, the variable {named})"
        if answer.status_code == 401:
            return (
                f" ({variable} is not set: set it in the environment or $HERMES_HOME/.env; "
                f"{named} the variable)"
            )
        wait = retry_after_seconds(answer.headers.get("retry-after"))
        if answer.status_code == 429 and wait is not None:
            return f" (the server asks to wait {wait:.0f} s before trying again)"
        return ""

    def _image(self, item: Any) -> GeneratedImage:
        encoded = item.get("b64_json") if isinstance(item, dict) else None
        if not isinstance(encoded, str) and isinstance(item, dict) and "url" in item:
            raise self._error("an image came as a link, not as data (b64_json); not fetched")
        if not isinstance(encoded, str):
            raise self._error("an image has no b64_json data: not an images API answer")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise self._error("an image's b64_json is not base64") from None
        if len(data) > self._entry.max_image_bytes:
            raise self._error(f"an image is {len(data):,} bytes, over max_image_bytes")
        media_type = image_type(data)
        if media_type is None:
            raise self._error("an image is not a PNG, JPEG, GIF or WebP")
        revised = item.get("revised_prompt")
        return GeneratedImage(data, media_type, revised if isinstance(revised, str) else None)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.aclose()


def _failure(status: int, content: bytes, key: str | None) -> str:
    try:
        detail = str(json.loads(content)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        detail = content.decode("utf-8", errors="replace")
    if key:  # before the cut: a key cut in two would no longer be found
        detail = detail.replace(key, "[redacted]")
    detail = " ".join(detail.split())  # one line, however the server laid its page out
    detail = detail if len(detail) <= 300 else detail[:300] + "..."
    return f"HTTP {status}: {detail}"

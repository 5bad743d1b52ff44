"""``image_generate`` over the image provider the user names, and the bundled ``openai`` image
provider: the OpenAI images API (``POST {base_url}/images/generations``), or any server that
speaks it."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final

import anyio
import httpx

from hermes_core import RegistrationError
from hermes_core.plugin import (
    Environment,
    GeneratedImage,
    ImageError,
    ImageRequest,
    PluginContext,
    PluginError,
    Session,
    Tool,
    ToolAnnotations,
    ToolResult,
)

from .media_files import MediaRefused, image_type, output_path
from .settings import MediaEntry

_SIZE: Final = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")
MAX_COUNT: Final = 4
_SUFFIXES: Final = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
}


class OpenAIImages:
    """The OpenAI images API as an :class:`~hermes_core.plugin.ImageProvider`. Asks for
    base64 answers (``dall-e-*`` models are told to; ``gpt-image-*`` always send them) and
    refuses an answer that only links to an image: nothing is fetched from an address the
    server picked."""

    def __init__(self, entry: MediaEntry, key: str | None) -> None:
        self._entry = entry
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.AsyncClient(
            base_url=entry.image_base_url.rstrip("/"),
            headers=headers,
            timeout=entry.image_timeout,
        )
        self._key = key

    def _error(self, message: str, status: int | None = None) -> ImageError:
        if self._key:
            message = message.replace(self._key, "[redacted]")
        return ImageError(
            f"openai images at {self._entry.image_base_url}: {message}",
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
        try:
            answer = await self._client.post("/images/generations", json=body)
        except httpx.HTTPError as exc:
            raise self._error(f"the server could not be reached ({type(exc).__name__})") from None
        if answer.status_code >= 400:
            raise self._error(_failure(answer), answer.status_code)
        try:
            items = answer.json()["data"]
        except (ValueError, KeyError, TypeError):
            raise self._error("the answer is not an images API answer (no 'data' list)") from None
        if not isinstance(items, list) or not items:
            raise self._error("the answer holds no image")
        return [self._image(item) for item in items[:MAX_COUNT]]

    def _image(self, item: Any) -> GeneratedImage:
        encoded = item.get("b64_json") if isinstance(item, dict) else None
        if not isinstance(encoded, str):
            raise self._error("an image came as a link, not as data (b64_json); not fetched")
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


def _failure(answer: httpx.Response) -> str:
    try:
        detail = str(answer.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        detail = answer.text[:300]
    hint = (
        " (check the key in plugins.entries.media.image_api_key_env)"
        if answer.status_code == 401
        else ""
    )
    return f"HTTP {answer.status_code}: {detail}{hint}"


def openai_images(context: PluginContext) -> OpenAIImages:
    """The ``openai`` image provider's factory: settings from ``plugins.entries.media``."""
    from hermes_core._plugin_support import secret_variable

    entry = context.settings_as(MediaEntry)
    return OpenAIImages(entry, secret_variable(context.env, entry.image_api_key_env))


def _request(entry: MediaEntry, prompt: str, size: str | None, count: int) -> ImageRequest:
    if not prompt.strip():
        raise MediaRefused("the prompt is empty")
    chosen = size or entry.image_size or None
    if chosen is not None and not _SIZE.fullmatch(chosen):
        raise MediaRefused(f"size {chosen!r} is not WIDTHxHEIGHT (1024x1024)")
    if not 1 <= count <= MAX_COUNT:
        raise MediaRefused(f"count must be 1 to {MAX_COUNT}, not {count}")
    return ImageRequest(prompt.strip(), chosen, count)


def _save(
    session: Session, env: Environment, images: list[GeneratedImage], path: str | None
) -> list[str]:
    from hermes_core._plugin_support import write_bytes_atomically

    saved: list[str] = []
    for index, image in enumerate(images):
        suffix = _SUFFIXES[image.media_type]
        wanted = path
        if path and len(images) > 1:
            stem, dot, ext = path.rpartition(".")
            wanted = f"{stem}-{index + 1}.{ext}" if dot else f"{path}-{index + 1}"
        target = output_path(session, env, "images", suffix, wanted)
        write_bytes_atomically(target, [image.data])
        saved.append(str(target))
    return saved


def build_image_tool(entry: MediaEntry, context: PluginContext) -> Tool:
    """``image_generate``, drawing with the provider ``entry.image_provider`` names."""

    async def image_generate(
        session: Session,
        prompt: str,
        size: str | None = None,
        count: int = 1,
        path: str | None = None,
    ) -> ToolResult:
        try:
            request = _request(entry, prompt, size, count)
            if path:  # refused before anything is drawn (and paid for)
                output_path(session, context.env, "images", "png", path)
            provider = context.image_provider(entry.image_provider)
        except MediaRefused as exc:
            return ToolResult.error("INVALID_ARGUMENTS", f"image_generate: {exc}")
        except (RegistrationError, PluginError) as exc:
            return ToolResult.error("CONFIG_ERROR", f"image_generate: {exc}")
        try:
            images = await provider.generate(request)
        except ImageError as exc:
            return ToolResult.error("TOOL_ERROR", f"image_generate: {exc}")
        finally:
            await provider.aclose()
        try:
            saved = await anyio.to_thread.run_sync(_save, session, context.env, images, path)
        except (MediaRefused, OSError) as exc:
            return ToolResult.error("TOOL_ERROR", f"image_generate: {exc}")
        revised = [image.revised_prompt for image in images if image.revised_prompt]
        lines = [f"Saved {len(saved)} image(s):", *saved]
        if revised and revised[0] != request.prompt:
            lines.append(f"The service drew: {revised[0]}")
        return ToolResult.text(
            "\n".join(lines),
            structured={
                "paths": saved,
                "provider": entry.image_provider,
                "revised_prompts": revised,
            },
        )

    return Tool(
        name="image_generate",
        description=(
            "Draw images from a prompt describing the subject, style, composition and any "
            "words to render; returns the paths of the image files written."
        ),
        parameters={
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "What to draw."},
                "size": {"type": "string", "description": "WIDTHxHEIGHT, e.g. 1024x1024."},
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
                "path": {
                    "type": "string",
                    "description": "Where to save it in the working directory (default: "
                    "hermes' media folder).",
                },
            },
            "required": ["prompt"],
            "additionalProperties": False,
        },
        handler=image_generate,
        toolset="image_gen",
        source="builtin",
        source_name="media",
        core=True,
        # Not open world: it talks to the one service the user configured (as the model
        # itself does), never to an address the model picks.
        annotations=ToolAnnotations(destructive=False, open_world=False),
        timeout=entry.image_timeout + 30,
    )

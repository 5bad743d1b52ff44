"""``vision_analyze``: an image file of the session, or an image URL read under the address
rules (every redirect hop checked, the type refused before its body, the body capped), shown to
the conversation's own model, which answers a question about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio

from hermes_core._plugin_support import path_refusal
from hermes_core.plugin import Session, Tool, ToolAnnotations, ToolResult

from .media_files import MediaRefused, image_type, inside_session
from .settings import MediaEntry

if TYPE_CHECKING:
    from hermes_core.agent import ImagePart

DEFAULT_QUESTION: Final = "Describe this image in detail."
NO_MODEL: Final = (
    "vision_analyze needs this agent's own model, and none runs this session (under hermes "
    "serve, your client's model sees images itself). Use it from hermes run, hermes chat or "
    "hermes acp."
)


def read_image(session: Session, image: str, max_bytes: int) -> ImagePart:
    """The image file ``image`` of the session's directory, checked: at most ``max_bytes``, and
    a PNG, JPEG, GIF or WebP by its content."""
    path = inside_session(session, image)
    if not path.is_file():
        raise MediaRefused(f"{image} does not exist or is not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise MediaRefused(f"{image} is {size:,} bytes, over the {max_bytes:,}-byte limit")
    with path.open("rb") as stream:
        data = stream.read(max_bytes + 1)
    return _part(image, data)


_IMAGE_ACCEPT: Final = "image/png,image/jpeg,image/gif,image/webp"
_SETTING: Final = "plugins.entries.media.allowed_hosts"


def is_url(image: str) -> bool:
    """Whether ``image`` names a URL (``http://``, ``https://``) rather than a file."""
    return image.lower().startswith(("http://", "https://"))


async def fetch_image(image: str, entry: MediaEntry) -> ImagePart:
    """The image at the URL ``image``, read under the address rules, at most
    ``entry.max_image_bytes``, a PNG, JPEG, GIF or WebP by its content (the fetcher, and httpx,
    are imported here, at the first URL, not at host start)."""
    from hermes_core._plugin_support import CheckedFetcher

    fetcher = CheckedFetcher(
        tuple(entry.allowed_hosts),
        _SETTING,
        entry.image_fetch_timeout,
        entry.max_image_bytes + 1,
        max_redirects=5,
        accept=_IMAGE_ACCEPT,
        timeout_setting="plugins.entries.media.image_fetch_timeout",
    )

    def refuse(content_type: str) -> str | None:
        if content_type and not content_type.startswith("image/"):
            return f"its content type is {content_type}, not an image"
        return None

    got = await fetcher.fetch(image, refuse)
    if got.cut:
        raise MediaRefused(f"{image} is over the {entry.max_image_bytes:,}-byte limit")
    return _part(image, got.body)


def _part(name: str, data: bytes) -> ImagePart:
    from hermes_core.agent import ImagePart  # the agent's wire types: for a call, not at load

    media_type = image_type(data)
    if media_type is None:
        raise MediaRefused(f"{name} is not a PNG, JPEG, GIF or WebP image")
    return ImagePart(media_type, data)


def build_vision_tool(entry: MediaEntry) -> Tool:
    """``vision_analyze``, reading images up to ``entry.max_image_bytes`` and asking for at
    most ``entry.vision_max_tokens``."""

    async def vision_analyze(
        session: Session, image: str, question: str = DEFAULT_QUESTION
    ) -> ToolResult:
        from hermes_core._plugin_support import AddressRefused, FetchError

        # The agent's request path (asyncio) and wire types: for a call, not at load.
        from hermes_core.agent import ModelError, session_model

        if (refused := path_refusal("vision_analyze", image=image)) is not None:
            return refused
        model = session_model(session)
        if model is None:
            return ToolResult.error("NOT_AVAILABLE", NO_MODEL)
        try:
            if is_url(image):
                part = await fetch_image(image, entry)
            else:
                size = entry.max_image_bytes
                part = await anyio.to_thread.run_sync(read_image, session, image, size)
        except AddressRefused as exc:
            # A name that does not resolve is no refusal: no allowed host would mend it.
            code = "TOOL_ERROR" if exc.unresolved else "DENIED"
            return ToolResult.error(code, f"vision_analyze: {exc}")
        except (MediaRefused, FetchError, OSError) as exc:
            return ToolResult.error("TOOL_ERROR", f"vision_analyze: {exc}")
        try:
            # A lone surrogate is sent as U+FFFD, as in every model request.
            asked = question.strip() or DEFAULT_QUESTION
            answer = await model.look(part, asked, max_tokens=entry.vision_max_tokens)
        except ModelError as exc:
            return ToolResult.error("TOOL_ERROR", f"vision_analyze: the model failed: {exc}")
        return ToolResult.text(
            answer,
            structured={"image": image, "media_type": part.media_type, "bytes": len(part.data)},
        )

    return Tool(
        name="vision_analyze",
        description=(
            "Look at an image (PNG, JPEG, GIF or WebP: a file in the working directory or an "
            "http(s) URL) and answer a question about it: what it shows, the text in it, a "
            "chart's values, a UI's state."
        ),
        parameters={
            "type": "object",
            "properties": {
                "image": {"type": "string", "description": "The image file's path, or its URL."},
                "question": {
                    "type": "string",
                    "description": "What to find out (default: a detailed description).",
                },
            },
            "required": ["image"],
            "additionalProperties": False,
        },
        handler=vision_analyze,
        toolset="vision",
        source="builtin",
        source_name="media",
        core=True,
        annotations=ToolAnnotations(read_only=True, destructive=False, open_world=True),
        timeout=300.0,
    )

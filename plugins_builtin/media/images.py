"""``image_generate`` over the image provider the user names, and the bundled ``openai`` image
provider: the OpenAI images API (``POST {base_url}/images/generations``), or any server that
speaks it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

import anyio

from hermes_core import RegistrationError
from hermes_core._plugin_support import path_refusal
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

from .media_files import MediaRefused, beside, output_path, placed
from .settings import SIZE, MediaEntry

if TYPE_CHECKING:
    from pathlib import Path

    from .openai_provider import OpenAIImages

MAX_COUNT: Final = 4
_SUFFIXES: Final = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_TYPE_OF_SUFFIX: Final = {
    **{suffix: kind for kind, suffix in _SUFFIXES.items()},
    "jpeg": "image/jpeg",
}
"""The image type an extension names (a name's extension of another type is replaced)."""
_TYPE_NAMES: Final = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WebP",
}


def openai_images(context: PluginContext) -> OpenAIImages:
    """The ``openai`` image provider's factory: settings from ``plugins.entries.media``
    (httpx is imported here, when an image is first asked for, not at host start)."""
    from hermes_core._plugin_support import secret_variable

    from .openai_provider import OpenAIImages

    entry = context.settings_as(MediaEntry)
    return OpenAIImages(entry, secret_variable(context.env, entry.image_api_key_env))


def _request(entry: MediaEntry, prompt: str, size: str | None, count: int) -> ImageRequest:
    from hermes_core._plugin_support import encodable

    prompt = encodable(prompt)  # JSON allows a lone surrogate; no UTF-8 request holds one
    if not prompt.strip():
        raise MediaRefused("the prompt is empty")
    chosen = size or entry.image_size or None
    if chosen is not None and not SIZE.fullmatch(chosen):
        raise MediaRefused(f"size {chosen!r} is not WIDTHxHEIGHT (1024x1024)")
    if not 1 <= count <= MAX_COUNT:
        raise MediaRefused(f"count must be 1 to {MAX_COUNT}, not {count}")
    return ImageRequest(prompt.strip(), chosen, count)


def _names(path: str | None, count: int) -> list[str | None]:
    """The path each of ``count`` images is saved at: ``path``, numbered in its file name
    (``fox-1.png``) when ``count`` > 1; ``None``: the media folder."""
    if not path or count == 1:
        return [path] * count
    folder, slash, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not stem:  # no dot, or a name that only starts with one (.hidden)
        stem, dot, ext = name, "", ""
    return [f"{folder}{slash}{stem}-{number}{dot}{ext}" for number in range(1, count + 1)]


class _Renamed(NamedTuple):
    """A name whose extension named another image type than drawn, and what it was saved as."""

    asked: str
    saved: str
    asked_type: str
    drawn_type: str


def _drawn_name(wanted: str, media_type: str) -> _Renamed | None:
    """``wanted`` with an image extension naming another type than ``media_type`` replaced by
    the drawn type's (``fox.png`` of a JPEG is ``fox.jpg``); ``None`` for any other name, kept
    as it is."""
    stem, dot, ext = wanted.rpartition(".")
    asked = _TYPE_OF_SUFFIX.get(ext.lower()) if dot and stem and "/" not in ext else None
    if asked is None or asked == media_type:
        return None
    return _Renamed(wanted, f"{stem}.{_SUFFIXES[media_type]}", asked, media_type)


def _renamed_lines(renamed: list[_Renamed]) -> list[str]:
    """One line per type drawn instead of the one the names asked for, naming each file."""
    lines = []
    for pair in dict.fromkeys((each.asked_type, each.drawn_type) for each in renamed):
        names = [each for each in renamed if (each.asked_type, each.drawn_type) == pair]
        first, *others = names
        said = ", ".join(
            [
                f"{first.asked} was saved as {first.saved}",
                *(f"{o.asked} as {o.saved}" for o in others),
            ]
        )
        asked, drawn = _TYPE_NAMES[pair[0]], _TYPE_NAMES[pair[1]]
        lines.append(f"The service drew {drawn}, not {asked}: {said}.")
    return lines


def _save(
    session: Session,
    env: Environment,
    images: list[GeneratedImage],
    path: str | None,
    count: int,
) -> tuple[list[str], list[_Renamed]]:
    """The paths the images were saved at, and the names whose extension named another image
    type than drawn."""
    from hermes_core._plugin_support import write_bytes_atomically

    saved: list[Path] = []
    renamed: list[_Renamed] = []
    try:
        for image, wanted in zip(images, _names(path, count), strict=False):
            other = _drawn_name(wanted, image.media_type) if wanted else None
            named = other.saved if other is not None else wanted
            target = output_path(session, env, "images", _SUFFIXES[image.media_type], named)
            made = beside(target) if named else target
            write_bytes_atomically(made, [image.data])
            if named:  # a file written there since the check is kept, this one not saved
                placed(made, target, named)
            saved.append(target)
            if other is not None:
                renamed.append(other)
    except BaseException:
        for done in saved:  # all of them or none: the model is told nothing was saved
            done.unlink(missing_ok=True)
        raise
    return [str(done) for done in saved], renamed


def build_image_tool(entry: MediaEntry, context: PluginContext) -> Tool:
    """``image_generate``, drawing with the provider ``entry.image_provider`` names."""

    async def image_generate(
        session: Session,
        prompt: str,
        size: str | None = None,
        count: int = 1,
        path: str | None = None,
    ) -> ToolResult:
        if (refused := path_refusal("image_generate", path=path)) is not None:
            return refused
        try:
            request = _request(entry, prompt, size, count)
            for wanted in _names(path, request.count):  # refused before anything is drawn
                if wanted:
                    output_path(session, context.env, "images", "png", wanted)
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
        largest = max((len(image.data) for image in images), default=0)
        if largest > entry.max_image_bytes:
            return ToolResult.error(
                "TOOL_ERROR",
                f"image_generate: image provider {entry.image_provider!r} drew an image of "
                f"{largest:,} bytes, over plugins.entries.media.max_image_bytes "
                f"({entry.max_image_bytes:,}); nothing was saved",
            )
        try:
            saved, renamed = await anyio.to_thread.run_sync(
                _save, session, context.env, images, path, request.count
            )
        except (MediaRefused, OSError) as exc:
            return ToolResult.error("TOOL_ERROR", f"image_generate: {exc}")
        revised = [image.revised_prompt for image in images if image.revised_prompt]
        lines = [f"Saved {len(saved)} image(s):", *saved]
        lines.extend(_renamed_lines(renamed))
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

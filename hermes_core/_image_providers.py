"""Image providers, a plugin kind: what ``image_generate`` asks of the service that draws.

A plugin registers an :class:`~hermes_core._specs.ImageProviderSpec` with the
``hermes_image_providers`` hook; a tool gets the provider the configuration names with
:meth:`PluginContext.image_provider <hermes_core._specs.PluginContext.image_provider>`, so the
user swaps the service (a hosted API, a local diffusion server) without touching the tool.
The host hands out each provider as a :class:`CheckedImages`, so what a plugin answers is
checked in one place: real images of the media types hermes keeps (:func:`image_type`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from hermes_core._errors import HermesError
from hermes_core._shown import shown

__all__ = [
    "CheckedImages",
    "GeneratedImage",
    "ImageError",
    "ImageProvider",
    "ImageRequest",
    "image_type",
]

_SIGNATURES: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The media types of the images hermes reads and keeps."""


def image_type(data: bytes) -> str | None:
    """The media type of an image by its first bytes (never by its name), or ``None`` when it
    is no PNG, JPEG, GIF or WebP."""
    for signature, media_type in _SIGNATURES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True)
class ImageRequest:
    """What to draw: the prompt, the size as ``WIDTHxHEIGHT`` (``None``: the provider's
    default) and how many images."""

    prompt: str
    size: str | None = None
    count: int = 1


@dataclass(frozen=True)
class GeneratedImage:
    """One image a provider made: its bytes, their media type (``image/png``...) and the prompt
    the service actually drew, when it rewrote it."""

    data: bytes = field(repr=False)
    media_type: str = "image/png"
    revised_prompt: str | None = None


class ImageError(HermesError):
    """An image request that failed, naming the provider; ``status`` is the HTTP status when
    there was one."""

    def __init__(self, message: str, *, provider: str, status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


@runtime_checkable
class ImageProvider(Protocol):
    """A service that draws images, made by an :class:`~hermes_core._specs.ImageProviderSpec`
    factory. ``generate`` raises :class:`ImageError` for a failed request; ``aclose`` releases
    its connections."""

    async def generate(self, request: ImageRequest) -> list[GeneratedImage]:
        """The images drawn for ``request``."""
        ...

    async def aclose(self) -> None:
        """Release the provider's connections."""
        ...


class CheckedImages:
    """``provider`` as the host hands it out: an exception other than :class:`ImageError`, or
    an answer that is no list of :class:`GeneratedImage` whose bytes are an image of the media
    type it states, is an :class:`ImageError` naming it (``label``: ``image provider 'x'
    (plugin 'y')``)."""

    def __init__(self, provider: ImageProvider, name: str, label: str) -> None:
        self.provider = provider
        self.name = name
        self.label = label

    async def generate(self, request: ImageRequest) -> list[GeneratedImage]:
        """The provider's images for ``request``, checked."""
        try:
            images: object = await self.provider.generate(request)
        except ImageError:
            raise
        except Exception as exc:
            raise self._error(f"failed: generate raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(images, list | tuple):
            got = f"{type(images).__name__} {shown(images)}"
            raise self._error(f"generate returned {got}, not a list of GeneratedImage")
        for number, image in enumerate(images, 1):
            which = f"image {number} of {len(images)}"
            if not isinstance(image, GeneratedImage) or not isinstance(image.data, bytes):
                got = type(image.data if isinstance(image, GeneratedImage) else image).__name__
                raise self._error(f"generate returned {which} as {got}, not GeneratedImage bytes")
            if image.media_type not in IMAGE_TYPES:
                known = ", ".join(IMAGE_TYPES)
                raise self._error(
                    f"generate returned {which} as {shown(image.media_type)}, not one of {known}"
                )
            if image_type(image.data) != image.media_type:
                raise self._error(
                    f"generate returned {which} as {image.media_type}, but its bytes are no "
                    f"{image.media_type} image (they start {image.data[:12]!r})"
                )
        return list(images)

    async def aclose(self) -> None:
        """Release the provider's connections."""
        await self.provider.aclose()

    def _error(self, what: str) -> ImageError:
        return ImageError(f"{self.label} {what}", provider=self.name)

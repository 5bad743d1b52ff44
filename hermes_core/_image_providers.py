"""Image providers, a plugin kind: what ``image_generate`` asks of the service that draws.

A plugin registers an :class:`~hermes_core._specs.ImageProviderSpec` with the
``hermes_image_providers`` hook; a tool gets the provider the configuration names with
:meth:`PluginContext.image_provider <hermes_core._specs.PluginContext.image_provider>`, so the
user swaps the service (a hosted API, a local diffusion server) without touching the tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hermes_core._errors import HermesError

__all__ = ["GeneratedImage", "ImageError", "ImageProvider", "ImageRequest"]


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

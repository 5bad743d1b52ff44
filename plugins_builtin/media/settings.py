"""``plugins.entries.media``: what the media tools may be set to (checked by
``PluginContext.settings_as``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Final

from annotated_types import Ge, Gt, Le

from hermes_core._plugin_support import AddressSettings, http_url

SIZE: Final = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")
"""An image size, ``WIDTHxHEIGHT``."""


# The checks get the value as written (a number, a list...), before its type is checked.
def _extension(value: object) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"\.?[A-Za-z0-9]{1,16}", value):
        raise ValueError(
            f"expected a file extension such as wav or mp3 (letters and digits), got {value!r}"
        )
    return value


def _size(value: object) -> str:
    if not isinstance(value, str) or (value and not SIZE.fullmatch(value)):
        raise ValueError(f"expected WIDTHxHEIGHT such as 1024x1024, or nothing, got {value!r}")
    return value


def _url(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
    return http_url(value) or value


@dataclass(frozen=True)
class MediaEntry(AddressSettings):
    """The media tools' settings. An empty command leaves its tool out; ``allowed_hosts``
    (:class:`AddressSettings`): the hosts an image URL of ``vision_analyze`` may reach although
    the address rules refuse them (this machine, its network)."""

    image_provider: str = "openai"
    """The image provider ``image_generate`` draws with (registered by name)."""
    image_base_url: Annotated[str, _url] = "https://api.openai.com/v1"
    """The bundled ``openai`` image provider's server (any server speaking the images API)."""
    image_model: str = "gpt-image-1"
    image_api_key_env: str = "OPENAI_API_KEY"
    """The variable holding the image API's key (the environment, then ``$HERMES_HOME/.env``)."""
    image_size: Annotated[str, _size] = ""
    """``WIDTHxHEIGHT`` when the model gives none; empty: the provider's default."""
    image_timeout: Annotated[float, Gt(0), Le(3600)] = 180.0
    max_image_bytes: Annotated[int, Ge(1024)] = 20_000_000
    """The largest image ``vision_analyze`` reads and ``image_generate`` keeps."""
    image_fetch_timeout: Annotated[float, Gt(0), Le(600)] = 30.0
    """Seconds ``vision_analyze`` may take to read an image URL."""
    vision_max_tokens: Annotated[int, Ge(16)] = 1024
    """The longest answer ``vision_analyze`` asks the model for."""
    tts_command: str = ""
    """``text_to_speech``'s command, split like a shell line (never run by one):
    ``{text}``, ``{text_file}`` and ``{output}`` are replaced; without ``{text}`` or
    ``{text_file}`` the text goes to its standard input."""
    tts_format: Annotated[str, _extension] = "wav"
    """The file type ``tts_command`` writes (``wav`` is checked to be a WAV file)."""
    tts_timeout: Annotated[float, Gt(0), Le(3600)] = 120.0
    max_speech_chars: Annotated[int, Ge(1)] = 5000
    stt_command: str = ""
    """``speech_to_text``'s command: ``{input}`` is the audio file; the transcript is what it
    writes to ``{output}`` when it names one, else its standard output."""
    stt_timeout: Annotated[float, Gt(0), Le(3600)] = 300.0

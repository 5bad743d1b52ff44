"""The ``media`` toolsets: ``vision_analyze`` (toolset ``vision``), ``image_generate``
(``image_gen``), ``text_to_speech`` and ``speech_to_text`` (``tts``).

- ``vision_analyze`` shows an image file of the working directory to the conversation's own
  model (its vision input) and returns its answer; under ``hermes serve`` there is no model of
  ours, and it says so.
- ``image_generate`` draws with the image provider ``plugins.entries.media.image_provider``
  names (a plugin kind, ``hermes_image_providers``; the bundled ``openai`` speaks the OpenAI
  images API) and saves the images as files.
- ``text_to_speech`` and ``speech_to_text`` run the user's own commands
  (``tts_command``, ``stt_command``; see :mod:`.speech`): no command, no tool.

Settings: :class:`~.settings.MediaEntry`; docs/media.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core.plugin import (
    Environment,
    ImageProviderSpec,
    PluginContext,
    Tool,
    hookimpl,
)

from .images import build_image_tool, openai_images
from .settings import MediaEntry
from .speech import build_speech_tool, build_transcription_tool
from .vision import build_vision_tool


@hookimpl(trylast=True)
def hermes_tools(env: Environment, context: PluginContext) -> Sequence[Tool]:
    """The media tools the settings allow."""
    entry = context.settings_as(MediaEntry)
    tools = [build_vision_tool(entry), build_image_tool(entry, context)]
    if entry.tts_command.strip():
        tools.append(build_speech_tool(entry, env))
    if entry.stt_command.strip():
        tools.append(build_transcription_tool(entry, env))
    return tools


@hookimpl(trylast=True)
def hermes_image_providers() -> Sequence[ImageProviderSpec]:
    """The bundled image provider: the OpenAI images API (or a server that speaks it)."""
    return [
        ImageProviderSpec(
            "openai",
            openai_images,
            "The OpenAI images API (plugins.entries.media.image_base_url, image_model).",
        )
    ]

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

import functools
import logging
from collections.abc import Callable, Sequence

from hermes_core._plugin_support import setting_problem
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    Environment,
    ImageProviderSpec,
    PluginContext,
    Tool,
    hookimpl,
)

from .images import build_image_tool, openai_images
from .media_files import MediaRefused
from .settings import MediaEntry
from .speech import BadCommand, build_speech_tool, build_transcription_tool, command_found
from .vision import build_vision_tool


@hookimpl(trylast=True)
def hermes_tools(env: Environment, context: PluginContext) -> Sequence[Tool]:
    """The media tools the settings allow. A command that cannot be used leaves out its own
    tool only, with a warning naming the line of ``config.yaml``: the other tools do not
    depend on it."""
    entry = context.settings_as(MediaEntry)
    tools = [build_vision_tool(entry), build_image_tool(entry, context)]
    commands = (
        ("text_to_speech", entry.tts_command, build_speech_tool),
        ("speech_to_text", entry.stt_command, build_transcription_tool),
    )
    for name, command, build in commands:
        if not command.strip():
            continue
        try:
            tools.append(build(entry, env))
        except BadCommand as exc:
            problem = setting_problem(context.config, "media", exc.key, str(exc))
            logging.getLogger("hermes_core._host").warning(
                "%s: %s is not registered; correct the command (docs/media.md), or remove "
                "%s to leave the tool out",
                problem,
                name,
                exc.key,
            )
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


@hookimpl(trylast=True)
def hermes_doctor_checks(env: Environment, context: PluginContext) -> Sequence[DoctorCheckSpec]:
    """``hermes doctor``: each speech command set, as its tool would take it (the setting's
    line when it is refused) and found on ``PATH``; nothing is run."""
    entry = context.settings_as(MediaEntry)
    commands = (
        ("tts_command", entry.tts_command, build_speech_tool),
        ("stt_command", entry.stt_command, build_transcription_tool),
    )

    def check(
        key: str, command: str, build: Callable[[MediaEntry, Environment], Tool]
    ) -> DoctorResult:
        try:
            build(entry, env)
            found = command_found(command, key, env)
        except BadCommand as exc:
            return DoctorResult(
                "error", str(setting_problem(context.config, "media", key, str(exc)))
            )
        except MediaRefused as exc:
            return DoctorResult("error", f"{exc}: install it, or correct {key} (docs/media.md)")
        return DoctorResult("ok", f"found {found} (not run by this check)")

    return [
        DoctorCheckSpec(key, functools.partial(check, key, command, build))
        for key, command, build in commands
        if command.strip()
    ]

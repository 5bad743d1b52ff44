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

from hermes_core._plugin_support import setting_problem, shown_url
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

_OPENAI_IMAGES = "https://api.openai.com/v1"
"""The default ``image_base_url``: OpenAI's API, which refuses every request without a key."""


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

    found = [
        DoctorCheckSpec(key, functools.partial(check, key, command, build))
        for key, command, build in commands
        if command.strip()
    ]
    tools = context.config.tools
    image_gen = "image_gen" not in tools.disabled_toolsets and (
        tools.enabled_toolsets is None or "image_gen" in tools.enabled_toolsets
    )
    if entry.image_provider == "openai" and image_gen:
        found.append(
            DoctorCheckSpec("image_key", functools.partial(_image_key, entry, env, context))
        )
    return found


def _image_key(entry: MediaEntry, env: Environment, context: PluginContext) -> DoctorResult:
    """The bundled image provider's key (never shown). Unset, it is a warning only when
    ``tools.enabled_toolsets`` names ``image_gen``: the toolset is on by default, and a user who
    draws no images needs no key (``image_generate`` says what to set when it is called)."""
    from hermes_core._plugin_support import secret_variable

    variable = entry.image_api_key_env
    named = "plugins.entries.media.image_api_key_env names the variable"
    if secret_variable(env, variable):
        return DoctorResult("ok", f"image_generate: {variable} is set ({named})")
    if entry.image_base_url.rstrip("/") != _OPENAI_IMAGES:
        return DoctorResult(
            "ok",
            f"image_generate draws at {shown_url(entry.image_base_url)} (plugins.entries."
            f"media.image_base_url) without a key ({variable} is not set; {named})",
        )
    what = (
        f"image_generate has no key: {variable} is not set (in the environment or "
        f"$HERMES_HOME/.env; {named})"
    )
    if "image_gen" in (context.config.tools.enabled_toolsets or ()):
        return DoctorResult(
            "warning", f"{what}: set it, or leave image_gen out of tools.enabled_toolsets"
        )
    return DoctorResult("not checked", f"{what}: set it to draw images; nothing else needs it")

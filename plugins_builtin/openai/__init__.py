"""The ``openai`` model provider, selected by ``model.provider: openai`` (the default).

OpenAI's chat completions through the official SDK (:mod:`.provider`), streamed, with tool
calls; it speaks to any OpenAI-compatible server (llama.cpp's, vLLM, Ollama, LM Studio) by
following their rules: ``tool_choice: "auto"`` sent explicitly, ``content: ""`` beside tool
calls, usage asked for but not expected, tool calls written in the text understood
(:mod:`.text_calls`). The SDK is an install extra (``hermes-core-agent[openai]``), imported when
the provider is built, never when the plugin loads.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import ModelContext, ModelProviderSpec, hookimpl

if TYPE_CHECKING:
    from hermes_core.agent import ModelSettings

    from .provider import OpenAIProvider

KEY_VARIABLE = "OPENAI_API_KEY"
"""The key's variable when ``model.api_key_env`` names none."""


def create_provider(context: ModelContext) -> OpenAIProvider:
    """The provider for ``context.model``, its key from ``model.api_key_env`` or
    ``OPENAI_API_KEY`` (none needed for a local server)."""
    settings = _settings(context)
    try:
        from .provider import OpenAIProvider
    except ImportError as error:
        if error.name != "openai" and not (error.name or "").startswith("openai."):
            raise
        raise _no_sdk(settings) from None
    return OpenAIProvider(settings, _key(context), KEY_VARIABLE)


def check_ready(context: ModelContext) -> None:
    """Refuse what :func:`create_provider` would (the SDK not installed, no key), without
    importing the SDK: ``hermes doctor --offline``'s check."""
    settings = _settings(context)
    if importlib.util.find_spec("openai") is None:
        raise _no_sdk(settings)
    _key(context)


def _settings(context: ModelContext) -> ModelSettings:
    if context.model is None:
        raise ValueError("the openai provider is built with the model settings")
    settings: ModelSettings = context.model
    return settings


def _no_sdk(settings: ModelSettings) -> Exception:
    from hermes_core.agent import ModelError  # the agent's wire types: only here

    return ModelError(
        "the openai model provider needs the openai package: "
        "pip install 'hermes-core-agent[openai]'",
        provider="openai",
        model=settings.model,
    )


def _key(context: ModelContext) -> str | None:
    """The key, refused (a ``ConfigError`` naming its variable) when OpenAI's own API would
    get none."""
    from hermes_core.agent import require_vendor_key

    key: str | None = context.api_key(KEY_VARIABLE)
    require_vendor_key(
        "openai",
        key,
        _settings(context),
        variable=KEY_VARIABLE,
        sdk_base_url_variable="OPENAI_BASE_URL",  # the SDK's own
        local_example="http://127.0.0.1:8080/v1",
    )
    return key


@hookimpl(trylast=True)
def hermes_model_providers() -> Sequence[ModelProviderSpec]:
    """Register the ``openai`` provider."""
    return [
        ModelProviderSpec(
            name="openai",
            factory=create_provider,
            description="OpenAI chat completions and compatible servers (llama.cpp, vLLM, "
            "Ollama, LM Studio).",
            takes_reasoning_effort=True,
            ready=check_ready,
        )
    ]

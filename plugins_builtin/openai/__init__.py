"""The ``openai`` model provider, selected by ``model.provider: openai`` (the default).

OpenAI's chat completions through the official SDK (:mod:`.provider`), streamed, with tool
calls; it speaks to any OpenAI-compatible server (llama.cpp's, vLLM, Ollama, LM Studio) by
following their rules: ``tool_choice: "auto"`` sent explicitly, ``content: ""`` beside tool
calls, usage asked for but not expected, tool calls written in the text understood
(:mod:`.text_calls`). The SDK is an install extra (``hermes-core-agent[openai]``), imported when
the provider is built, never when the plugin loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import ModelContext, ModelProviderSpec, hookimpl

if TYPE_CHECKING:
    from hermes_core.agent import VendorSdk

    from .provider import OpenAIProvider

KEY_VARIABLE = "OPENAI_API_KEY"
"""The key's variable when ``model.api_key_env`` names none."""


def create_provider(context: ModelContext) -> OpenAIProvider:
    """The provider for ``context.model``, its key from ``model.api_key_env`` or
    ``OPENAI_API_KEY`` (none needed for a local server)."""
    sdk = _sdk()
    settings = sdk.settings(context)
    try:
        from .provider import OpenAIProvider
    except ImportError as error:
        if not sdk.is_missing(error):
            raise
        raise sdk.missing(settings) from None
    return OpenAIProvider(settings, sdk.key(context), KEY_VARIABLE)


def check_ready(context: ModelContext) -> None:
    """Refuse what :func:`create_provider` would (the SDK not installed, no key), without
    importing the SDK: ``hermes doctor --offline``'s check."""
    _sdk().check_ready(context)


def _sdk() -> VendorSdk:
    from hermes_core.agent import VendorSdk  # the agent floor: only when a provider is asked for

    return VendorSdk(
        "openai",
        KEY_VARIABLE,
        sdk_base_url_variable="OPENAI_BASE_URL",  # the SDK's own
        local_example="http://127.0.0.1:8080/v1",
    )


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

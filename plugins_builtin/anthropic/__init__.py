"""The ``anthropic`` model provider, selected by ``model.provider: anthropic``.

Anthropic's Messages API through the official SDK (:mod:`.provider`), streamed, with tool use.
The SDK is an install extra (``hermes-core-agent[anthropic]``), imported when the provider is
built, never when the plugin loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import ModelContext, ModelProviderSpec, hookimpl

if TYPE_CHECKING:
    from .provider import AnthropicProvider

KEY_VARIABLE = "ANTHROPIC_API_KEY"
"""The key's variable when ``model.api_key_env`` names none."""


def create_provider(context: ModelContext) -> AnthropicProvider:
    """The provider for ``context.model``, its key from ``model.api_key_env`` or
    ``ANTHROPIC_API_KEY``."""
    settings = context.model
    if settings is None:
        raise ValueError("the anthropic provider is built with the model settings")
    if settings.reasoning_effort is not None:
        from hermes_core import ConfigError

        # Extended thinking needs each answer's signed thinking blocks sent back before its
        # tool results, or the API refuses the next request; hermes' messages keep no blocks.
        raise ConfigError(
            f"{settings.reasoning_effort!r} is not supported by the anthropic provider (its "
            "extended thinking is not): set it to null with "
            "`hermes config set model.reasoning_effort null`",
            key="model.reasoning_effort",
        )
    try:
        from .provider import AnthropicProvider
    except ImportError as error:
        if error.name != "anthropic" and not (error.name or "").startswith("anthropic."):
            raise
        from hermes_core.agent import ModelError  # the agent's wire types: only here

        raise ModelError(
            "the anthropic model provider needs the anthropic package: "
            "pip install 'hermes-core-agent[anthropic]'",
            provider="anthropic",
            model=settings.model,
        ) from None
    from hermes_core.agent import require_vendor_key

    key = context.api_key(KEY_VARIABLE)
    require_vendor_key(
        "anthropic",
        key,
        settings,
        variable=KEY_VARIABLE,
        sdk_base_url_variable="ANTHROPIC_BASE_URL",  # the SDK's own
        local_example="http://127.0.0.1:8080",
    )
    return AnthropicProvider(settings, key, KEY_VARIABLE)


@hookimpl(trylast=True)
def hermes_model_providers() -> Sequence[ModelProviderSpec]:
    """Register the ``anthropic`` provider."""
    return [
        ModelProviderSpec(
            name="anthropic",
            factory=create_provider,
            description="Anthropic's Messages API (Claude models).",
        )
    ]

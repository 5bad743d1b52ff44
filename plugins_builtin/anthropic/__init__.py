"""The ``anthropic`` model provider, selected by ``model.provider: anthropic``.

Anthropic's Messages API through the official SDK (:mod:`.provider`), streamed, with tool use.
The SDK is an install extra (``hermes-core-agent[anthropic]``), imported when the provider is
built, never when the plugin loads.
"""

from __future__ import annotations

import os
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
    key = context.api_key(KEY_VARIABLE)
    # The vendor's API without a key can only refuse (and without a network the request would
    # be retried as a connection error never naming the key). The SDK reads ANTHROPIC_BASE_URL.
    if key is None and settings.base_url is None and not os.environ.get("ANTHROPIC_BASE_URL"):
        from hermes_core import ConfigError

        raise ConfigError(
            f"anthropic: no key: {settings.api_key_env or KEY_VARIABLE} is not set (in the "
            "environment or $HERMES_HOME/.env; model.api_key_env names another variable). A "
            "local server needs no key: set model.base_url to it (e.g. http://127.0.0.1:8080)"
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

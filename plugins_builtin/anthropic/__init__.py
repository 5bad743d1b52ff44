"""The ``anthropic`` model provider, selected by ``model.provider: anthropic``.

Anthropic's Messages API through the official SDK (:mod:`.provider`), streamed, with tool use.
The SDK is an install extra (``hermes-core-agent[anthropic]``), imported when the provider is
built, never when the plugin loads.

``model.reasoning_effort`` turns on extended thinking with a budget of tokens
(:data:`THINKING_BUDGETS`) that counts against ``model.max_output_tokens``, which must be
above it (:func:`check_settings`, run by the build and by ``hermes config validate``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import ModelContext, ModelProviderSpec, hookimpl

if TYPE_CHECKING:
    from hermes_core.agent import ModelSettings, VendorSdk

    from .provider import AnthropicProvider

KEY_VARIABLE = "ANTHROPIC_API_KEY"
"""The key's variable when ``model.api_key_env`` names none."""


THINKING_BUDGETS: Mapping[str, int] = {
    "minimal": 1024,  # the API's least
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 63999,  # under the 64,000 output tokens of the models that write the most
}
"""The ``budget_tokens`` of extended thinking per ``model.reasoning_effort`` (``none``: no
thinking, as with none set)."""

ANSWER_ROOM = 4096
"""The tokens beside the thinking budget the message of a refused ``max_output_tokens``
suggests: the answer's own (its text and tool calls)."""

MOST_OUTPUT = 64000
"""The most output tokens (``max_tokens``) of the Claude models that write the most
(Anthropic's models overview): a suggested ``max_output_tokens`` is never above it."""


def thinking_budget(settings: ModelSettings) -> int | None:
    """The thinking budget ``settings`` ask for, or ``None`` for no extended thinking."""
    return THINKING_BUDGETS.get(settings.reasoning_effort or "none")


def check_settings(settings: ModelSettings) -> None:
    """Refuse, with a ``ConfigError`` naming the key, the settings the Messages API would
    refuse every request of: a ``model.max_output_tokens`` (sent as ``max_tokens``) not above
    the thinking budget."""
    budget = thinking_budget(settings)
    if budget is None or settings.max_output_tokens > budget:
        return
    from hermes_core import ConfigError

    suggested = min(budget + ANSWER_ROOM, MOST_OUTPUT)
    lower = "lower model.reasoning_effort"
    if suggested < budget + ANSWER_ROOM:  # max: the answer gets what the thinking leaves
        xhigh = THINKING_BUDGETS["xhigh"]
        lower = f"better, {lower} (xhigh: {xhigh:,} tokens) to leave the answer room"
    raise ConfigError(
        f"{settings.max_output_tokens:,} is not above the anthropic provider's thinking "
        f"budget for model.reasoning_effort {settings.reasoning_effort!r}, {budget:,} tokens "
        "(the thinking counts against it, and the API requires more): raise it, e.g. "
        f"`hermes config set model.max_output_tokens {suggested}` (Claude models write "
        f"{MOST_OUTPUT:,} tokens at most, some fewer), or {lower}",
        key="model.max_output_tokens",
    )


def create_provider(context: ModelContext) -> AnthropicProvider:
    """The provider for ``context.model``, its key from ``model.api_key_env`` or
    ``ANTHROPIC_API_KEY``."""
    sdk = _sdk()
    settings = sdk.settings(context)
    check_settings(settings)
    try:
        from .provider import AnthropicProvider
    except ImportError as error:
        if not sdk.is_missing(error):
            raise
        raise sdk.missing(settings) from None
    return AnthropicProvider(settings, sdk.key(context), KEY_VARIABLE, thinking_budget(settings))


def check_ready(context: ModelContext) -> None:
    """Refuse what :func:`create_provider` would besides :func:`check_settings` (the SDK not
    installed, no key), without importing the SDK: ``hermes doctor --offline``'s check."""
    _sdk().check_ready(context)


def _sdk() -> VendorSdk:
    from hermes_core.agent import VendorSdk  # the agent floor: only when a provider is asked for

    return VendorSdk(
        "anthropic",
        KEY_VARIABLE,
        sdk_base_url_variable="ANTHROPIC_BASE_URL",  # the SDK's own
        local_example="http://127.0.0.1:8080",
    )


@hookimpl(trylast=True)
def hermes_model_providers() -> Sequence[ModelProviderSpec]:
    """Register the ``anthropic`` provider."""
    return [
        ModelProviderSpec(
            name="anthropic",
            factory=create_provider,
            description="Anthropic's Messages API (Claude models).",
            check=check_settings,
            takes_reasoning_effort=True,
            ready=check_ready,
        )
    ]

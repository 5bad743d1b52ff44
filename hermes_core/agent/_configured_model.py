"""The ``model`` section of a host's configuration as :class:`ModelSettings`, the key read from
the variable ``model.api_key_env`` names: what the agent is built with and ``hermes doctor``
checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._errors import ConfigError
from hermes_core.agent._wire import ModelSettings

if TYPE_CHECKING:
    from hermes_core._host import Host

__all__ = ["configured_model", "no_model_error"]


def no_model_error(host: Host) -> ConfigError:
    """The ``ConfigError`` naming ``model.model`` when no model is set (every command and
    ``hermes acp`` say so alike)."""
    return ConfigError(
        "no model is set: set model.model (and model.provider, default openai), e.g. "
        "`hermes config set model.model gpt-4.1-mini`",
        path=host.config_path,
        key="model.model",
    )


def configured_model(host: Host, *, require_model: bool = True) -> ModelSettings:
    """The settings of ``host``'s ``model`` section, its key read from the variable
    ``model.api_key_env`` names (else the provider reads its own); :func:`no_model_error`
    unless ``model.model`` is set or ``require_model`` is false."""
    from hermes_core._dotenv import secret_variable

    section = host.config.model
    if require_model and not section.model:
        raise no_model_error(host)
    key = secret_variable(host.env, section.api_key_env) if section.api_key_env else None
    return ModelSettings.of_section(section, key)

"""Model providers are a plugin kind: registered by ``hermes_model_providers``, selected by
``model.provider`` as search backends are, built with the ``model`` settings and the key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core import Config, Environment, RegistrationError
from hermes_core.agent import Message, ModelEvent, ModelRequest, ModelSettings, ModelTurn
from hermes_core.plugin import ModelContext, ModelProviderSpec, PluginError, hookimpl
from hermes_core.testing import make_host


class EchoModel:
    """A provider that answers with the last user message (a fake: no model runs here)."""

    def __init__(self, context: ModelContext) -> None:
        self.context = context

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield ModelTurn(Message("assistant", request.messages[-1].content))

    async def aclose(self) -> None:
        return None


class EchoPlugin:
    @hookimpl
    def hermes_model_providers(self) -> list[ModelProviderSpec]:
        return [
            ModelProviderSpec("echo", factory=EchoModel),
            ModelProviderSpec("broken", factory=lambda context: object()),
        ]


def _settings(provider: str = "echo", **fields: object) -> ModelSettings:
    return ModelSettings(provider=provider, model="m", **fields)  # type: ignore[arg-type]


def test_a_registered_provider_is_built_with_the_model_settings(hermes_env: Environment) -> None:
    host = make_host(Config(), hermes_env, plugins={"echo": EchoPlugin()})
    try:
        provider = host.create_model_provider(_settings(base_url="http://127.0.0.1:9/v1"))
        assert isinstance(provider, EchoModel)
        assert provider.context.model is not None
        assert provider.context.model.base_url == "http://127.0.0.1:9/v1"
    finally:
        host.close()


def test_an_unknown_provider_name_lists_the_valid_ones(hermes_env: Environment) -> None:
    host = make_host(Config(), hermes_env, plugins={"echo": EchoPlugin()})
    try:
        wanted = (
            r"unknown model provider 'opnai' \(set by model\.provider\); "
            "valid names: broken, echo"
        )
        with pytest.raises(RegistrationError, match=wanted):
            host.create_model_provider(_settings("opnai"))
    finally:
        host.close()


def test_a_factory_returning_no_provider_is_its_plugins_error(hermes_env: Environment) -> None:
    host = make_host(Config(), hermes_env, plugins={"echo": EchoPlugin()})
    try:
        with pytest.raises(PluginError, match=r"model provider 'broken'.*stream"):
            host.create_model_provider(_settings("broken"))
    finally:
        host.close()


def test_the_key_comes_from_the_environment_then_the_dotenv(
    hermes_env: Environment, hermes_home: Path
) -> None:
    base = ModelContext(Config(), hermes_env, {}, model=_settings())
    assert base.api_key("OPENAI_API_KEY") is None
    (hermes_home / ".env").write_text("OPENAI_API_KEY=from-dotenv\n", encoding="utf-8")
    assert base.api_key("OPENAI_API_KEY") == "from-dotenv"
    variables = {**hermes_env.variables, "OPENAI_API_KEY": "from-env"}
    env = replace(hermes_env, variables=variables)
    assert replace(base, env=env).api_key("OPENAI_API_KEY") == "from-env"


def test_the_key_never_shows_in_a_repr() -> None:
    settings = _settings(api_key="sk-secret-123", api_key_env="MY_KEY")
    assert "sk-secret-123" not in repr(settings)
    context = ModelContext(Config(), Environment.from_process(), {}, model=settings)
    assert "sk-secret-123" not in repr(context)

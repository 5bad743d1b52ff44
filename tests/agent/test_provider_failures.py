"""A third-party model provider that breaks its contract at run time, seen through the real
``hermes run`` (a subprocess): the error names the provider as ``model.provider`` names it (not
its Python class) and says what went wrong, for an exception its stream raised and for a stream
that ended without a turn."""

from __future__ import annotations

import pytest

from hermes_core.testing import HermesCli, write_dir_plugin

pytestmark = pytest.mark.subprocess

SHAKY_MODEL = '''
"""A model provider ``shaky`` (its class has no ``name``) whose stream does what
``plugins.entries.shaky-model.answer`` says."""

from hermes_core.agent import TextDelta
from hermes_core.plugin import ModelProviderSpec, hookimpl


class _Shaky:
    def __init__(self, answer):
        self.answer = answer

    async def stream(self, request):
        yield TextDelta("Let me see")
        if self.answer == "raise":
            raise RuntimeError("the inference socket closed")

    async def aclose(self):
        pass


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("shaky", lambda context: _Shaky(context.settings["answer"]))]
'''


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            "raise",
            "the server's answer could not be read: its stream raised RuntimeError: the "
            "inference socket closed",
        ),
        ("no turn", "the answer ended without a turn (a stream yields one ModelTurn, last)"),
    ],
)
def test_a_failing_provider_is_named_as_configured(
    hermes_cli: HermesCli, answer: str, said: str
) -> None:
    write_dir_plugin(hermes_cli.home / "plugins", "shaky-model", SHAKY_MODEL)
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [shaky-model]\n"
        f"  entries:\n    shaky-model: {{answer: {answer}}}\n"
        "model:\n  provider: shaky\n  model: shaky-1\n",
        encoding="utf-8",
    )

    done = hermes_cli.run("run", "hello", ok=False)

    assert done.returncode == 1
    assert f"hermes: error: shaky: model 'shaky-1': {said}" in done.stderr
    assert "_Shaky" not in done.stderr
    assert "Traceback" not in done.stderr


RETURNING_MODEL = '''
"""A model provider ``returning`` whose stream is a coroutine returning its events."""

from hermes_core.agent import Message, ModelTurn, TextDelta
from hermes_core.plugin import ModelProviderSpec, hookimpl


class Returning:
    async def stream(self, request):
        return [TextDelta("hi"), ModelTurn(Message("assistant", "hi"))]

    async def aclose(self):
        pass


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("returning", lambda context: Returning())]
'''


def test_a_stream_written_as_a_coroutine_is_told_to_be_an_async_generator(
    hermes_cli: HermesCli,
) -> None:
    # "stream must be a plain def" sent the author the wrong way: the contract's stream is an
    # async def that yields.
    write_dir_plugin(hermes_cli.home / "plugins", "returning-model", RETURNING_MODEL)
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [returning-model]\nmodel:\n  provider: returning\n  model: m\n",
        encoding="utf-8",
    )

    done = hermes_cli.run("run", "hello", ok=False)

    assert done.returncode == 2
    assert (
        "model provider 'returning' (from hermes_model_providers) could not be built: its "
        "factory returned Returning, whose stream must be an async generator (async def with "
        "yield), not a coroutine function"
    ) in done.stderr
    assert "plain def" not in done.stderr

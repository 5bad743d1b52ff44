"""The editor's model picker: ``session/new`` and ``session/load`` answer with the session's
config options, ``model`` (category ``model``: the configured ``model.model`` first, then the
models the provider's server lists, asked once per ``hermes acp`` with a short timeout), and
``session/set_config_option`` switches the session's model for that session only, nothing
saved: its next request asks it, its transcript's header names it. A listing that fails or
hangs leaves the configured model alone; an unknown option or value is invalid params.
``hermes acp`` runs as an editor runs it, with the bundled ``openai`` provider against the
test kit's ``FakeModelServer`` (no model can run here)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import RecordingClient

from hermes_core.testing import (
    FakeModelServer,
    FakeTurn,
    HermesCli,
    RecordedRequest,
    write_dir_plugin,
)
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"]

RELAY_PLUGIN = '''"""Two providers of a third party: "thinker" takes model.reasoning_effort
(its spec says so; its check refuses xhigh and max), "plain" does not say it."""

from hermes_core import ConfigError
from hermes_core.plugin import ModelProviderSpec, hookimpl
from hermes_core.testing import FakeModelProvider


def _build(context):
    return FakeModelProvider.scripted("Hi.")


def _check(settings):
    if settings.reasoning_effort in ("xhigh", "max"):
        raise ConfigError("thinker thinks at most high", key="model.reasoning_effort")


@hookimpl
def hermes_model_providers():
    return [
        ModelProviderSpec("thinker", factory=_build, check=_check, takes_reasoning_effort=True),
        ModelProviderSpec("plain", factory=_build),
    ]
'''


@asynccontextmanager
async def hermes_acp(
    hermes_cli: HermesCli,
    base_url: str,
    client: RecordingClient,
    *,
    plugins: tuple[str, ...] = (),
    **settings: Any,
) -> AsyncIterator[Any]:
    """``hermes acp`` as a child process, initialized, over the OpenAI wire at ``base_url``
    (the ``model`` section's other ``settings`` too; ``plugins`` of its home enabled)."""
    model = {"provider": "openai", "model": "fake-model", "base_url": base_url, **settings}
    config = {"plugins": {"enabled": ["files", *plugins]}, "model": model}
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    with (hermes_cli.root / "stderr.log").open("ab") as stderr:
        async with acp.spawn_agent_process(
            client,
            *hermes_cli.command("acp"),
            env=hermes_cli.variables(
                OPENAI_API_KEY="sk-fake-key-for-tests", ANTHROPIC_API_KEY="sk-fake-key-for-tests"
            ),
            cwd=hermes_cli.work,
            transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0},
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client.capabilities()
            )
            yield conn


def offered(options: Any) -> dict[str, tuple[str, str | None, list[str]]]:
    """Each option by id: its current value, its category and its values."""
    return {
        option.id: (option.current_value, option.category, [o.value for o in option.options])
        for option in options
    }


def last_user_text(request: RecordedRequest) -> str:
    return str([m for m in request.messages if m["role"] == "user"][-1]["content"])


async def say(conn: Any, session_id: str, text: str) -> Any:
    return await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])


async def test_the_model_picker_offers_the_listed_models_and_switches_one_session_only(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    listed = ("fake-large", "fake-model", "fake-small")
    turns = [FakeTurn(text="One."), FakeTurn(text="Two."), FakeTurn(text="Three.")]
    with FakeModelServer(turns, models=listed) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))
            other = await conn.new_session(cwd=str(hermes_cli.work))
            await say(conn, new.session_id, "before")
            switched = await conn.set_config_option(
                session_id=new.session_id, config_id="model", value="fake-large"
            )
            thinking = await conn.set_config_option(
                session_id=new.session_id, config_id="thought_level", value="high"
            )
            await say(conn, new.session_id, "after")
            await say(conn, other.session_id, "elsewhere")
        chats = [(last_user_text(r), r.body["model"]) for r in server.requests if r.messages]
        efforts = [r.body.get("reasoning_effort") for r in server.requests if r.messages]
        listings = [request for request in server.requests if request.path.endswith("/models")]

    assert offered(new.config_options) == {
        "model": ("fake-model", "model", ["fake-model", "fake-large", "fake-small"]),
        "thought_level": ("default", "thought_level", ["default", *EFFORTS]),
    }
    assert offered(switched.config_options)["model"][0] == "fake-large"
    assert offered(thinking.config_options)["thought_level"][0] == "high"
    assert offered(thinking.config_options)["model"][0] == "fake-large"
    assert efforts == [None, "high", None]
    assert len(listings) == 1  # asked once per hermes acp, for every session
    assert chats == [
        ("before", "fake-model"),
        ("after", "fake-large"),
        ("elsewhere", "fake-model"),
    ]
    path = hermes_cli.home / "sessions" / f"{new.session_id}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    headers = [r for r in records if r["type"] == "session"]
    assert [r["model"] for r in headers] == ["fake-model", "fake-large"]
    assert [r["reasoning_effort"] for r in headers] == [None, "high"]  # the thought level
    config = json.loads(hermes_cli.config.read_text(encoding="utf-8"))
    assert config["model"]["model"] == "fake-model"  # nothing saved


async def test_a_loaded_session_answers_with_the_configured_model_and_its_options(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer([FakeTurn(text="One.")], models=("fake-model", "fake-b")) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))
            await say(conn, new.session_id, "hello")
        async with hermes_acp(
            hermes_cli, server.openai_base_url, client, reasoning_effort="low"
        ) as conn:
            loaded = await conn.load_session(cwd=str(hermes_cli.work), session_id=new.session_id)

    assert offered(loaded.config_options) == {
        "model": ("fake-model", "model", ["fake-model", "fake-b"]),
        "thought_level": ("low", "thought_level", ["default", *EFFORTS]),
    }


async def test_a_listing_refused_leaves_the_configured_model_alone(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer(models=("fake-model", "fake-b"), api_key="another-key") as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))

    assert offered(new.config_options)["model"] == ("fake-model", "model", ["fake-model"])


async def test_a_listed_name_that_is_no_model_name_is_not_offered(
    hermes_cli: HermesCli,
) -> None:
    """The one rule of a model name (``--model``, ``/model``, a cron job's): one word of
    printable text, at most 200 characters; a listed name past it is left out."""
    client = RecordingClient()
    listed = ("fake-model", "two words", "bad\x1bname", "m" * 201, "m" * 200)
    with FakeModelServer(models=listed) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))

    assert offered(new.config_options)["model"] == (
        "fake-model",
        "model",
        ["fake-model", "m" * 200],
    )


async def test_a_listed_name_is_offered_without_the_space_around_it(
    hermes_cli: HermesCli,
) -> None:
    """The space around a model name is no part of it (the rule ``--model`` strips it by): a
    listed ``" gpt-x\\n"`` is offered as ``gpt-x``, the name the provider is then asked."""
    client = RecordingClient()
    with FakeModelServer(models=("fake-model", " spaced-model\n")) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))

    assert offered(new.config_options)["model"] == (
        "fake-model",
        "model",
        ["fake-model", "spaced-model"],
    )


async def test_a_listing_that_hangs_does_not_hold_session_new(hermes_cli: HermesCli) -> None:
    """A server that takes the connection and never answers: the session opens anyway."""
    client = RecordingClient()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        async with hermes_acp(hermes_cli, base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))

    assert offered(new.config_options)["model"] == ("fake-model", "model", ["fake-model"])


async def test_an_unknown_option_or_value_is_invalid_params_naming_it(
    hermes_cli: HermesCli,
) -> None:
    client = RecordingClient()
    with FakeModelServer(models=("fake-model", "fake-b")) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))
            errors = []
            asked = [("mode", "fast"), ("model", "fake-z"), ("thought_level", "extreme")]
            for config_id, value in asked:
                with pytest.raises(acp.RequestError) as raised:
                    await conn.set_config_option(
                        session_id=new.session_id, config_id=config_id, value=value
                    )
                errors.append(raised.value)

    assert [error.code for error in errors] == [-32602, -32602, -32602]
    assert errors[0].data["message"] == "no option 'mode' (the options: model, thought_level)"
    assert errors[1].data["message"] == "'fake-z' is not offered (offered: fake-model, fake-b)"
    assert "'extreme' is not offered (offered: default, " in errors[2].data["message"]


async def test_the_thinking_levels_are_those_the_providers_settings_check_takes(
    hermes_cli: HermesCli,
) -> None:
    """Anthropic's thinking budget must stay under ``model.max_output_tokens``: the efforts
    whose budget does not (high: 16,384 tokens, against 10,000) are not offered."""
    client = RecordingClient()
    with FakeModelServer(models=("fake-model",)) as server:
        async with hermes_acp(
            hermes_cli,
            server.anthropic_base_url,
            client,
            provider="anthropic",
            max_output_tokens=10000,
        ) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))

    assert offered(new.config_options)["thought_level"] == (
        "default",
        "thought_level",
        ["default", "none", "minimal", "low", "medium"],
    )


@pytest.mark.parametrize(
    ("provider", "levels"),
    [("thinker", ["default", "none", "minimal", "low", "medium", "high"]), ("plain", None)],
)
async def test_a_plugins_provider_gets_the_thinking_levels_when_its_spec_takes_an_effort(
    hermes_cli: HermesCli, provider: str, levels: list[str] | None
) -> None:
    """Not a list of provider names in ACP: the spec's ``takes_reasoning_effort`` says it."""
    write_dir_plugin(hermes_cli.home / "plugins", "relay", RELAY_PLUGIN)
    client = RecordingClient()
    async with hermes_acp(
        hermes_cli, "http://127.0.0.1:9/v1", client, plugins=("relay",), provider=provider
    ) as conn:
        new = await conn.new_session(cwd=str(hermes_cli.work))

    options = offered(new.config_options)
    assert options["model"] == ("fake-model", "model", ["fake-model"])
    if levels is None:
        assert "thought_level" not in options
    else:
        assert options["thought_level"] == ("default", "thought_level", levels)


async def test_a_switch_while_a_turn_runs_is_refused(hermes_cli: HermesCli) -> None:
    """As ``hermes chat``'s ``/model``: a turn's requests all go to one model."""
    client = RecordingClient()
    answered = threading.Event()

    def slow(request: RecordedRequest) -> FakeTurn:
        answered.wait(60)  # a guard, not a timing check
        return FakeTurn(text="Done.")

    with FakeModelServer(responder=slow, models=("fake-model", "fake-b")) as server:
        async with hermes_acp(hermes_cli, server.openai_base_url, client) as conn:
            new = await conn.new_session(cwd=str(hermes_cli.work))
            turn = asyncio.ensure_future(say(conn, new.session_id, "take your time"))
            await server.wait_for_async(lambda s: any(r.messages for r in s.requests), 30)
            with pytest.raises(acp.RequestError) as raised:
                await conn.set_config_option(
                    session_id=new.session_id, config_id="model", value="fake-b"
                )
            answered.set()
            await turn
            await say(conn, new.session_id, "again")
        models = [r.body["model"] for r in server.requests if r.messages]

    assert raised.value.code == -32602
    assert "while a prompt turn runs" in json.dumps(raised.value.data)
    assert models == ["fake-model", "fake-model"]

"""``hermes acp`` in process, over a loopback socket pair: initialize, session/new, a prompt's
updates and its stop reason. The model is a fake (no model can run here); the host, its
bundled plugins, the files and the protocol's framing are real."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.agent import ModelError
from hermes_core.testing import FakeModelProvider, fake_turn
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import acp
else:  # imported at first use: every pytest worker collects this file
    acp = Imported("acp")

pytestmark = pytest.mark.anyio


async def test_initialize_says_only_what_hermes_does(acp_env: Environment) -> None:
    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        answer = await served.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
    capabilities = answer.agent_capabilities
    assert answer.protocol_version == acp.PROTOCOL_VERSION
    assert capabilities is not None
    assert capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.image is False
    assert capabilities.prompt_capabilities.audio is False
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.mcp_capabilities is not None
    assert (capabilities.mcp_capabilities.http, capabilities.mcp_capabilities.sse) == (True, False)
    assert answer.agent_info is not None
    assert answer.agent_info.name == "hermes"
    assert answer.auth_methods == []


@pytest.mark.parametrize("cwd", ["project", "./project", "relative/dir"])
async def test_a_relative_cwd_is_refused(acp_env: Environment, cwd: str) -> None:
    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        await served.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        with pytest.raises(acp.RequestError) as refused:
            await served.conn.new_session(cwd=cwd)
    assert refused.value.code == -32602
    assert "absolute" in json.dumps(refused.value.data)


async def test_a_missing_cwd_is_refused(acp_env: Environment, tmp_path: Path) -> None:
    async with serving(acp_env, FakeModelProvider.scripted()) as served:
        await served.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        with pytest.raises(acp.RequestError, match="Invalid params"):
            await served.conn.new_session(cwd=str(tmp_path / "nowhere"))


async def test_a_tool_call_goes_pending_in_progress_completed_before_the_answer(
    acp_env: Environment,
) -> None:
    project = acp_env.cwd
    (project / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn("Reading it.", ("read_file", {"path": "notes.txt", "offset": 2})),
        "The second line is beta.",
        chunk=4,
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(project)
        answer = await served.say(session_id, "What is line 2 of notes.txt?")
        client = served.client
    assert answer.stop_reason == "end_turn"
    assert client.tool_statuses() == [
        ("tool_call", "pending"),
        ("tool_call_update", "in_progress"),
        ("tool_call_update", "completed"),
    ]
    start = next(u for u in client.updates if u.session_update == "tool_call")
    assert start.kind == "read"
    assert start.title == "read_file `notes.txt`"
    assert [(loc.path, loc.line) for loc in start.locations] == [(str(project / "notes.txt"), 2)]
    done = [u for u in client.updates if u.session_update == "tool_call_update"][-1]
    assert done.tool_call_id == start.tool_call_id
    assert "beta" in done.content[0].content.text
    assert client.text() == "Reading it.The second line is beta."
    assert "usage_update" in client.kinds()
    usage = next(u for u in client.updates if u.session_update == "usage_update")
    assert (usage.used, usage.size) == (15, 32_000)
    assert answer.usage is None  # unstable in the schema: hermes speaks the stable protocol
    # The tool result went back to the model through the real file tool.
    assert "beta" in model.requests[1].messages[-1].content


@pytest.mark.parametrize("depth", [500, 100_000])
async def test_arguments_nested_too_deep_to_read_are_a_failed_call_and_the_turn_goes_on(
    acp_env: Environment, depth: int
) -> None:
    # Past Python's recursion json.loads raises RecursionError, not ValueError, and past a few
    # hundred levels the SDK cannot write them back ("Maximum serialization depth exceeded"):
    # showing the model's call to the editor raised either, the prompt an internal error.
    bad = fake_turn("Reading it.", ("read_file", {}))
    deep = '{"path": ' + "[" * depth + "]" * depth + "}"
    call = type(bad.message.tool_calls[0])("call_1", "read_file", deep)
    bad = type(bad)(type(bad.message)("assistant", "", tool_calls=(call,)), bad.usage, "tool_use")
    model = FakeModelProvider.scripted(bad, "That did not work.")
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "Read it.")
        client = served.client
    assert answer.stop_reason == "end_turn"
    assert client.tool_statuses()[-1] == ("tool_call_update", "failed")
    assert client.text() == "That did not work."


async def test_tool_call_ids_stay_unique_across_requests(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("", ("search_files", {"glob": "*.txt"})),
        fake_turn("", ("search_files", {"glob": "*.md"})),
        "Nothing there.",
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "Find notes")
        starts = [u for u in served.client.updates if u.session_update == "tool_call"]
    assert [start.kind for start in starts] == ["search", "search"]
    assert len({start.tool_call_id for start in starts}) == 2


async def test_a_turn_limit_answers_max_turn_requests(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("Still looking.", ("search_files", {"glob": "*.py"})),
        fake_turn("And more.", ("search_files", {"glob": "*.py"})),
    )
    async with serving(acp_env, model, config={"agent": {"max_turns": 1}}) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "Look forever")
        thoughts = [
            u.content.text
            for u in served.client.updates
            if u.session_update == "agent_thought_chunk"
        ]
    assert answer.stop_reason == "max_turn_requests"
    assert any("1" in text and "turn" in text for text in thoughts), thoughts


async def test_a_failed_model_is_a_json_rpc_error_naming_the_provider(
    acp_env: Environment,
) -> None:
    failure = ModelError("401 Unauthorized: bad key", provider="fake", model="fake-1", status=401)
    async with serving(acp_env, FakeModelProvider.scripted(failure)) as served:
        session_id = await served.start(acp_env.cwd)
        with pytest.raises(acp.RequestError) as failed:
            await served.say(session_id, "hello")
    assert failed.value.code == -32603
    assert "401 Unauthorized" in json.dumps(failed.value.data)


async def test_embedded_context_reaches_the_model_with_its_uri(acp_env: Environment) -> None:
    from acp import embedded_text_resource, resource_block, text_block

    model = FakeModelProvider.scripted("It defines main.")
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        resource = resource_block(embedded_text_resource("file:///src/app.py", "def main(): ..."))
        await served.conn.prompt(
            session_id=session_id, prompt=[text_block("What is in this file?"), resource]
        )
    sent = model.requests[0].messages[0].content
    assert sent.startswith("What is in this file?")
    assert '<context uri="file:///src/app.py">\ndef main(): ...\n</context>' in sent


async def test_two_prompts_on_one_session_run_one_after_the_other(
    acp_env: Environment,
) -> None:
    streaming = 0
    most = 0

    class Counting(FakeModelProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            nonlocal streaming, most
            streaming += 1
            most = max(most, streaming)
            try:
                async for event in super().stream(request):
                    yield event
            finally:
                streaming -= 1

    model = Counting(["First answer.", "Second answer."], delay=0.02, chunk=3)
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        first, second = await asyncio.gather(
            served.say(session_id, "one"), served.say(session_id, "two")
        )
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert most == 1
    history = [(m.role, m.content) for m in model.requests[1].messages]
    assert history == [("user", "one"), ("assistant", "First answer."), ("user", "two")]


def test_the_early_initialize_answer_is_a_valid_response_of_the_sdk() -> None:
    from acp.schema import InitializeResponse

    from hermes_core._acp.handshake import PROTOCOL_VERSION as HERMES_VERSION
    from hermes_core._acp.handshake import initialize_result

    assert HERMES_VERSION == acp.PROTOCOL_VERSION
    answer = InitializeResponse.model_validate(initialize_result(7))
    assert answer.protocol_version == acp.PROTOCOL_VERSION
    assert answer.agent_capabilities is not None
    assert answer.agent_capabilities.load_session is True


async def test_a_token_limit_answers_max_tokens(acp_env: Environment) -> None:
    model = FakeModelProvider.scripted(
        fake_turn("Reading a lot.", ("search_files", {"glob": "*"})),
        "Never asked.",
    )
    async with serving(acp_env, model, config={"agent": {"max_tokens": 10}}) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "read everything")
    assert answer.stop_reason == "max_tokens"
    assert len(model.requests) == 1


async def test_an_answer_cut_at_max_output_tokens_answers_max_tokens(
    acp_env: Environment,
) -> None:
    """The model stopped by ``model.max_output_tokens``: ACP's ``max_tokens`` ("the maximum
    number of tokens"), and a thought saying so, not ``end_turn`` as for a whole answer."""
    cut = dataclasses.replace(fake_turn("Step one, then step tw"), stop_reason="max_tokens")
    async with serving(acp_env, FakeModelProvider.scripted(cut)) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "explain")
        thoughts = [
            u.content.text
            for u in served.client.updates
            if u.session_update == "agent_thought_chunk"
        ]
    assert answer.stop_reason == "max_tokens"
    assert any("model.max_output_tokens" in text for text in thoughts), thoughts


async def test_a_retried_model_request_is_told_as_a_thought(acp_env: Environment) -> None:
    busy = ModelError(
        "503 Service Unavailable", provider="fake", model="fake-1", retryable=True, retry_after=0
    )
    async with serving(acp_env, FakeModelProvider.scripted(busy, "Back.")) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "hello")
        thoughts = [
            u.content.text
            for u in served.client.updates
            if u.session_update == "agent_thought_chunk"
        ]
    assert answer.stop_reason == "end_turn"
    assert len(thoughts) == 1
    assert "503 Service Unavailable" in thoughts[0]
    assert "trying again" in thoughts[0]


async def test_a_model_that_cannot_be_built_is_an_error_of_session_new(
    acp_env: Environment,
) -> None:
    from hermes_core import Host, RegistrationError

    def unknown(host: Host) -> Any:
        raise RegistrationError("unknown model provider 'opnai' (model.provider)")

    async with serving(acp_env, FakeModelProvider.scripted(), make_agent=unknown) as served:
        await served.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        with pytest.raises(acp.RequestError) as failed:
            await served.conn.new_session(cwd=str(acp_env.cwd))
    assert "unknown model provider 'opnai'" in json.dumps(failed.value.data)


@pytest.mark.parametrize("blocks", [[], ["   \n"]])
async def test_an_empty_prompt_is_refused_and_the_model_is_not_asked(
    acp_env: Environment, blocks: list[str]
) -> None:
    from acp import text_block

    model = FakeModelProvider.scripted("never said")
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        with pytest.raises(acp.RequestError) as refused:
            await served.conn.prompt(
                session_id=session_id, prompt=[text_block(text) for text in blocks]
            )
    assert refused.value.code == -32602
    assert "the prompt is empty" in json.dumps(refused.value.data)
    assert model.requests == []

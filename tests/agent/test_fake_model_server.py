"""FakeModelServer, checked with the vendors' official SDK clients pointed at it: when
``openai`` and ``anthropic`` parse what it sends, its wire formats are right."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from hermes_core.agent import Usage
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, RecordedRequest
from hermes_core.testing._imported import Imported

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported at first use: every pytest worker collects this file, few run it
    anthropic, openai = Imported("anthropic"), Imported("openai")

KEY = "sk-fake-test-0123456789"
HI = [{"role": "user", "content": "Hi"}]


def _openai(server: FakeModelServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0)


def _anthropic(server: FakeModelServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=KEY, base_url=server.anthropic_base_url, max_retries=0)


TWO_CALLS = FakeTurn(
    text="Let me look.",
    tool_calls=[
        FakeToolCall("read_file", {"path": "a.txt", "lines": [1, 2]}, id="call_a"),
        FakeToolCall("search", {"query": "alpha beta"}, id="call_b"),
    ],
    usage=Usage(40, 12),
)


async def _openai_chunks(server: FakeModelServer, **options: Any) -> list[Any]:
    async with _openai(server) as client:
        stream = await client.chat.completions.create(
            model="fake", messages=HI, stream=True, **options
        )
        return [chunk async for chunk in stream]


def test_an_openai_stream_splits_text_and_arguments_as_servers_do() -> None:
    with FakeModelServer([TWO_CALLS]) as server:
        chunks = asyncio.run(_openai_chunks(server, stream_options={"include_usage": True}))

    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(texts) >= 2
    assert "".join(texts) == "Let me look."
    calls = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    firsts = [d for d in calls if d.id is not None]
    assert [(d.index, d.id, d.function.name) for d in firsts] == [
        (0, "call_a", "read_file"),
        (1, "call_b", "search"),
    ]
    rest = [d for d in calls if d.id is None]
    assert all(d.function.name is None for d in rest)
    for index, expected in ((0, {"path": "a.txt", "lines": [1, 2]}), (1, {"query": "alpha beta"})):
        pieces = [d.function.arguments for d in calls if d.index == index]
        assert len([p for p in pieces if p]) >= 2
        assert json.loads("".join(pieces)) == expected
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (40, 12)


def test_the_openai_sdks_own_accumulator_rebuilds_the_whole_answer() -> None:
    async def main(server: FakeModelServer) -> Any:
        async with _openai(server) as client:
            # Out of `beta` in later openai releases; the test extra allows one that has it there.
            helper = getattr(client.chat.completions, "stream", None)
            stream = helper or client.beta.chat.completions.stream
            async with stream(model="fake", messages=HI) as events:
                return await events.get_final_completion()

    with FakeModelServer([TWO_CALLS]) as server:
        completion = asyncio.run(main(server))

    message = completion.choices[0].message
    assert message.content == "Let me look."
    assert [(c.id, c.function.name) for c in message.tool_calls or []] == [
        ("call_a", "read_file"),
        ("call_b", "search"),
    ]
    assert json.loads(message.tool_calls[0].function.arguments) == {
        "path": "a.txt",
        "lines": [1, 2],
    }


def test_usage_comes_only_when_asked_for_and_scripted() -> None:
    with FakeModelServer([FakeTurn(text="a b"), FakeTurn(text="a b", usage=None)]) as server:
        not_asked = asyncio.run(_openai_chunks(server))
        none_sent = asyncio.run(_openai_chunks(server, stream_options={"include_usage": True}))

    assert all(chunk.usage is None for chunk in not_asked)
    assert all(chunk.usage is None for chunk in none_sent)  # as llama.cpp's server streams


def test_a_plain_openai_answer_parses() -> None:
    async def main(server: FakeModelServer) -> Any:
        async with _openai(server) as client:
            return await client.chat.completions.create(model="fake", messages=HI)

    with FakeModelServer([TWO_CALLS]) as server:
        completion = asyncio.run(main(server))

    assert completion.choices[0].finish_reason == "tool_calls"
    assert (
        completion.choices[0].message.tool_calls[1].function.arguments == '{"query": "alpha beta"}'
    )
    assert completion.usage is not None
    assert completion.usage.total_tokens == 52


def test_an_anthropic_stream_parses_with_the_sdks_accumulator() -> None:
    async def main(server: FakeModelServer) -> tuple[list[Any], Any]:
        async with (
            _anthropic(server) as client,
            client.messages.stream(model="fake", max_tokens=100, messages=HI) as stream,
        ):
            events = [event async for event in stream]
            return events, await stream.get_final_message()

    with FakeModelServer([TWO_CALLS]) as server:
        events, message = asyncio.run(main(server))

    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    texts = [d.text for d in deltas if d.type == "text_delta"]
    parts = [d.partial_json for d in deltas if d.type == "input_json_delta"]
    assert len(texts) >= 2
    assert len(parts) >= 4  # two calls, each in pieces
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[0].text == "Let me look."
    assert (message.content[1].id, message.content[1].input) == (
        "call_a",
        {"path": "a.txt", "lines": [1, 2]},
    )
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (40, 12)


def test_a_plain_anthropic_answer_parses() -> None:
    async def main(server: FakeModelServer) -> Any:
        async with _anthropic(server) as client:
            return await client.messages.create(model="fake", max_tokens=50, messages=HI)

    with FakeModelServer([FakeTurn(text="Hello.", truncated=True)]) as server:
        message = asyncio.run(main(server))

    assert message.content[0].text == "Hello."
    assert message.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    ("status", "error_name"),
    [
        (429, "RateLimitError"),
        (400, "BadRequestError"),
        (401, "AuthenticationError"),
        (500, "InternalServerError"),
    ],
)
def test_scripted_errors_are_the_vendors_errors(status: int, error_name: str) -> None:
    openai_error = getattr(openai, error_name)
    anthropic_error = getattr(anthropic, error_name)

    async def main(server: FakeModelServer) -> list[BaseException]:
        caught: list[BaseException] = []
        async with _openai(server) as client:
            try:
                await client.chat.completions.create(model="fake", messages=HI)
            except openai.APIStatusError as error:
                caught.append(error)
        async with _anthropic(server) as other:
            try:
                await other.messages.create(model="fake", max_tokens=5, messages=HI)
            except anthropic.APIStatusError as error:
                caught.append(error)
        return caught

    turn = FakeTurn(error=status, retry_after=3)
    with FakeModelServer([turn, turn]) as server:
        first, second = asyncio.run(main(server))

    assert isinstance(first, openai_error)
    assert isinstance(second, anthropic_error)
    for error in (first, second):
        assert isinstance(error, openai.APIStatusError | anthropic.APIStatusError)
        assert error.status_code == status
        retry_after = error.response.headers.get("retry-after")
        assert retry_after == ("3" if status == 429 else None)
    assert isinstance(second, anthropic.APIStatusError)
    assert isinstance(second.body, dict)
    assert second.body["type"] == "error"
    if status == 401:  # the key echoed, as real servers partly do: a provider must not repeat it
        assert KEY in str(first)


def test_a_responder_answers_concurrent_conversations_by_their_first_message() -> None:
    def by_goal(request: RecordedRequest) -> FakeTurn:
        return FakeTurn(text=f"done: {request.first_user_text}")

    async def ask(client: openai.AsyncOpenAI, goal: str) -> str | None:
        done = await client.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": goal}]
        )
        return done.choices[0].message.content

    async def main(server: FakeModelServer) -> list[str | None]:
        async with _openai(server) as client:
            return list(await asyncio.gather(*(ask(client, f"task {n}") for n in range(4))))

    with FakeModelServer(responder=by_goal) as server:
        answers = asyncio.run(main(server))

    assert answers == [f"done: task {n}" for n in range(4)]


def test_held_turns_show_how_many_requests_run_at_once() -> None:
    gate = threading.Event()
    turns = [FakeTurn(text=f"answer {n}", gate=gate) for n in range(3)]

    async def main() -> tuple[int, FakeModelServer]:
        async with FakeModelServer(turns) as server, _openai(server) as client:
            calls = [
                asyncio.create_task(client.chat.completions.create(model="f", messages=HI))
                for _ in range(3)
            ]
            await server.wait_for_async(lambda s: s.in_flight == 3)
            held = server.in_flight
            gate.set()
            await asyncio.gather(*calls)
            await server.wait_for_async(lambda s: s.in_flight == 0)
            return held, server

    held, server = asyncio.run(main())

    assert held == 3
    assert server.max_in_flight == 3
    assert server.remaining == 0


def test_a_stream_held_mid_way_can_be_cancelled_and_the_server_sees_it() -> None:
    gate = threading.Event()

    async def main(server: FakeModelServer) -> list[str]:
        seen: list[str] = []
        async with _openai(server) as client:
            stream = await client.chat.completions.create(model="f", messages=HI, stream=True)
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    seen.append(chunk.choices[0].delta.content)
                    break  # the user pressed Ctrl-C
            await stream.close()
        return seen

    turn = FakeTurn(text="one two three four five", gate=gate, hold_after=2)
    with FakeModelServer([turn]) as server:
        seen = asyncio.run(main(server))
        server.wait_for(lambda s: s.requests[0].done)
        request = server.requests[0]

    assert seen == ["one "]
    assert request.disconnected
    assert not gate.is_set()


def test_closing_the_server_drops_an_answer_still_held() -> None:
    server = FakeModelServer([FakeTurn(text="never", gate=threading.Event())]).start()
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            httpx.post(f"{server.openai_base_url}/chat/completions", json={"messages": HI})
        except httpx.HTTPError as error:
            failed.append(error)

    client = threading.Thread(target=ask)
    client.start()
    server.wait_for_requests(1)
    server.close()
    client.join()

    assert len(failed) == 1
    assert server.requests[0].disconnected


def test_requests_are_recorded_with_the_key_kept_and_hidden_from_the_repr() -> None:
    with FakeModelServer([FakeTurn(text="ok"), FakeTurn(text="ok")]) as server:
        with openai.OpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0) as sync:
            sync.chat.completions.create(
                model="fake", messages=[{"role": "system", "content": "Be brief."}, *HI]
            )
        asyncio.run(_anthropic_hello(server))
        first, second = server.requests

    assert (first.wire, first.path, first.api_key) == ("openai", "/v1/chat/completions", KEY)
    assert (first.system, first.first_user_text, first.stream) == ("Be brief.", "Hi", False)
    assert (second.wire, second.path, second.api_key) == ("anthropic", "/v1/messages", KEY)
    assert (second.system, second.body["max_tokens"]) == ("Be brief.", 7)
    assert KEY not in repr(first)
    assert KEY not in repr(second)
    assert "[redacted]" in repr(first)


async def _anthropic_hello(server: FakeModelServer) -> None:
    async with _anthropic(server) as client:
        await client.messages.create(model="fake", max_tokens=7, system="Be brief.", messages=HI)


def test_calls_written_in_the_text_are_no_wire_tool_calls() -> None:
    turn = FakeTurn(
        text="Adding. ", tool_calls=[FakeToolCall("add", {"a": 1, "b": 2})], tool_calls_in_text=True
    )

    async def main(server: FakeModelServer) -> Any:
        async with _openai(server) as client:
            return await client.chat.completions.create(model="f", messages=HI)

    with FakeModelServer([turn]) as server:
        completion = asyncio.run(main(server))

    message = completion.choices[0].message
    assert message.tool_calls is None
    assert (
        message.content
        == 'Adding. <tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    )
    assert completion.choices[0].finish_reason == "stop"


def test_a_request_with_nothing_scripted_is_refused_saying_so() -> None:
    async def main(server: FakeModelServer) -> None:
        async with _openai(server) as client:
            await client.chat.completions.create(model="f", messages=HI)

    with (
        FakeModelServer([]) as server,
        pytest.raises(openai.BadRequestError, match="no scripted turn left for request 1"),
    ):
        asyncio.run(main(server))


def test_a_responder_that_raises_is_a_refusal_naming_the_error() -> None:
    def broken(request: RecordedRequest) -> FakeTurn:
        raise KeyError(request.first_user_text)

    async def main(server: FakeModelServer) -> None:
        async with _openai(server) as client:
            await client.chat.completions.create(model="f", messages=HI)

    with (
        FakeModelServer(responder=broken) as server,
        pytest.raises(openai.BadRequestError, match="the responder raised KeyError"),
    ):
        asyncio.run(main(server))


CACHED = FakeTurn(text="Again.", usage=Usage(1200, 30, cached_tokens=1000), cache_write_tokens=150)


def test_the_prompt_caches_counts_are_each_vendors() -> None:
    async def main(server: FakeModelServer) -> tuple[Any, list[Any]]:
        async with (
            _anthropic(server) as client,
            client.messages.stream(model="fake", max_tokens=100, messages=HI) as stream,
        ):
            message = await stream.get_final_message()
        return message, await _openai_chunks(server, stream_options={"include_usage": True})

    with FakeModelServer([CACHED, CACHED]) as server:
        message, chunks = asyncio.run(main(server))

    # Anthropic's input_tokens leaves out what was read from the cache and written to it.
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (50, 1000)
    assert (usage.cache_creation_input_tokens, usage.output_tokens) == (150, 30)
    # OpenAI's prompt_tokens hold the cached ones.
    (counted,) = [chunk.usage for chunk in chunks if chunk.usage is not None]
    assert (counted.prompt_tokens, counted.prompt_tokens_details.cached_tokens) == (1200, 1000)


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_a_reasoning_models_thinking_streams_before_its_text(key: str) -> None:
    turn = FakeTurn(text="It is 5.", reasoning="2 and 3 make 5.", reasoning_key=key)
    with FakeModelServer([turn]) as server:
        chunks = asyncio.run(_openai_chunks(server))

    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    thought = [getattr(d, key) for d in deltas if getattr(d, key, None)]
    assert len(thought) >= 2
    assert "".join(thought) == "2 and 3 make 5."
    assert "".join(d.content or "" for d in deltas) == "It is 5."


def test_several_reasoning_texts_are_one_a_paragraph_apart_on_the_openai_wire() -> None:
    turn = FakeTurn(text="It is 5.", reasoning=("2 and 3.", "Make 5."))
    with FakeModelServer([turn, turn]) as server:
        chunks = asyncio.run(_openai_chunks(server))
        whole = httpx.post(f"{server.openai_base_url}/chat/completions", json={"messages": HI})

    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    streamed = "".join(getattr(d, "reasoning_content", None) or "" for d in deltas)
    assert streamed == "2 and 3.\n\nMake 5."
    assert whole.json()["choices"][0]["message"]["reasoning_content"] == streamed


def test_more_than_four_cache_breakpoints_are_refused_as_anthropic_does() -> None:
    mark = {"type": "ephemeral"}
    blocks = [{"type": "text", "text": f"part {n}", "cache_control": mark} for n in range(5)]

    async def main(server: FakeModelServer) -> None:
        async with _anthropic(server) as client:
            await client.messages.create(
                model="fake", max_tokens=50, messages=[{"role": "user", "content": blocks}]
            )

    with FakeModelServer([FakeTurn(text="Never.")]) as server:
        with pytest.raises(anthropic.BadRequestError, match=r"A maximum of 4 blocks.*Found 5"):
            asyncio.run(main(server))
        assert server.remaining == 1  # the scripted answer is kept for the next request

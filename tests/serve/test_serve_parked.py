"""Calls parked while a 2026-07-28 client answers an approval form: one run per call, however
many requests carry its answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import mcp_types
import pytest

from hermes_core._approvals.prompt import Elicit
from hermes_core._serve.parked import ParkedCalls, TooManyParked


def _result(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])


def _accept(answer: str) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"answer": answer})


async def _with_parked(test: Callable[[ParkedCalls], Awaitable[None]]) -> None:
    """Run ``test`` with a running :class:`ParkedCalls`."""
    parked = ParkedCalls(keep_for=5)
    async with anyio.create_task_group() as group:
        await group.start(parked.run)
        await test(parked)
        group.cancel_scope.cancel()


def test_a_call_that_does_not_ask_answers_in_the_first_round() -> None:
    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        return _result("done")

    async def test(parked: ParkedCalls) -> None:
        assert await parked.start(call) == _result("done")

    anyio.run(_with_parked, test)


def test_each_question_is_one_round_and_the_call_runs_once() -> None:
    runs: list[str] = []

    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        runs.append("started")
        first = await elicit("first?", {"type": "object"})
        second = await elicit("second?", {"type": "object"})
        return _result(f"{first.content} {second.content}")

    async def test(parked: ParkedCalls) -> None:
        asked = await parked.start(call)
        assert isinstance(asked, mcp_types.InputRequiredResult)
        assert asked.input_requests is not None
        ((key, request),) = asked.input_requests.items()
        assert isinstance(request, mcp_types.ElicitRequest)
        assert request.params.message == "first?"
        assert asked.request_state is not None
        again = await parked.resume(asked.request_state, {key: _accept("once")})
        assert isinstance(again, mcp_types.InputRequiredResult)
        assert again.request_state == asked.request_state
        assert again.input_requests is not None
        ((second_key, _),) = again.input_requests.items()
        assert second_key != key
        done = await parked.resume(asked.request_state, {second_key: _accept("deny")})
        assert done == _result("{'answer': 'once'} {'answer': 'deny'}")
        assert runs == ["started"]

    anyio.run(_with_parked, test)


def test_a_retry_without_the_answer_is_asked_the_same_question_again() -> None:
    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        await elicit("allow?", {"type": "object"})
        return _result("done")

    async def test(parked: ParkedCalls) -> None:
        asked = await parked.start(call)
        assert isinstance(asked, mcp_types.InputRequiredResult)
        assert asked.request_state is not None
        again = await parked.resume(asked.request_state, None)
        assert isinstance(again, mcp_types.InputRequiredResult)
        assert again.input_requests == asked.input_requests

    anyio.run(_with_parked, test)


def test_a_reply_that_is_not_an_elicitation_result_refuses_the_form() -> None:
    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        reply = await elicit("allow?", {"type": "object"})
        return _result(reply.action)

    async def test(parked: ParkedCalls) -> None:
        asked = await parked.start(call)
        assert isinstance(asked, mcp_types.InputRequiredResult)
        assert asked.input_requests is not None
        assert asked.request_state is not None
        (key,) = asked.input_requests
        roots = mcp_types.ListRootsResult(roots=[])
        assert await parked.resume(asked.request_state, {key: roots}) == _result("cancel")

    anyio.run(_with_parked, test)


def test_a_collected_or_unknown_call_is_not_resumed() -> None:
    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        await elicit("allow?", {"type": "object"})
        return _result("done")

    async def test(parked: ParkedCalls) -> None:
        asked = await parked.start(call)
        assert isinstance(asked, mcp_types.InputRequiredResult)
        assert asked.input_requests is not None
        assert asked.request_state is not None
        (key,) = asked.input_requests
        assert await parked.resume(asked.request_state, {key: _accept("once")}) == _result("done")
        assert await parked.resume(asked.request_state, None) is None
        assert await parked.resume("made-up", None) is None

    anyio.run(_with_parked, test)


def test_a_client_that_leaves_before_it_has_the_state_ends_the_call() -> None:
    ended: list[str] = []

    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        try:
            await anyio.sleep(30)
        finally:
            ended.append("cancelled")
        return _result("done")

    async def test(parked: ParkedCalls) -> None:
        with anyio.move_on_after(0.1):
            await parked.start(call)
        await anyio.sleep(0.05)
        assert ended == ["cancelled"]

    anyio.run(_with_parked, test)


def test_a_call_is_refused_when_nothing_hosts_parked_calls() -> None:
    async def call(elicit: Elicit) -> mcp_types.CallToolResult:
        return _result("done")

    parked = ParkedCalls(keep_for=5)
    assert parked.running is False
    with pytest.raises(RuntimeError, match="not running"):
        anyio.run(parked.start, call)


async def _ask_forever(elicit: Elicit) -> mcp_types.CallToolResult:
    await elicit("allow?", {"type": "object"})
    return _result("done")


def test_a_call_that_asks_beyond_the_bound_of_its_session_is_ended_at_its_question() -> None:
    runs: list[str] = []

    async def counted(elicit: Elicit) -> mcp_types.CallToolResult:
        runs.append("asked")
        await elicit("allow?", {"type": "object"})
        runs.append("ran")
        return _result("done")

    async def ask_nothing(elicit: Elicit) -> mcp_types.CallToolResult:
        return _result("asked nothing")

    async def test() -> None:
        parked = ParkedCalls(keep_for=5, per_session=2, total=10)
        one, other = object(), object()
        async with anyio.create_task_group() as group:
            await group.start(parked.run)
            for _ in range(2):
                assert isinstance(
                    await parked.start(counted, owner=one), mcp_types.InputRequiredResult
                )
            with pytest.raises(TooManyParked, match="2 calls of this session"):
                await parked.start(counted, owner=one)
            # The bound is of calls that wait for an answer: one that asks nothing runs.
            assert await parked.start(ask_nothing, owner=one) == _result("asked nothing")
            asked = await parked.start(counted, owner=other)
            assert isinstance(asked, mcp_types.InputRequiredResult)
            assert len(parked) == 3
            assert runs == ["asked"] * 4
            group.cancel_scope.cancel()

    anyio.run(test)


def test_a_call_beyond_the_total_bound_is_refused_until_a_parked_call_is_answered() -> None:
    async def test() -> None:
        parked = ParkedCalls(keep_for=5, per_session=10, total=2)
        async with anyio.create_task_group() as group:
            await group.start(parked.run)
            first = await parked.start(_ask_forever, owner=object())
            await parked.start(_ask_forever, owner=object())
            with pytest.raises(TooManyParked, match="2 calls already wait for an approval"):
                await parked.start(_ask_forever, owner=object())
            assert isinstance(first, mcp_types.InputRequiredResult)
            assert first.input_requests is not None
            assert first.request_state is not None
            answers = {key: _accept("once") for key in first.input_requests}
            assert await parked.resume(first.request_state, answers) == _result("done")
            assert len(parked) == 1
            again = await parked.start(_ask_forever, owner=object())
            assert isinstance(again, mcp_types.InputRequiredResult)
            group.cancel_scope.cancel()

    anyio.run(test)

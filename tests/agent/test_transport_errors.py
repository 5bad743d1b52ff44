"""An HTTP library's error let out of a provider's stream: the SDKs older than the ones that
wrap it in their ``APIConnectionError`` (openai before 3.14, anthropic before 2.17, both
allowed by the extras) and a provider plugin talking httpx itself let httpx's or httpx2's
``RemoteProtocolError``, ``ReadError`` or ``ConnectError`` out. The loop took it for an answer
it could not read: never retried, even before the first event, and a connection dropped
mid-answer not said so. It is now the lost connection it is, whatever the provider: retried
before the first event, said as closed mid-answer after it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import anyio
import httpx
import httpx2
import pytest

from hermes_core import Config, Environment
from hermes_core.agent import (
    Agent,
    AgentEvent,
    Finished,
    Message,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ModelTurn,
    Retrying,
    RetryPolicy,
    TextDelta,
    TranscriptStore,
)
from hermes_core.testing import make_host

LIBRARIES = [httpx, httpx2]


class FakeDroppingProvider:
    """A provider plugin (no model runs here) whose stream lets its HTTP library's errors out:
    each request raises the next of ``failures`` after ``texts_before`` deltas; none left, it
    answers "Five."."""

    name = "dropping"

    def __init__(self, failures: list[Exception], texts_before: int = 0) -> None:
        self.failures = failures
        self.texts_before = texts_before
        self.requests = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests += 1
        if self.failures:
            for _ in range(self.texts_before):
                yield TextDelta("The first half, ")
            raise self.failures.pop(0)
        yield TextDelta("Five.")
        yield ModelTurn(Message("assistant", "Five."))

    async def aclose(self) -> None:
        """Nothing to close."""


def _send(provider: FakeDroppingProvider, env: Environment, tmp_path: Path) -> list[AgentEvent]:
    host = make_host(Config(), env)
    settings = ModelSettings("dropping", "m", base_url="http://127.0.0.1:9/v1")
    agent = Agent(
        host,
        provider,
        settings,
        retry=RetryPolicy(max_retries=2, max_wait=0),
        transcripts=TranscriptStore(tmp_path / "sessions"),
    )

    async def main() -> list[AgentEvent]:
        conversation = agent.conversation(host.new_session())
        try:
            return [event async for event in conversation.send("Add 2 and 3.")]
        finally:
            await conversation.aclose()

    try:
        return anyio.run(main)
    finally:
        host.close()


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda m: m.__name__)
def test_a_connection_dropped_mid_answer_is_said_so_not_taken_for_an_unreadable_answer(
    library: ModuleType, hermes_env: Environment, tmp_path: Path
) -> None:
    dropped = library.RemoteProtocolError(
        "peer closed connection without sending complete message body"
    )
    provider = FakeDroppingProvider([dropped], texts_before=1)
    events = _send(provider, hermes_env, tmp_path)

    end = events[-1]
    assert isinstance(end, Finished)
    assert end.stop == "error"
    assert end.detail == (
        "dropping: model 'm' at http://127.0.0.1:9/v1: the connection was closed mid-answer "
        "(peer closed connection without sending complete message body)"
    )
    assert provider.requests == 1  # what was shown is not asked again


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda m: m.__name__)
def test_a_connection_lost_before_the_answer_is_retried(
    library: ModuleType, hermes_env: Environment, tmp_path: Path
) -> None:
    failures = [library.ConnectError("[Errno 111] Connection refused"), library.ReadError("")]
    provider = FakeDroppingProvider(failures)
    events = _send(provider, hermes_env, tmp_path)

    end = events[-1]
    assert isinstance(end, Finished)
    assert (end.stop, end.text) == ("answer", "Five."), end.detail
    assert len([event for event in events if isinstance(event, Retrying)]) == 2
    assert provider.requests == 3

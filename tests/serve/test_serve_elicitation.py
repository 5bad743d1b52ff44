"""Approvals that reach the person behind an MCP client: ``hermes serve`` sends the approval
prompt as an elicitation form to a client that declared the ``elicitation`` capability, driven
here by the ``mcp`` SDK client's ``elicitation_callback`` against ``hermes serve`` run in this
process (``in_process.py``), as over stdio and over streamable HTTP, in both protocol eras.

2025-11-25 clients get an ``elicitation/create`` request on their connection (stdio);
2026-07-28 clients get an ``input_required`` result and send the call again with the answer.
A 2025-era client over stateless HTTP cannot be asked (its answer would arrive as an unrelated
request): the non-interactive answer applies."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
import pytest
from in_process import http_in_process, in_process
from mcp import Client
from mcp.client.session import ClientRequestContext
from serving import ServeHome

from hermes_core._approvals.prompt import ApprovalRequest, question_text
from hermes_core._config import load_config

ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]
WRITE_REASON = "write_file may change or delete things (destructive)"

CONFIG_WITH_COMMENTS = """\
# my hermes settings (keep this comment)
plugins:
  enabled: [approvals, bm25, files, terminal, todo]
approvals:
  policy: annotations  # the default, spelled out
  allow:
    - read_file  # reading is fine
"""


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


@dataclass
class Person:
    """The elicitation callback of the SDK client: records each form and answers it with
    ``answer`` (an ``accept`` with that choice), or with ``action`` ``decline``/``cancel``,
    after ``delay`` seconds (``None``: never)."""

    answer: str = "once"
    action: Literal["accept", "decline", "cancel"] = "accept"
    delay: float | None = 0.0
    forms: list[mcp_types.ElicitRequestFormParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        self.forms.append(params)
        if self.delay is None:
            await anyio.sleep_forever()
        else:
            await anyio.sleep(self.delay)
        if self.action != "accept":
            return mcp_types.ElicitResult(action=self.action)
        return mcp_types.ElicitResult(action="accept", content={"answer": self.answer})

    def choices(self) -> list[str]:
        """The answers the last form offered."""
        answer = self.forms[-1].requested_schema["properties"]["answer"]
        return [option["const"] for option in answer["oneOf"]]


Calls = Callable[[Client], Awaitable[list[mcp_types.CallToolResult]]]


def write(client: Client, path: Path, content: str = "hello") -> Any:
    return client.call_tool("write_file", {"path": str(path), "content": content})


def over_stdio(served: ServeHome, mode: Any, person: Person | None, calls: Calls) -> Any:
    """Run ``calls`` with an SDK client of ``hermes serve`` served as over stdio."""

    async def main() -> list[mcp_types.CallToolResult]:
        async with in_process(served, mode=mode, elicitation_callback=person) as client:
            return await calls(client)

    return anyio.run(main)


def over_http(served: ServeHome, mode: Any, person: Person | None, calls: Calls) -> Any:
    """Run ``calls`` with an SDK client of ``hermes serve --transport http``."""

    async def main() -> list[mcp_types.CallToolResult]:
        async with (
            http_in_process(served) as server,
            server.client(mode=mode, elicitation_callback=person) as client,
        ):
            return await calls(client)

    return anyio.run(main)


TRANSPORTS = [
    pytest.param(over_stdio, "legacy", id="stdio-2025-11-25"),
    pytest.param(over_stdio, "auto", id="stdio-2026-07-28"),
    pytest.param(over_http, "auto", id="http-2026-07-28"),
]


# Answers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_allow_once_runs_the_write_after_the_client_shows_the_terminal_prompt_text(
    served: ServeHome, transport: Any, mode: Any
) -> None:
    served.write_config()
    target = served.work / "note.txt"
    person = Person("once")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = transport(served, mode, person, calls)
    assert result.is_error is False, text_of(result)
    assert target.read_text(encoding="utf-8") == "hello"
    (form,) = person.forms
    shown = ApprovalRequest(
        "write_file", {"path": str(target), "content": "hello"}, reason=WRITE_REASON
    )
    assert form.message == question_text(shown)
    assert form.requested_schema["required"] == ["answer"]


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_a_declined_form_denies_the_write(served: ServeHome, transport: Any, mode: Any) -> None:
    served.write_config()
    target = served.work / "note.txt"
    person = Person(action="decline")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = transport(served, mode, person, calls)
    assert len(person.forms) == 1
    assert result.is_error is True
    assert "write_file was refused by the user" in text_of(result)
    assert not target.exists()


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        pytest.param("once", "cancel", id="dismissed"),
        pytest.param("deny", "accept", id="deny-chosen"),
        pytest.param("yes please", "accept", id="not-a-choice"),
    ],
)
def test_a_dismissed_form_a_deny_choice_or_an_unknown_answer_denies_the_write(
    served: ServeHome, answer: str, action: Any
) -> None:
    # non_interactive: allow is the answer when nobody can be asked; a person's refusal stays one.
    served.write_config(approvals={"non_interactive": "allow"})
    target = served.work / "note.txt"
    person = Person(answer, action=action)

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = over_stdio(served, "legacy", person, calls)
    assert len(person.forms) == 1
    assert "write_file was refused by the user" in text_of(result)
    assert not target.exists()


@pytest.mark.parametrize("mode", ERAS)
def test_a_session_answer_over_stdio_allows_the_next_call_of_the_connection_without_asking(
    served: ServeHome, mode: Any
) -> None:
    served.write_config()
    first, second = served.work / "one.txt", served.work / "two.txt"
    person = Person("session")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, first), await write(client, second)]

    results = over_stdio(served, mode, person, calls)
    assert [result.is_error for result in results] == [False, False]
    assert first.exists()
    assert second.exists()
    assert len(person.forms) == 1
    assert person.choices() == ["once", "session", "always", "deny"]


def test_a_session_answer_is_forgotten_by_the_next_connection(served: ServeHome) -> None:
    served.write_config()
    person = Person("session")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, served.work / f"{len(person.forms)}.txt")]

    over_stdio(served, "legacy", person, calls)
    over_stdio(served, "legacy", person, calls)
    assert len(person.forms) == 2


def test_over_stateless_http_the_form_offers_no_session_answer_and_each_request_is_asked(
    served: ServeHome,
) -> None:
    served.write_config()
    first, second = served.work / "one.txt", served.work / "two.txt"
    person = Person("once")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, first), await write(client, second)]

    results = over_http(served, "auto", person, calls)
    assert [result.is_error for result in results] == [False, False]
    assert len(person.forms) == 2
    assert person.choices() == ["once", "always", "deny"]


def test_a_session_answer_sent_where_it_was_not_offered_denies(served: ServeHome) -> None:
    served.write_config()
    target = served.work / "note.txt"
    person = Person("session")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = over_http(served, "auto", person, calls)
    assert "write_file was refused by the user" in text_of(result)
    assert not target.exists()


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_always_writes_approvals_allow_keeping_comments_and_the_next_connection_is_not_asked(
    served: ServeHome, transport: Any, mode: Any
) -> None:
    served.config_path.write_text(CONFIG_WITH_COMMENTS, encoding="utf-8")
    person = Person("always")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, served.work / f"{len(person.forms)}.txt")]

    (first,) = transport(served, mode, person, calls)
    assert first.is_error is False, text_of(first)
    saved = served.config_path.read_text(encoding="utf-8")
    assert "# my hermes settings (keep this comment)" in saved
    assert "# reading is fine" in saved
    assert "# the default, spelled out" in saved
    assert load_config(served.config_path).approvals.allow == ["read_file", "write_file"]

    (second,) = transport(served, mode, person, calls)
    assert second.is_error is False, text_of(second)
    assert len(person.forms) == 1


def test_an_answer_sent_again_after_the_result_came_back_does_not_run_the_call_twice(
    served: ServeHome,
) -> None:
    served.write_config()
    target = served.work / "note.txt"
    arguments = {"path": str(target), "content": "hello"}

    async def main() -> tuple[mcp_types.CallToolResult, mcp_types.CallToolResult]:
        async with in_process(served, elicitation_callback=Person()) as client:
            session = client.session
            asked = await session.call_tool("write_file", arguments, allow_input_required=True)
            assert isinstance(asked, mcp_types.InputRequiredResult)
            assert asked.input_requests is not None
            answers: mcp_types.InputResponses = {
                key: mcp_types.ElicitResult(action="accept", content={"answer": "once"})
                for key in asked.input_requests
            }
            retry = {"input_responses": answers, "request_state": asked.request_state}
            done = await session.call_tool("write_file", arguments, **retry)
            target.unlink()
            replayed = await session.call_tool("write_file", arguments, **retry)
            return done, replayed

    done, replayed = anyio.run(main)
    assert done.is_error is False, text_of(done)
    assert replayed.is_error is True
    assert "the approval this answers is no longer pending" in text_of(replayed)
    assert not target.exists()


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_twenty_calls_at_once_that_ask_nothing_all_run(
    served: ServeHome, transport: Any, mode: Any
) -> None:
    # The bounds of parked calls are for calls that wait for an answer: a 2026-era client
    # running 20 allowed calls at once over stdio had 4 refused with "16 calls of this session
    # already wait for an approval" while none was asked anything.
    served.write_config(approvals={"allow": ["terminal"]})
    person = Person()

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        results: list[mcp_types.CallToolResult] = []

        async def one() -> None:
            results.append(await client.call_tool("terminal", {"command": "sleep 1; echo ran"}))

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(one)
        return results

    results = transport(served, mode, person, calls)
    assert person.forms == []
    assert [result.is_error for result in results] == [False] * 20
    assert all("ran" in text_of(result) for result in results)


# Nobody to ask ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("transport", "mode"),
    [*TRANSPORTS, pytest.param(over_http, "legacy", id="http-2025-11-25")],
)
def test_a_client_without_the_elicitation_capability_gets_the_non_interactive_denial(
    served: ServeHome, transport: Any, mode: Any
) -> None:
    served.write_config()
    target = served.work / "note.txt"

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = transport(served, mode, None, calls)
    assert result.is_error is True
    assert "nobody can answer in this session (approvals.non_interactive: deny)" in text_of(result)
    assert not target.exists()


def test_a_2025_client_over_stateless_http_is_not_asked_and_gets_the_non_interactive_answer(
    served: ServeHome,
) -> None:
    served.write_config()
    target = served.work / "note.txt"
    person = Person("once")

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = over_http(served, "legacy", person, calls)
    assert person.forms == []
    assert "approvals.non_interactive: deny" in text_of(result)
    assert not target.exists()


def test_a_client_that_never_answers_is_denied_after_approvals_timeout(served: ServeHome) -> None:
    served.write_config(approvals={"timeout": 1})
    target = served.work / "note.txt"
    person = Person(delay=None)

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    started = time.monotonic()
    (result,) = over_stdio(served, "legacy", person, calls)
    assert time.monotonic() - started >= 1
    assert len(person.forms) == 1
    assert "nobody answered the approval prompt within 1 s" in text_of(result)
    assert not target.exists()


@pytest.mark.parametrize(
    "transport", [pytest.param(over_stdio, id="stdio"), pytest.param(over_http, id="http")]
)
def test_a_2026_answer_sent_after_approvals_timeout_does_not_run_the_call(
    served: ServeHome, transport: Any
) -> None:
    # A 2026-07-28 client answers by sending the call again; one that answers after the
    # timeout finds the call already denied.
    served.write_config(approvals={"timeout": 1})
    target = served.work / "note.txt"
    person = Person("once", delay=2.5)

    async def calls(client: Client) -> list[mcp_types.CallToolResult]:
        return [await write(client, target)]

    (result,) = transport(served, "auto", person, calls)
    assert len(person.forms) == 1
    assert "nobody answered the approval prompt within 1 s" in text_of(result)
    assert not target.exists()

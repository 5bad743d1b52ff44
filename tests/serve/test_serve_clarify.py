"""``clarify`` under ``hermes serve``: the question reaches the person behind the MCP client as
an elicitation form (a text field, or the choices), in both protocol eras, over stdio and
streamable HTTP; a client that takes no form gets "nobody can answer" at once, never a hang.
Driven by the ``mcp`` SDK client's ``elicitation_callback`` against hermes served in this
process (``in_process.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types
import pytest
from in_process import http_in_process, in_process
from mcp.client.session import ClientRequestContext
from serving import ServeHome


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


@dataclass
class Person:
    """Answers each form with ``answer`` (or ``action`` decline / cancel), recording it."""

    answer: str = "Lyon"
    action: Literal["accept", "decline", "cancel"] = "accept"
    forms: list[mcp_types.ElicitRequestFormParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        self.forms.append(params)
        if self.action != "accept":
            return mcp_types.ElicitResult(action=self.action)
        return mcp_types.ElicitResult(action="accept", content={"answer": self.answer})


def ask(served: ServeHome, mode: Any, person: Any, arguments: dict[str, Any]) -> Any:
    async def main() -> mcp_types.CallToolResult:
        async with in_process(served, mode=mode, elicitation_callback=person) as client:
            with anyio.fail_after(60):  # a guard against a hang, not a performance check
                return await client.call_tool("clarify", arguments)

    return anyio.run(main)


def ask_over_http(served: ServeHome, person: Person, arguments: dict[str, Any]) -> Any:
    async def main() -> mcp_types.CallToolResult:
        async with (
            http_in_process(served) as server,
            server.client(mode="auto", elicitation_callback=person) as client,
        ):
            return await client.call_tool("clarify", arguments)

    return anyio.run(main)


@pytest.mark.parametrize("mode", [pytest.param("legacy", id="2025-11-25"), "auto"])
def test_the_question_is_a_form_with_a_text_field_and_the_answer_is_the_result(
    served: ServeHome, mode: Any
) -> None:
    served.write_config()
    person = Person("somewhere near Lyon")
    result = ask(served, mode, person, {"question": "Where are you?"})
    assert result.is_error is False, text_of(result)
    assert text_of(result) == "somewhere near Lyon"
    (form,) = person.forms
    assert form.message == "The agent asks (hermes clarify):\nWhere are you?"
    answer = form.requested_schema["properties"]["answer"]
    assert answer["type"] == "string"
    assert "oneOf" not in answer
    assert form.requested_schema["required"] == ["answer"]


def test_choices_are_offered_as_one_choice_over_http(served: ServeHome) -> None:
    served.write_config()
    person = Person("Paris")
    result = ask_over_http(
        served, person, {"question": "Which city?", "choices": ["Lyon", "Paris"]}
    )
    assert text_of(result) == "Paris"
    (form,) = person.forms
    options = form.requested_schema["properties"]["answer"]["oneOf"]
    assert [option["const"] for option in options] == ["Lyon", "Paris"]


def test_a_declined_form_tells_the_model_to_decide(served: ServeHome) -> None:
    served.write_config()
    result = ask(served, "legacy", Person(action="decline"), {"question": "Which city?"})
    assert text_of(result) == (
        "No answer: the person declined to answer. Decide yourself and say what you assumed."
    )


def test_a_client_without_elicitation_gets_nobody_can_answer_at_once(served: ServeHome) -> None:
    served.write_config()
    result = ask(served, "legacy", None, {"question": "Which city?"})
    assert result.is_error is False
    assert text_of(result).startswith(
        "No answer: nobody can answer questions here (the MCP client takes no elicitation form)"
    )


@dataclass
class Silent:
    """A person who never answers the form."""

    forms: int = 0

    async def __call__(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.forms += 1
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def test_an_unanswered_form_ends_at_approvals_timeout_with_a_result(served: ServeHome) -> None:
    served.write_config(approvals={"timeout": 1})
    person = Silent()
    result = ask(served, "legacy", person, {"question": "Which city?"})
    assert person.forms == 1
    assert text_of(result).startswith("No answer: nobody answered within 1 s.")

"""``clarify``: a core tool of the bundled ``clarify`` plugin that asks the person through the
session's question transport, and says so when nobody can answer (never hangs).

A real host with the bundled plugins; the terminal is a pipe the test writes the person's
line into (the terminal tests of ``hermes run`` use a real pseudo-terminal); the MCP client
side is in ``tests/serve/test_serve_clarify.py``."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from hermes_core import Config, Environment, Host, Session
from hermes_core.agent import (
    Question,
    QuestionTransport,
    Reply,
    TerminalQuestions,
    attach_questions,
)
from hermes_core.testing import make_host

pytestmark = pytest.mark.anyio


def host_with(env: Environment, **sections: Any) -> Host:
    """A host with the bundled plugins (clarify among them) and a temporary home."""
    variables = {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    return make_host(Config.model_validate(sections), replace(env, variables=variables))


@pytest.fixture
def host(hermes_env: Environment) -> Iterator[Host]:
    made = host_with(hermes_env)
    yield made
    made.close()


class Pipe:
    """A terminal stand-in: the person's lines go into a pipe the question reads."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self.shown = io.StringIO()

    def type(self, text: str) -> None:
        os.write(self.write_end, text.encode())

    def close(self) -> None:
        for fd in (self.read_end, self.write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    made = Pipe()
    yield made
    made.close()


def test_clarify_is_a_core_tool_of_every_request_even_when_tools_are_deferred(
    hermes_env: Environment,
) -> None:
    host = host_with(hermes_env, tools={"tool_search": {"enabled": "on", "threshold_pct": 0}})
    try:
        assembly = host.assemble(8_000, host.new_session())
        names = [tool.name for tool in assembly.tools]
        assert "clarify" in names
        assert "tool_search" in names  # tools are deferred, clarify is not
        (tool,) = [tool for tool in assembly.tools if tool.name == "clarify"]
        assert (tool.core, tool.toolset) == (True, "clarify")
    finally:
        host.close()


async def test_a_session_whose_grant_leaves_out_clarify_has_no_clarify(host: Host) -> None:
    child = host.new_session(granted_toolsets=frozenset({"files"}))
    assert "clarify" not in [tool.name for tool in host.assemble(None, child).tools]
    result = await host.dispatch("clarify", {"question": "Which city?"}, child)
    assert result.is_error
    assert "clarify" in result.text_content


async def test_the_terminal_answer_is_the_result_and_a_number_picks_a_choice(
    host: Host, pipe: Pipe
) -> None:
    session = host.new_session()
    attach_questions(session, TerminalQuestions(pipe.read_end, pipe.shown))
    pipe.type("2\n")
    arguments = {"question": "Which city?", "choices": ["Lyon", "Paris"]}
    result = await host.dispatch("clarify", arguments, session)
    assert not result.is_error
    assert result.text_content == "Paris"
    assert result.structured == {"answered": True, "answer": "Paris"}
    shown = pipe.shown.getvalue()
    assert "hermes: the agent asks: Which city?\n  1. Lyon\n  2. Paris\n" in shown


async def test_a_free_answer_is_taken_as_typed_and_escape_codes_are_not_shown(
    host: Host, pipe: Pipe
) -> None:
    session = host.new_session()
    attach_questions(session, TerminalQuestions(pipe.read_end, pipe.shown))
    pipe.type("\n  somewhere near Lyon \n")  # an empty line asks again
    result = await host.dispatch("clarify", {"question": "Where?\x1b[2J"}, session)
    assert result.text_content == "somewhere near Lyon"
    assert "\x1b" not in pipe.shown.getvalue()


async def test_a_question_of_several_lines_is_shown_on_its_lines_still_escaped(
    host: Host, pipe: Pipe
) -> None:
    # It showed "hermes: the agent asks: I found two configs:\n- a.toml\n- b.toml\nWhich?"
    # on one line, the model's line breaks as backslash-n.
    session = host.new_session()
    attach_questions(session, TerminalQuestions(pipe.read_end, pipe.shown))
    pipe.type("a\n")
    question = "I found two configs:\n- a.toml\r\n- b.toml\x1b[2J\nWhich one?"
    result = await host.dispatch("clarify", {"question": question}, session)
    assert result.text_content == "a"
    shown = pipe.shown.getvalue()
    assert (
        "hermes: the agent asks: I found two configs:\n"
        "  - a.toml\\r\n"
        "  - b.toml\\x1b[2J\n"
        "  Which one?\n"
        "your answer: "
    ) in shown


async def test_with_nobody_attached_the_model_is_told_to_decide_itself(host: Host) -> None:
    result = await host.dispatch("clarify", {"question": "Which city?"}, host.new_session())
    assert not result.is_error  # the model goes on, deciding for itself
    assert result.text_content == (
        "No answer: nobody can answer questions here (no terminal or client is attached). "
        "Decide yourself and say what you assumed."
    )
    assert result.structured["answered"] is False


class StoppingPerson:
    """A transport whose person stops the turn at every question (Ctrl-C, /stop)."""

    async def ask(self, question: Question, timeout: float) -> Reply:
        return Reply(None, "the person stopped the turn at this question", stopped=True)


async def test_a_stopped_turn_does_not_tell_the_model_to_decide_itself(host: Host) -> None:
    session = host.new_session()
    attach_questions(session, StoppingPerson())
    result = await host.dispatch("clarify", {"question": "Which city?"}, session)
    assert not result.is_error
    assert "Decide yourself" not in result.text_content
    assert result.text_content == (
        "No answer: the person stopped the turn at this question. Do not decide it yourself "
        "or go on with the task: follow the person's next message."
    )
    assert result.structured == {
        "answered": False,
        "why": "the person stopped the turn at this question",
        "stopped": True,
    }


async def test_end_of_input_is_no_answer(host: Host, pipe: Pipe) -> None:
    session = host.new_session()
    attach_questions(session, TerminalQuestions(pipe.read_end, pipe.shown))
    os.close(pipe.write_end)
    result = await host.dispatch("clarify", {"question": "Which city?"}, session)
    assert result.text_content.startswith("No answer: the person closed the question")
    # Ctrl-D echoes no line end: the next line was printed on the question's (execwalk's walk).
    assert pipe.shown.getvalue().endswith("your answer: \nend of input: no answer\n")


async def test_an_unanswered_question_ends_at_its_timeout_with_a_result(
    hermes_env: Environment, pipe: Pipe
) -> None:
    host = host_with(hermes_env, plugins={"entries": {"clarify": {"timeout": 1}}})
    try:
        session = host.new_session()
        attach_questions(session, TerminalQuestions(pipe.read_end, pipe.shown))
        result = await host.dispatch("clarify", {"question": "Which city?"}, session)
        assert not result.is_error
        assert result.text_content.startswith("No answer: nobody answered within 1 s.")
    finally:
        host.close()


class Recorder:
    """A question transport of an embedder's own (an ACP client, say)."""

    def __init__(self) -> None:
        self.asked: list[tuple[Question, float]] = []

    async def ask(self, question: Question, timeout: float) -> Reply:
        self.asked.append((question, timeout))
        return Reply("blue")


async def test_any_question_transport_can_answer(host: Host) -> None:
    recorder = Recorder()
    assert isinstance(recorder, QuestionTransport)
    session: Session = host.new_session()
    attach_questions(session, recorder)
    arguments = {"question": " Which colour? ", "choices": ["blue", "red"]}
    result = await host.dispatch("clarify", arguments, session)
    assert result.text_content == "blue"
    assert recorder.asked == [(Question("Which colour?", ("blue", "red")), 600.0)]

"""``hermes chat``'s everyday commands, ``/usage``, ``/model``, ``/retry`` and ``/undo``: the
real command, piped and on a real pseudo-terminal, the fake model of ``agent_home.py``
recording each request (its model and messages), and the transcript read back by a second
process (``--continue``)."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from agent.agent_home import AgentHome, turn
from agent.test_cli_run import spawn
from hermes_core.agent._compaction import SUMMARY_HEADER
from hermes_core.agent._transcripts import Transcript, TranscriptError
from hermes_core.agent._undo import last_said
from hermes_core.agent._wire import Message
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

PROMPT = "you> "
LONG = "word " * 400


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def said(request: dict[str, object]) -> list[str]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [message["content"] for message in messages]


def headers(home: AgentHome) -> list[dict[str, object]]:
    [path] = (home.cli.home / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [record for record in records if record["type"] == "session"]


def ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1)


def test_usage_counts_the_requests_and_tokens_and_shows_how_full_the_context_is(
    home: AgentHome,
) -> None:
    home.setup({"text": "One."}, {"text": "Two."})
    done = home.cli.run("chat", input="first\nsecond\n/usage\n")
    assert len(home.requests()) == 2  # /usage is no request
    lines = [line for line in done.stderr.splitlines() if line.startswith("hermes: ")]
    assert (
        "hermes: this conversation: 2 model requests, 20 input tokens, 10 output tokens "
        "(subagents' included)"
    ) in lines, done.stderr
    [context] = [line for line in lines if line.startswith("hermes: context: ")]
    assert "of the model's 128,000 (model.context_length)" in context
    assert context.endswith("; compacted past 102,400 (80%, agent.compact_at)")


def test_usage_says_when_compaction_waits_for_the_server(home: AgentHome) -> None:
    home.setup({"text": "One."}, agent={"compact_at": 0})
    done = home.cli.run("chat", input="first\n/usage\n")
    assert "compacted only when the server refuses a request (agent.compact_at)" in done.stderr


COUNTING = {
    "goal": "Count the words in notes.txt and report the count",
    "context": "The file notes.txt sits in the working directory and holds three words",
}


def test_usage_counts_a_subagents_requests(home: AgentHome) -> None:
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "echo": True},  # the fake reports no tokens for an echo
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/usage")
    child.expect_exact(
        "4 model requests, at least 30 input tokens, 15 output tokens: 1 request reported none"
    )
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_model_shows_the_model_and_switches_it_for_the_next_requests(home: AgentHome) -> None:
    home.setup({"text": "One."}, {"text": "Two."})
    done = home.cli.run("chat", input="first\n/model\n/model fake-2\nsecond\n")
    assert "hermes: model fake-1 of the provider fake (/model NAME switches to NAME)" in (
        done.stderr
    )
    assert "hermes: the model is now fake-2 (provider fake) for the rest of this chat" in (
        done.stderr
    )
    assert [request["model"] for request in home.requests()] == ["fake-1", "fake-2"]
    # the transcript says which model answered from where on
    assert [header["model"] for header in headers(home)] == ["fake-1", "fake-2"]


def test_a_conversation_switched_to_another_model_goes_on_with_the_configured_one(
    home: AgentHome,
) -> None:
    home.setup({"text": "One."})
    home.cli.run("chat", input="/model fake-2\nfirst\n")
    home.setup({"echo": True})
    done = home.cli.run("chat", "--continue", input="again\n")
    assert "hermes: it was with fake-2; it goes on with fake-1" in done.stderr
    assert home.requests()[-1]["model"] == "fake-1"


def test_a_model_name_the_provider_refuses_is_its_error_at_the_next_request(
    home: AgentHome,
) -> None:
    home.setup(
        {"error": "fake model: 404 the model 'nope' does not exist", "status": 404},
        {"text": "Fine."},
    )
    done = home.cli.run("chat", input="/model nope\nhi\n/model fake-1\nagain\n")
    assert "a name fake does not know is its error at the next request" in done.stderr
    assert "hermes: error: fake model: 404 the model 'nope' does not exist" in done.stderr
    assert "Fine." in done.stdout
    assert [request["model"] for request in home.requests()] == ["nope", "fake-1"]


def test_model_takes_one_name(home: AgentHome) -> None:
    home.setup({"text": "One."})
    done = home.cli.run("chat", input="/model fake 2\n/usage now\n")
    assert "hermes: /model takes one name: /model NAME (/model shows it)" in done.stderr
    assert "hermes: /usage takes no argument" in done.stderr
    assert home.requests() == []


def test_retry_sends_the_last_message_again_without_the_answer_and_its_calls(
    home: AgentHome,
) -> None:
    home.setup(
        turn("Let me look.", ("no_such_tool", {})),
        {"text": "Done."},
        {"text": "Again."},
        {"echo": True},
    )
    done = home.cli.run("chat", input="first\n/retry\nsecond\n")
    assert "hermes: sending your last message again: first" in done.stderr
    requests = home.requests()
    assert said(requests[2]) == ["first"]
    assert said(requests[3]) == ["first", "Again.", "second"]
    # A second process takes it up as the chat left it.
    home.setup({"echo": True})
    home.cli.run("chat", "--continue", input="third\n")
    assert said(home.requests()[-1]) == ["first", "Again.", "second", "heard: second", "third"]


def test_undo_drops_the_last_message_and_what_followed_also_when_taken_up_again(
    home: AgentHome,
) -> None:
    home.setup({"text": "One."}, {"text": "Two."}, {"echo": True})
    done = home.cli.run("chat", input="first\nsecond\n/undo\nthird\n")
    assert "hermes: undone: your last message and the one after it; it was:\n  second\n" in (
        done.stderr
    )
    assert said(home.requests()[2]) == ["first", "One.", "third"]
    home.setup({"echo": True})
    again = home.cli.run("chat", "--continue", input="fourth\n")
    assert "you> third" in again.stderr  # where it left off: not the message taken back
    assert "second" not in again.stderr
    assert said(home.requests()[-1]) == ["first", "One.", "third", "heard: third", "fourth"]


def test_undo_takes_a_delegations_results_back_with_the_message_before_them(
    home: AgentHome,
) -> None:
    """The results a background delegation sent for the person are not their message: /undo
    takes back the one they typed, and everything after it."""
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "echo": True},
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/undo")
    child.expect_exact("hermes: undone: your last message and the 5 after it;")
    child.expect_exact(PROMPT)
    child.sendcontrol("u")  # the message put back, cleared
    child.sendline("/exit")
    assert ended(child) == 0
    home.setup({"echo": True})
    home.cli.run("chat", "--continue", input="again\n")
    assert said(home.requests()[-1]) == ["again"]


def test_undo_stops_a_delegation_still_running_that_it_takes_back(home: AgentHome) -> None:
    """The message that started a background delegation taken back while its subagent runs:
    the subagent is stopped and its results are not sent (they were, later, as a message for
    a conversation that no longer asked for them: a turn the person had not asked for)."""
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", **turn("", ("terminal", {"command": "sleep 2"}))},
        {"for": "Count the words", "text": "There are 3 words."},
        {"echo": True},
        approvals={"policy": "off"},
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it.")
    child.expect_exact(PROMPT)
    child.sendline("/undo")
    child.expect_exact("hermes: undone: your last message and the 3 after it;")
    child.expect_exact(
        "hermes: stopped the delegation d1 it had started (its results are not sent)"
    )
    child.expect_exact("d1.1")
    child.expect_exact("interrupted")
    child.sendcontrol("u")
    child.sendline("/exit")
    assert ended(child) == 0
    assert not [r for r in home.requests() if "[delegation d1 finished]" in json.dumps(r)]


def test_a_message_a_compaction_replaced_is_not_taken_back() -> None:
    summary = Message("user", f"{SUMMARY_HEADER}\n\nThe person asked for a poem.")
    assert last_said([summary, Message("assistant", "Here it is.")]) is None
    assert last_said([summary, Message("user", "shorter"), Message("assistant", "Ok.")]) == 1


def test_undo_puts_the_message_back_in_the_line_being_typed(home: AgentHome) -> None:
    home.setup({"text": "One."}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("what is 6 x 7")
    child.expect_exact("One.")
    child.expect_exact(PROMPT)
    child.sendline("/undo")
    child.expect_exact("hermes: undone: your last message and the one after it;")
    child.expect_exact("the message is back in the line")
    child.expect_exact(PROMPT)
    child.send("?\r")  # the line edited: the message with a question mark added
    child.expect_exact("heard: what is 6 x 7?")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert said(home.requests()[1]) == ["what is 6 x 7?"]


def test_nothing_to_retry_or_undo_is_one_line_each(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="/undo\n/retry\n")
    assert done.stderr.splitlines() == [
        "hermes: nothing to undo: you have sent no message in this conversation yet",
        "hermes: nothing to retry: you have sent no message in this conversation yet",
    ]
    assert home.requests() == []


def test_the_commands_are_refused_while_a_turn_runs(home: AgentHome) -> None:
    home.setup({"text": LONG}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("talk")
    child.expect_exact("word word ")
    for command in ("/usage", "/model fake-2", "/retry", "/undo"):
        child.sendline(command)
        word = command.split()[0]
        child.expect_exact(f"hermes: {word} is not run while a turn runs (")
        child.expect_exact("type it again at the prompt (/stop stops the turn)")
    child.sendline("/stop")
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert [request["model"] for request in home.requests()] == ["fake-1"]


def test_help_lists_the_everyday_commands(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="/help\n")
    for command in ("/usage", "/model", "/retry", "/undo"):
        assert any(line.startswith(f"  {command} ") for line in done.stderr.splitlines())


def test_an_undo_record_takes_messages_back_from_what_the_transcript_reads(
    tmp_path: Path,
) -> None:
    transcript = Transcript(tmp_path / "s.jsonl")
    transcript.start("s", model="m")
    for role, text in [("user", "a"), ("assistant", "A"), ("user", "b"), ("assistant", "B")]:
        transcript.add(Message(role, text))
    transcript.compacted(2, Message("user", "summary"), [Message("user", "b")])
    transcript.add(Message("assistant", "B"))
    transcript.undone(1)
    stored, history = transcript.contents()
    assert [m.content for m in stored] == ["a", "A"]
    assert [m.content for m in history] == ["summary"]


def test_a_damaged_undo_record_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.touch()  # a Transcript that wrote no header appends only to a file that is there
    transcript = Transcript(path)
    transcript.add(Message("user", "a"))
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "undo", "user_messages": "all"}) + "\n")
    with pytest.raises(TranscriptError, match=r"s\.jsonl, line 2, is no message"):
        transcript.contents()


def test_undo_after_the_conversation_was_deleted_starts_its_transcript_with_its_header(
    home: AgentHome,
) -> None:
    """hermes sessions delete while the chat goes on, then /undo: the undo's record starts a
    whole transcript (its header first), as a message would, never a file without a header
    that the next messages are appended to."""
    home.setup({"text": "One."}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("first")
    child.expect_exact("One.")
    child.expect_exact(PROMPT)
    [path] = (home.cli.home / "sessions").glob("*.jsonl")
    path.unlink()
    child.sendline("/undo")
    child.expect_exact("hermes: undone: your last message and the one after it;")
    child.sendcontrol("u")
    child.sendline("second")
    child.expect_exact("heard: second")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [record["type"] for record in records] == ["session", "undo", "message", "message"]
    assert records[0]["id"] == path.stem

"""``hermes chat`` on a real pseudo-terminal (pexpect): the real command, a real host, a fake
model answering from a script (``agent_home.py``: no model can run here).

Checked: two messages in one conversation (the second request holds the first exchange),
``/new`` starting afresh, ``/stop`` typed while the answer streams and Ctrl-C both stopping
the turn and leaving the chat usable, an approval asked on the terminal, end of input."""

from __future__ import annotations

import io
import signal
import subprocess
from pathlib import Path

import pexpect
import pytest

from agent.agent_home import AgentHome, turn
from agent.test_cli_run import spawn
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

PROMPT = "you> "
LONG = "word " * 400


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1)


def test_two_messages_are_answered_in_one_conversation(home: AgentHome) -> None:
    home.setup({"text": "Hello, Ada."}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("I am Ada")
    child.expect_exact("Hello, Ada.")
    child.expect_exact(PROMPT)
    child.sendline("what did I say?")
    child.expect_exact("heard: what did I say?")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    first, second = home.requests()
    assert [m["content"] for m in first["messages"]] == ["I am Ada"]
    assert [(m["role"], m["content"]) for m in second["messages"]] == [
        ("user", "I am Ada"),
        ("assistant", "Hello, Ada."),
        ("user", "what did I say?"),
    ]


def test_new_starts_a_conversation_without_the_old_messages(home: AgentHome) -> None:
    home.setup({"text": "One."}, {"text": "Two."})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("first")
    child.expect_exact("One.")
    child.expect_exact(PROMPT)
    child.sendline("/new")
    child.expect_exact("a new conversation")
    child.expect_exact(PROMPT)
    child.sendline("second")
    child.expect_exact("Two.")
    child.expect_exact(PROMPT)
    child.sendeof()
    assert ended(child) == 0
    assert [m["content"] for m in home.requests()[1]["messages"]] == ["second"]


def test_stop_typed_while_the_answer_streams_stops_the_turn(home: AgentHome) -> None:
    home.setup({"text": LONG}, {"echo": True}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("talk")
    child.expect_exact("word word ")
    child.sendline("/stop")
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("still there?")
    child.expect_exact("heard: still there?")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    # The cut answer is in the conversation, as far as it had streamed, and says it was cut:
    # the model must not read it later as an answer it finished.
    cut = home.requests()[1]["messages"][1]
    assert cut["role"] == "assistant"
    said, marker = cut["content"].rsplit("\n\n", 1)
    assert 0 < len(said) < len(LONG)
    assert LONG.startswith(said)
    assert marker == "[cut off here: stopped by the user]"


def test_ctrl_c_stops_the_turn_and_the_chat_goes_on(home: AgentHome) -> None:
    home.setup({"text": LONG}, {"text": "Back."}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("talk")
    child.expect_exact("word word ")
    child.kill(signal.SIGINT)
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("again")
    child.expect_exact("Back.")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_an_approval_is_asked_on_the_terminal_and_a_denial_reaches_the_model(
    home: AgentHome,
) -> None:
    target = home.cli.work / "out.txt"
    home.setup(turn("", ("write_file", {"path": str(target), "content": "x"})), {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("write it")
    child.expect_exact("needs approval")
    child.expect(r"\[d\]eny")
    child.sendline("d")
    child.expect_exact("<- DENIED")
    child.expect_exact("heard: ")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert not target.exists()


def test_clarify_is_answered_on_the_chat_terminal(home: AgentHome) -> None:
    home.setup(
        turn("", ("clarify", {"question": "Which city?", "choices": ["Lyon", "Paris"]})),
        {"echo": True},
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("weather")
    child.expect_exact("the agent asks: Which city?")
    child.expect_exact("a number or your own words: ")
    child.sendline("Lyon, the old town")
    child.expect_exact("heard: Lyon, the old town")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_piped_messages_are_answered_one_after_the_other(home: AgentHome) -> None:
    home.setup({"text": "One."}, {"echo": True})
    done = home.cli.run("chat", input="first\nsecond\n")
    assert "One." in done.stdout
    assert "heard: second" in done.stdout
    assert [m["content"] for m in home.requests()[1]["messages"]] == ["first", "One.", "second"]


def test_messages_from_a_file_are_answered_and_the_end_of_the_file_quits(
    home: AgentHome, tmp_path: Path
) -> None:
    home.setup({"text": "One."}, {"echo": True})
    messages = tmp_path / "messages.txt"
    messages.write_text("first\nsecond", encoding="utf-8")  # no newline at the end
    with messages.open("rb") as stdin:
        done = subprocess.run(
            home.cli.command("chat"),
            cwd=home.cli.work,
            env=home.cli.variables(),
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "heard: second" in done.stdout


def test_stop_typed_at_an_approval_prompt_denies_and_stops_the_turn(home: AgentHome) -> None:
    target = home.cli.work / "out.txt"
    home.setup(
        turn("", ("write_file", {"path": str(target), "content": "x"})),
        {"text": "Next."},
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("write it")
    child.expect(r"\[d\]eny: ")
    child.sendline("/stop")
    child.expect_exact("<- DENIED")
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("next")
    child.expect_exact("Next.")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert not target.exists()


def test_chat_without_a_model_is_a_configuration_error(home: AgentHome) -> None:
    home.cli.config.write_text("{}", encoding="utf-8")
    done = home.cli.run("chat", input="hi\n", ok=False)
    assert done.returncode == 2
    assert "model.model: no model is set" in done.stderr


def test_a_delegations_results_arriving_while_idle_are_sent_to_the_model(
    home: AgentHome,
) -> None:
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "echo": True},
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it.")
    child.expect_exact("a delegation's results arrived")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_ctrl_c_stops_the_subagents_and_their_results_wait_for_the_next_message(
    home: AgentHome,
) -> None:
    # The stopped subagent's results were sent to the model as soon as they arrived: a model
    # request the person had just stopped, asking it to go on with what they stopped.
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it. " + LONG},
        {"for": "Count the words", "text": "There are 3 words. " + LONG},
        {"for": "please delegate", "echo": True},
        {"for": "please delegate", "echo": True},
        chunk=5,
        delay=0.05,
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it. word")
    child.kill(signal.SIGINT)
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact("<= d1.1 interrupted")
    child.sendline("what now?")
    child.expect_exact("heard: what now?")
    child.expect_exact("a delegation's results arrived")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    roots = [r for r in home.requests() if r["messages"][0]["content"].startswith("please")]
    lasts = [r["messages"][-1]["content"] for r in roots]
    assert lasts[2] == "what now?"  # the first request after Ctrl-C: the person's
    assert lasts[3].startswith("[delegation d1 finished]")
    assert "status: interrupted" in lasts[3]
    assert len(roots) == 4


def test_stop_at_the_prompt_stops_the_background_subagents(home: AgentHome) -> None:
    # It said "hermes: nothing is running" while the subagent went on working (and spending).
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words. " + LONG},
        {"for": "please delegate", "echo": True},
        {"for": "please delegate", "echo": True},
        chunk=5,
        delay=0.05,
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it.")
    child.expect_exact(PROMPT)
    child.sendline("/stop")
    child.expect_exact("hermes: stopping 1 subagent: its results go to the model after your next")
    child.expect_exact("<= d1.1 interrupted")
    child.sendline("what now?")
    child.expect_exact("heard: what now?")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    roots = [r for r in home.requests() if r["messages"][0]["content"].startswith("please")]
    lasts = [r["messages"][-1]["content"] for r in roots]
    assert lasts[2] == "what now?"
    assert "status: interrupted" in lasts[3]


def test_leaving_with_held_results_says_they_were_not_sent(home: AgentHome) -> None:
    # /stop held the stopped subagent's results for the next message; /exit then dropped them
    # without a word, though the model had been promised them.
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words. " + LONG},
        chunk=5,
        delay=0.05,
    )
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it.")
    child.expect_exact(PROMPT)
    child.sendline("/stop")
    child.expect_exact("<= d1.1 interrupted")
    child.sendline("/exit")
    child.expect_exact(
        "hermes: 1 stopped delegation's results were not sent to the model (hermes sessions show "
    )
    assert ended(child) == 0


def test_piped_messages_get_their_answers_on_stdout_and_no_prompt(home: AgentHome) -> None:
    """``hermes chat < messages.txt > answers.txt``: the prompt is for a person at a terminal;
    piped, stdout holds the answers alone."""
    home.setup({"text": "One."}, {"echo": True})
    done = home.cli.run("chat", input="first\nsecond\n")
    assert "you>" not in done.stdout
    assert done.stdout.split() == ["One.", "heard:", "second"], done.stdout


COUNTING = {
    "goal": "Count the words in notes.txt and report the count",
    "context": "The file notes.txt sits in the working directory and holds three words",
}
LISTING = {
    "goal": "List the files of the working directory and report them",
    "context": "The working directory holds notes.txt and nothing else, as far as we know",
}


def test_a_background_delegations_start_is_shown_when_it_starts_not_with_its_results(
    home: AgentHome,
) -> None:
    """The started line comes before the model's next answer; the results come later (the
    subagent's answer streams slowly), with its finished line."""
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", COUNTING))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words. " + "word " * 40},
        {"for": "please delegate", "echo": True},
        chunk=20,
        delay=0.1,
    )
    child = spawn(home, "chat")
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect_exact(PROMPT)
    child.sendline("please delegate the counting")
    child.expect_exact("Started it.")
    before_answer = seen.getvalue()
    child.expect_exact("a delegation's results arrived")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert "=> d1.1 started: Count the words in notes.txt" in before_answer, before_answer
    assert "<= d1.1" not in before_answer
    assert seen.getvalue().count("=> d1.1 started") == 1, seen.getvalue()
    assert "<= d1.1 completed" in seen.getvalue()


def test_a_queued_subagent_is_shown_starting_while_the_chat_is_idle(home: AgentHome) -> None:
    """``delegation.max_concurrent: 1``: the second subagent starts after the first has ended,
    while the chat waits for a line; its started line is shown then, before the results."""
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", {"tasks": [COUNTING, LISTING]}))},
        {"for": "please delegate", "text": "Started them."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "List the files", "text": "Only notes.txt. " + "word " * 40},
        {"for": "please delegate", "echo": True},
        chunk=20,
        delay=0.1,
        delegation={"max_concurrent": 1},
    )
    child = spawn(home, "chat")
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect_exact(PROMPT)
    child.sendline("please delegate both")
    child.expect_exact("Started them.")
    child.expect_exact("=> d1.2 started: List the files")
    idle = seen.getvalue()
    child.expect_exact("a delegation's results arrived")
    child.expect_exact("heard: [delegation d1 finished]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert "results arrived" not in idle
    assert "<= d1.1 completed" in idle
    assert seen.getvalue().count("=> d1.2 started") == 1, seen.getvalue()


def test_new_says_how_many_subagents_of_the_last_conversation_it_stopped(
    home: AgentHome,
) -> None:
    """Only when there were some: a ``/new`` with none running says nothing of subagents."""
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", {"tasks": [COUNTING, LISTING]}))},
        {"for": "please delegate", "text": "Started them."},
        {"for": "Count the words", "text": "There are 3 words. " + LONG},
        {"for": "List the files", "text": "Only notes.txt. " + LONG},
        chunk=20,
        delay=0.1,
    )
    child = spawn(home, "chat")
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect_exact(PROMPT)
    child.sendline("/new")
    child.expect_exact("a new conversation")
    child.expect_exact(PROMPT)
    quiet = seen.getvalue()
    child.sendline("please delegate both")
    child.expect_exact("Started them.")
    child.expect_exact(PROMPT)
    child.sendline("/new")
    child.expect_exact("hermes: stopped 2 subagents of the last conversation")
    child.expect_exact("a new conversation")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert "stopped" not in quiet, quiet
    assert "<= d1.1 interrupted" not in seen.getvalue()  # stopped, not reported one by one


def test_help_lists_the_commands_one_a_line(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="/help\n/?\n")
    assert "unknown command" not in done.stderr
    for command in ("/help", "/stop", "/new", "/resume", "/exit"):
        assert sum(line.startswith(f"  {command} ") for line in done.stderr.splitlines()) == 2
    assert home.requests() == []


def test_an_unknown_command_is_refused_naming_help(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="/frobnicate\n")
    assert "hermes: unknown command /frobnicate" in done.stderr
    assert "/help" in done.stderr
    assert home.requests() == []


REFUSED = {"error": "fake model: 400 the model 'fake-1' rejected the request", "status": 400}


def test_piped_chat_whose_last_turn_failed_exits_1_as_run_does(home: AgentHome) -> None:
    """``printf 'hi\\nagain\\n' | hermes chat`` in a script: a failure must not read as 0."""
    home.setup(REFUSED, REFUSED)
    done = home.cli.run("chat", input="hi\nagain\n", ok=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("hermes: error: fake model: 400") == 2


def test_piped_chat_whose_last_turn_answered_exits_0_after_a_failed_one(home: AgentHome) -> None:
    home.setup(REFUSED, {"text": "Fine now."})
    done = home.cli.run("chat", input="hi\nagain\n", ok=False)
    assert done.returncode == 0, done.stderr
    assert "Fine now." in done.stdout
    assert "hermes: error: fake model: 400" in done.stderr


def test_an_interactive_chat_exits_0_after_a_failed_turn(home: AgentHome) -> None:
    home.setup(REFUSED)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("hi")
    child.expect_exact("hermes: error: fake model: 400")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_ctrl_c_at_a_question_tells_the_model_the_turn_was_stopped_there(home: AgentHome) -> None:
    """Ctrl-C stops the whole turn, not only the question: the result the model reads in the
    next turn says so, not that the person closed the question and left it to decide."""
    home.setup(turn("", ("clarify", {"question": "Which city?"})), {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("weather")
    child.expect_exact("your answer: ")
    child.kill(signal.SIGINT)
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("never mind")
    child.expect_exact("heard: never mind")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    results = [m for m in home.requests()[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 1
    assert results[0]["content"] == (
        "No answer: the person stopped the turn at this question. Do not decide it yourself "
        "or go on with the task: follow the person's next message."
    )  # it said "Decide yourself and say what you assumed", as if nobody were there

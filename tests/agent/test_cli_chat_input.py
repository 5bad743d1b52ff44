"""``hermes chat`` input on a real pseudo-terminal (pexpect): several lines pasted at once are
one message, a line ending in a backslash goes on on the next line, and a paste never answers
an approval prompt, a question or an MCP form (``hermes run`` included). A fake model answers
from a script (``agent_home.py``) and records each request, so the tests read what the model
was sent.

A paste is one write to the terminal (pexpect's ``send``): its lines reach the chat together,
as they do from a terminal emulator; lines typed one by one are sent after the chat has shown
something, never on a clock."""

from __future__ import annotations

import pexpect
import pytest

from agent.agent_home import AgentHome, asking_server, turn
from agent.test_cli_run import spawn
from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

PROMPT = "you> "
CONTINUED = "...> "
LONG = "word " * 400
TRACE = 'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: bad'


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1)


def sent(home: AgentHome) -> list[str]:
    """The person's messages, as the model got them, in order."""
    return [
        message["content"]
        for message in home.requests()[-1]["messages"]
        if message["role"] == "user"
    ]


def test_lines_pasted_at_the_prompt_are_one_message(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send(TRACE + "\n")
    child.expect_exact("hermes: 3 lines sent as one message")
    child.expect_exact("heard: Traceback")
    child.expect_exact(PROMPT)
    child.sendline("and now?")
    child.expect_exact("heard: and now?")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [TRACE, "and now?"]


def test_a_paste_whose_last_line_has_no_newline_is_one_message(home: AgentHome) -> None:
    """What a terminal copies often ends without a newline: its last line sits on the edit
    line; it belongs to the paste, not to a message typed later."""
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send(TRACE)
    child.expect_exact("hermes: 3 lines sent as one message")
    child.expect_exact("heard: Traceback")
    child.expect_exact(PROMPT)
    child.sendline("next")
    child.expect_exact("heard: next")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [TRACE, "next"]


def test_a_paste_longer_than_the_terminals_buffer_is_one_message(home: AgentHome) -> None:
    """300 lines, 15 kB: more than the 4 kB a terminal holds unread, so the chat reads the
    paste while it is still being written."""
    text = "\n".join(f"line {number}: " + "x" * 40 for number in range(300))
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send(text + "\n")
    child.expect_exact("hermes: 300 lines sent as one message")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [text]


def test_a_line_ending_in_a_backslash_goes_on_on_the_next_line(home: AgentHome) -> None:
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("first line\\")
    child.expect_exact(CONTINUED)
    child.sendline("  second line\\")
    child.expect_exact(CONTINUED)
    child.sendline("/exit is text here")
    child.expect_exact("heard: first line")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["first line\n  second line\n/exit is text here"]


def test_end_of_input_in_an_unfinished_message_quits_without_sending_it(
    home: AgentHome,
) -> None:
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("half a thought\\")
    child.expect_exact(CONTINUED)
    child.sendeof()
    child.expect_exact("hermes: the unfinished message was not sent")
    assert ended(child) == 0
    assert home.requests() == []


def test_a_pasted_text_starting_with_a_slash_is_a_message_not_a_command(home: AgentHome) -> None:
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("/usr/lib/app.so\nnot found\n")
    child.expect_exact("heard: /usr/lib/app.so")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["/usr/lib/app.so\nnot found"]


def test_a_paste_at_an_approval_prompt_is_not_an_answer(home: AgentHome) -> None:
    """Pasted by mistake where the chat asks for approval, a first line ``a`` must not
    allow the call always: no line of a paste answers, and the prompt waits for one."""
    target = home.cli.work / "out.txt"
    home.setup(turn("", ("write_file", {"path": str(target), "content": "x"})), {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("write it")
    child.expect(r"\[d\]eny: ")
    child.send("a\nrm -rf build\n")
    child.expect_exact("hermes: 2 pasted lines are not an answer: type the answer on one line")
    child.sendline("d")
    child.expect_exact("<- DENIED")
    child.expect_exact("heard: ")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert not target.exists()


def test_a_paste_at_a_question_is_not_an_answer(home: AgentHome) -> None:
    home.setup(turn("", ("clarify", {"question": "Which city?"})), {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("weather")
    child.expect_exact("your answer: ")
    child.send("Lyon\nParis")
    child.expect_exact("hermes: 2 pasted lines are not an answer: type the answer on one line")
    child.sendline("Lyon")
    child.expect_exact("heard: Lyon")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0


def test_a_paste_while_a_turn_runs_is_not_sent_and_said_once(home: AgentHome) -> None:
    home.setup({"text": LONG}, {"echo": True}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("talk")
    child.expect_exact("word word ")
    child.send("one\ntwo\nthree\n")
    child.expect_exact("hermes: a turn is running: those 3 lines were not sent")
    child.sendline("/stop")
    child.expect_exact("hermes: stop: interrupted")
    child.expect_exact(PROMPT)
    child.sendline("after")
    child.expect_exact("heard: after")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["talk", "after"]


def test_help_tells_how_to_write_several_lines(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="/help\n")
    assert "a line ending in \\ goes on on the next line" in done.stderr
    assert home.requests() == []


def test_a_paste_at_an_mcp_form_in_hermes_run_fills_no_field(home: AgentHome) -> None:
    """``hermes run`` reads the terminal as the chat does: a paste at a server's form would
    answer it and fill its fields one line each."""
    home.setup(
        turn("", ("mcp__asking__ask", {"question": "Who are you?"})),
        {"echo": True},
        mcp_servers={"asking": asking_server()},
        tools={"tool_search": {"enabled": "off"}},
    )
    child = spawn(home, "run", "ask me")
    child.expect_exact("[a]nswer, [d]ecline, [c]ancel: ")
    child.send("a\nGrace\nblue\ny\n")
    child.expect_exact("hermes: 4 pasted lines are not an answer: type the answer on one line")
    child.sendline("d")
    child.expect_exact("heard: decline")
    assert ended(child) == 0

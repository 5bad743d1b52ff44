"""A model's answer streams in deltas cut where its tokens fall, often right before or after a
zero-width joiner: on a terminal, ``hermes run`` shows the whole answer as :func:`printable`
shows it whole (an emoji sequence and a Persian word as written, ``r\u200dm`` escaped), wherever
the cuts are. The real command on a pseudo-terminal, against the test kit's ``FakeModelServer``
(the real OpenAI wire and SDK; no model can run here); the printer alone for every cut."""

from __future__ import annotations

import io
import itertools
import json
import signal
import threading
from pathlib import Path

import pexpect
import pytest

from hermes_core._cli.agent_events import EventPrinter
from hermes_core._shown import printable, printable_lines
from hermes_core.agent import Finished, TextDelta, ToolStarted, Usage
from hermes_core.agent._wire import ModelToolCall
from hermes_core.testing import FakeModelServer, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want", with a ZWNJ
TEXTS = ["\U0001f469\u200d\U0001f4bb", PERSIAN, "r\u200dm", "\U0001f44b\U0001f3fd\u200d\U0001f4bb"]
ANSWER = f"I am a {TEXTS[0]} and {PERSIAN}; {TEXTS[3]} r\u200dm.\r\nok\u200d"


class TerminalOut(io.StringIO):
    """stdout as a terminal (what a person sees)."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` (its command line and environment; the test spawns it on a pty)."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def test_an_answer_streamed_a_character_a_delta_reaches_a_terminal_as_printable_shows_it(
    hermes_cli: InProcessCli,
) -> None:
    """Every character its own delta: each joiner alone, its neighbours in other deltas."""
    cuts = range(1, len(ANSWER))
    with FakeModelServer([FakeTurn(text=ANSWER, text_cuts=cuts)]) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        command = hermes_cli.command("run", "Say it")
        env = hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        child = pexpect.spawn(
            command[0], command[1:], env=env, cwd=str(hermes_cli.work), timeout=60
        )
        child.expect(pexpect.EOF)
        child.close()
    shown = child.before.decode("utf-8").replace("\r\n", "\n")  # the pty's own line ends
    assert shown.startswith(printable_lines(ANSWER.replace("\r\n", "\n")) + "\n"), shown
    assert child.exitstatus == 0


@pytest.mark.parametrize("text", TEXTS)
def test_the_printer_shows_a_text_cut_anywhere_as_printable_shows_it_whole(text: str) -> None:
    """Cut at every position, and at every two positions: the same output as uncut."""
    line = f"a {text} b {text}"
    cuttings = [(at,) for at in range(1, len(line))]
    cuttings += [(a, b) for a in range(1, len(line)) for b in range(a + 1, len(line))]
    for cuts in cuttings:
        printer = EventPrinter(out=(out := TerminalOut()), err=io.StringIO())
        edges = [0, *cuts, len(line)]
        for start, end in itertools.pairwise(edges):
            printer.show(TextDelta(line[start:end]))
        printer.show(Finished(line, "answer", Usage(3, 2), 1))
        assert out.getvalue() == printable(line) + "\n", cuts


def test_a_joiner_ending_the_text_before_a_tool_call_is_shown_escaped_before_the_call() -> None:
    """What the printer holds back (a joiner waiting for its next character) is shown when a
    tool call interrupts the text, escaped: it has nothing after it."""
    printer = EventPrinter(out=(out := TerminalOut()), err=(err := io.StringIO()))
    printer.show(TextDelta(f"{TEXTS[0]}\u200d"))
    printer.show(ToolStarted(ModelToolCall("c1", "read_file", '{"path": "a"}'), ("read_file",)))
    assert out.getvalue() == f"{TEXTS[0]}\\u200d\n"
    assert err.getvalue().startswith("-> read_file")


def test_ctrl_c_after_a_held_joiner_shows_it_escaped_before_the_stop_line(
    hermes_cli: InProcessCli,
) -> None:
    """The stream stops after a delta ending in a joiner (held back: the next character says
    whether it joins); Ctrl-C there ends the text: the joiner is shown at once, escaped, at the
    end of the answer's line, before the note (a second Ctrl-C exits at once: nothing is held
    back for later)."""
    gate = threading.Event()
    text = f"so {TEXTS[0]}\u200d and more"
    turn = FakeTurn(text=text, text_cuts=[len(f"so {TEXTS[0]}\u200d")], gate=gate, hold_after=2)
    with FakeModelServer([turn]) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        command = hermes_cli.command("run", "Say it")
        env = hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        child = pexpect.spawn(
            command[0], command[1:], env=env, cwd=str(hermes_cli.work), timeout=60
        )
        child.expect_exact(f"so {TEXTS[0]}".encode())
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF)
        child.close()
        gate.set()
    shown = child.before.decode("utf-8")
    assert shown.startswith("\\u200d\r\n\r\nhermes: stopping the turn"), shown
    assert shown.count("\\u200d") == 1
    assert "stopped by the user" in shown
    assert child.exitstatus == 130

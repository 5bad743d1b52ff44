"""``hermes run`` reading its prompt from stdin, as ``llm`` and ``claude -p`` users expect: a real
``hermes`` process, its stdin a pipe, a regular file or ``/dev/null``, and the bundled ``openai``
provider against the test kit's ``FakeModelServer`` (what the model was sent as the user
message is what the server received).

Checked: ``hermes run -`` and ``hermes run`` with no PROMPT read the whole prompt from stdin;
``hermes run PROMPT`` with stdin a pipe or a file gets PROMPT, a blank line, then that text, and
with ``/dev/null`` (a character device) PROMPT alone; an empty or blank prompt, text that is
not UTF-8 and more than the bound are usage errors naming stdin (exit 2, nothing sent); a pipe
left open with nothing written says once that hermes waits for it, and the text written later
still goes (Ctrl-C there exits 130); no PROMPT at a terminal is a usage error; a question
asked while stdin is the prompt's pipe and a terminal is there says why nobody can answer."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

import pexpect
import pytest

from agent.agent_home import AgentHome, turn
from hermes_core._jsonrpc_lines import MAX_LINE_BYTES
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

DIFF = "diff --git a/app.py b/app.py\n-print('hi')\n+print('hello')\n"


class Served:
    """A home whose ``model`` section is the ``openai`` provider at ``server``."""

    def __init__(self, cli: HermesCli, server: FakeModelServer) -> None:
        self.cli = cli
        self.server = server
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        self.env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")

    def run(self, *args: str, stdin: Any) -> subprocess.CompletedProcess[bytes]:
        """``hermes *args`` with ``stdin`` (bytes written to a pipe, or a file or ``DEVNULL``)."""
        piped = isinstance(stdin, bytes)
        return subprocess.run(
            self.cli.command(*args),
            cwd=self.cli.work,
            env=self.env,
            input=stdin if piped else None,
            stdin=None if piped else stdin,
            capture_output=True,
            timeout=120,
            check=False,
        )

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.cli.command(*args),
            cwd=self.cli.work,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def sent(self) -> list[str]:
        """The first user message of each request the server got."""
        return [request.first_user_text for request in self.server.requests]


@pytest.fixture
def served(hermes_cli: HermesCli) -> Iterator[Served]:
    with FakeModelServer() as server:
        yield Served(hermes_cli, server)


def test_a_prompt_with_a_pipe_gets_the_piped_text_after_a_blank_line(served: Served) -> None:
    served.server.add(FakeTurn(text="Say hello, not hi."))
    done = served.run("run", "write a commit message", stdin=DIFF.encode())
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"Say hello, not hi.\n"
    assert served.sent() == ["write a commit message\n\n" + DIFF.rstrip("\n")]


def test_a_prompt_with_a_redirected_file_gets_its_text(served: Served, tmp_path: Path) -> None:
    served.server.add(FakeTurn(text="Fine."))
    notes = tmp_path / "notes.txt"
    notes.write_text("buy milk\nnaïve café\n", encoding="utf-8")
    with notes.open("rb") as file:
        done = served.run("run", "summarise", stdin=file)
    assert done.returncode == 0, done.stderr.decode()
    assert served.sent() == ["summarise\n\nbuy milk\nnaïve café"]


def test_a_prompt_with_dev_null_is_sent_alone(served: Served) -> None:
    served.server.add(FakeTurn(text="Hi."))
    done = served.run("run", "hello", stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()
    assert served.sent() == ["hello"]


def test_an_empty_pipe_after_a_prompt_sends_the_prompt_alone(served: Served) -> None:
    served.server.add(FakeTurn(text="Hi."))
    done = served.run("run", "hello", stdin=b"")
    assert done.returncode == 0, done.stderr.decode()
    assert served.sent() == ["hello"]


@pytest.mark.parametrize("args", [["run", "-"], ["run"], ["run", "--json", "-"]])
def test_the_whole_prompt_is_read_from_stdin(served: Served, args: list[str]) -> None:
    served.server.add(FakeTurn(text="Done."))
    done = served.run(*args, stdin="  explain this:\nnaïve\n\n".encode())
    assert done.returncode == 0, done.stderr.decode()
    assert served.sent() == ["  explain this:\nnaïve"]


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["run", "-"], b" \n\t\n"),
        (["run"], b""),
        (["run"], subprocess.DEVNULL),
    ],
)
def test_an_empty_prompt_from_stdin_is_the_usage_error_of_an_empty_prompt(
    served: Served, args: list[str], stdin: Any
) -> None:
    done = served.run(*args, stdin=stdin)
    assert done.returncode == 2
    assert "PROMPT is empty (stdin held no text): give the model something to do" in (
        done.stderr.decode()
    )
    assert served.server.requests == []


def closed_stdin(served: Served, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``hermes *args <&-``: the process starts with no descriptor 0 at all."""
    return subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", *served.cli.command(*args)],
        cwd=served.cli.work,
        env=served.env,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_a_prompt_with_stdin_closed_is_sent_alone_as_with_dev_null(served: Served) -> None:
    served.server.add(FakeTurn(text="Hi."))
    done = closed_stdin(served, "run", "hello")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"Hi.\n"
    assert served.sent() == ["hello"]


def test_no_prompt_with_stdin_closed_is_the_usage_error_of_an_empty_prompt(
    served: Served,
) -> None:
    done = closed_stdin(served, "run")
    assert done.returncode == 2, done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()
    assert "PROMPT is empty (stdin held no text)" in done.stderr.decode()
    assert served.server.requests == []


def test_stdin_that_is_not_utf8_is_a_usage_error_naming_it(served: Served) -> None:
    done = served.run("run", "what is this", stdin=b"abc\xff\xfedef")
    assert done.returncode == 2
    assert (
        "stdin is not UTF-8 text (byte 0xff at offset 3): convert it first, e.g. "
        "iconv -f latin1 -t utf-8" in done.stderr.decode()
    )
    assert served.server.requests == []


def test_more_than_the_bound_on_stdin_is_refused_naming_it(served: Served) -> None:
    def write(pipe: IO[bytes]) -> None:
        block = b"x" * (1024 * 1024)
        with suppress(BrokenPipeError):  # hermes stopped reading past the bound
            for _ in range(MAX_LINE_BYTES // len(block) + 1):
                pipe.write(block)
        with suppress(BrokenPipeError):
            pipe.close()

    with served.start("run", "summarise") as process:
        assert process.stdin is not None
        assert process.stderr is not None
        writer = threading.Thread(target=write, args=(process.stdin,))
        writer.start()
        stderr = process.stderr.read().decode()
        writer.join()
        assert process.wait(timeout=120) == 2, stderr
    assert "stdin holds more than 64 MiB, the most hermes reads as a prompt" in stderr
    assert served.server.requests == []


def test_a_silent_open_pipe_is_said_once_and_the_text_written_later_still_goes(
    served: Served,
) -> None:
    served.server.add(FakeTurn(text="Built."))
    with served.start("run", "why did the build fail") as process:
        assert process.stdin is not None
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        process.stdin.write(b"error: missing semicolon\n")
        process.stdin.close()
        rest = process.stderr.read().decode()
        assert process.wait(timeout=120) == 0, rest
    assert line == (
        "hermes: waiting for stdin to end (its text follows the prompt); "
        "run with < /dev/null to send the prompt alone\n"
    )
    assert "waiting for stdin" not in rest  # said once
    assert served.sent() == ["why did the build fail\n\nerror: missing semicolon"]


def test_a_question_while_stdin_is_the_prompts_pipe_says_why_nobody_answers(
    hermes_cli: HermesCli,
) -> None:
    home = AgentHome(hermes_cli)
    home.setup(turn("", ("clarify", {"question": "Which city?"})), {"echo": True})
    command = shlex.join(home.cli.command("run", "weather please"))
    # a terminal is there (stdout, stderr, the controlling one); stdin is the pipe
    child = pexpect.spawn(
        "sh",
        ["-c", f"printf 'in Lyon\\n' | {command}"],
        env=home.cli.variables(),
        cwd=str(home.cli.work),
        encoding="utf-8",
        timeout=60,
    )
    child.expect("heard: No answer: nobody can answer questions here")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [first, second] = home.requests()
    assert first["messages"][0]["content"] == "weather please\n\nin Lyon"
    assert second["messages"][-1]["content"].startswith(
        "No answer: nobody can answer questions here (stdin is the prompt's text, not a "
        "terminal: answers are not read from it)."
    )


def test_ctrl_c_while_waiting_for_stdin_exits_interrupted(served: Served) -> None:
    with served.start("run", "why did the build fail") as process:
        assert process.stdin is not None
        assert process.stderr is not None
        assert "waiting for stdin" in process.stderr.readline().decode()
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read().decode()
        assert process.wait(timeout=120) == 130
        process.stdin.close()
    assert rest == "\nhermes: interrupted\n"
    assert served.server.requests == []


def test_no_prompt_at_a_terminal_is_a_usage_error_saying_how_to_give_one(
    hermes_cli: HermesCli,
) -> None:
    command = hermes_cli.command("run")
    child = pexpect.spawn(
        command[0],
        command[1:],
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=60,
    )
    child.expect_exact("missing PROMPT: hermes run PROMPT, or pipe it in (hermes run -)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2

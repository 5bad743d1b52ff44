"""``hermes run`` end to end: the real command (in this process, as ``InProcessCli`` runs it, with
what a subprocess would get; on a pseudo-terminal for the terminal's checks), a real host with
its bundled plugins and a real MCP server (``tests/mcp/servers/toolbox.py``), and a fake model
(a directory plugin answering from a script: no model can run here, see ``agent_home.py``); the
flow runs once more through the bundled ``openai`` and ``anthropic`` providers against the test
kit's ``FakeModelServer`` (a scripted HTTP server: the real wire formats and SDKs).

Checked: the tool-search flow (search, describe, call an MCP tool) whose events and activity log
name the real tool; ``--json`` lines that all parse; the plain output's streams; approvals
refused without a terminal and asked on one; Ctrl-C mid-stream; each exit status."""

from __future__ import annotations

import io
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

from agent.agent_home import AgentHome, asking_server, toolbox_server, turn
from hermes_core._cli.agent_events import EventPrinter, call_lines, exit_status
from hermes_core.agent import Finished, ModelToolCall, TextDelta, ToolFinished, ToolStarted, Usage
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli, write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

ECHO = "mcp__toolbox__echo"


@pytest.fixture
def home(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> AgentHome:
    # The command in this process (what a new interpreter would get: its environment, stdio,
    # exit status); the terminal's tests still start it on a pseudo-terminal (spawn).
    return AgentHome(InProcessCli(tmp_path, home=hermes_home, work=hermes_project))


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every line of stdout as JSON (a line that does not parse fails the test)."""
    return [json.loads(line) for line in stdout.splitlines()]


def spawn(home: AgentHome, *args: str) -> pexpect.spawn:
    """``hermes *args`` on a pseudo-terminal (a person at a terminal)."""
    command = home.cli.command(*args)
    return pexpect.spawn(
        command[0],
        command[1:],
        env=home.cli.variables(),
        cwd=str(home.cli.work),
        encoding="utf-8",
        timeout=60,
    )


def test_a_tool_search_flow_runs_an_mcp_tool_whose_events_hooks_and_activity_name_it(
    home: AgentHome,
) -> None:
    seen = home.cli.root / "hook-events.jsonl"
    hook = {"command": f"cat >> {seen}; echo >> {seen}", "match": "mcp__*"}
    home.setup(
        turn("", ("tool_search", {"queries": ["echo text back"]})),
        turn("", ("tool_describe", {"names": [ECHO]})),
        turn("", ("tool_call", {"calls": [{"name": ECHO, "arguments": {"text": "bonjour"}}]})),
        {"echo": True},
        mcp_servers={"toolbox": toolbox_server()},
        tools={"tool_search": {"enabled": "on"}},
        hooks={"pre_tool_call": [hook]},
    )
    done = home.cli.run("run", "--json", "Say bonjour with the echo tool")
    events = json_lines(done.stdout)
    calls = [event for event in events if event["type"] == "tool_call"]
    assert [event["tools"] for event in calls] == [["tool_search"], ["tool_describe"], [ECHO]]
    results = [event for event in events if event["type"] == "tool_result"]
    assert [event["is_error"] for event in results] == [False, False, False]
    assert ECHO in results[0]["text"]  # the search found it
    assert "bonjour" in results[2]["text"]
    final = events[-1]
    assert final["type"] == "final"
    assert final["stop"] == "answer"
    assert final["text"].startswith("heard: ")
    assert "bonjour" in final["text"]
    # The model's first request had the bridge, not the deferred MCP tool.
    first_tools = home.requests()[0]["tools"]
    assert "tool_search" in first_tools
    assert ECHO not in first_tools
    assert ECHO in [record.get("name") for record in home.activity()]
    (event,) = json_lines(seen.read_text(encoding="utf-8").strip())
    assert (event["tool_name"], event["arguments"]) == (ECHO, {"text": "bonjour"})
    assert done.stderr == ""


@pytest.mark.slow  # about 7 s a wire: `hermes run` and MCP servers as processes
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_flow_runs_over_each_wire_against_the_fake_model_server(
    hermes_cli: HermesCli, wire: str
) -> None:
    """The same flow with the bundled providers and the test kit's scripted HTTP server."""
    calls = {"calls": [{"name": ECHO, "arguments": {"text": "bonjour"}}]}
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("tool_search", {"queries": ["echo text back"]})]),
        FakeTurn(tool_calls=[FakeToolCall("tool_describe", {"names": [ECHO]})]),
        FakeTurn(tool_calls=[FakeToolCall("tool_call", calls)]),
        FakeTurn(text="It said bonjour."),
    ]
    with FakeModelServer(turns) as server:
        base_url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
        config = {
            "model": {"provider": wire, "model": "fake-model", "base_url": base_url},
            "mcp_servers": {"toolbox": toolbox_server()},
            "tools": {"tool_search": {"enabled": "on"}},
        }
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
        env = hermes_cli.variables(**{key: "sk-fake-key-for-tests"})
        done = hermes_cli.run("run", "--json", "Say bonjour with the echo tool", env=env)
        requests = server.requests
    events = json_lines(done.stdout)
    calls_seen = [event["tools"] for event in events if event["type"] == "tool_call"]
    assert calls_seen == [["tool_search"], ["tool_describe"], [ECHO]]
    assert (events[-1]["type"], events[-1]["text"]) == ("final", "It said bonjour.")
    assert len(requests) == 4
    assert "bonjour" in json.dumps(requests[3].messages)  # the MCP tool's result went back
    assert "sk-fake-key-for-tests" not in done.stdout + done.stderr


def test_arguments_holding_a_lone_surrogate_are_a_tool_error_and_the_transcript_keeps_them(
    hermes_cli: HermesCli,
) -> None:
    # A model may write the JSON escape of half a character in its arguments (a page told it
    # to): the string it gives is no UTF-8, and writing the transcript failed the whole run.
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")
    odd = FakeToolCall("read_file", '{"path": "notes\\ud800.txt"}')
    turns = [FakeTurn(text="Reading. ", tool_calls=[odd]), FakeTurn(text="Done.")]
    with FakeModelServer(turns) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = {"model": model}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        env = hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        done = hermes_cli.run("run", "--json", "What do my notes say?", env=env)
    events = json_lines(done.stdout)
    results = [event for event in events if event["type"] == "tool_result"]
    assert [(event["tools"], event["is_error"]) for event in results] == [(["read_file"], True)]
    assert (events[-1]["type"], events[-1]["text"]) == ("final", "Done.")
    (transcript,) = (hermes_cli.home / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    calls = [record["tool_calls"] for record in records if record.get("tool_calls")]
    assert json.loads(calls[0][0]["arguments"]) == {"path": "notes\ud800.txt"}
    assert [record.get("role") for record in records][-1] == "assistant"


def test_plain_output_streams_the_answer_and_shows_tool_calls_on_stderr(
    home: AgentHome,
) -> None:
    (home.cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")
    home.setup(turn("Reading. ", ("read_file", {"path": "notes.txt"})), {"text": "It says hello."})
    done = home.cli.run("run", "What do my notes say?")
    assert done.stdout == "Reading. \nIt says hello.\n"  # each model message its own line
    assert '-> read_file {"path": "notes.txt"}\n<- ok\n' in done.stderr
    assert "hermes: stop: answer (2 model requests" in done.stderr


def test_a_piped_answer_keeps_its_colour_sequences_byte_exact(home: AgentHome) -> None:
    """``hermes run ... > answer.txt`` in a real process: the model's text, CSI colour sequences
    and a ``\\r\\n`` included, is the file's bytes, as ``tools call`` writes a tool's result."""
    answer = "\x1b[31mred\x1b[0m and \x1b[1mbold\x1b[m\r\ndone"
    home.setup({"text": answer})
    done = subprocess.run(
        home.cli.command("run", "Colour it"),
        cwd=home.cli.work,
        env=home.cli.variables(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == f"{answer}\n".encode()


def test_a_destructive_call_is_refused_without_a_terminal_and_the_model_is_told(
    home: AgentHome,
) -> None:
    target = home.cli.work / "out.txt"
    home.setup(
        turn("", ("write_file", {"path": str(target), "content": "x"})),
        {"echo": True},
    )
    done = home.cli.run("run", "--json", "write it")
    results = [event for event in json_lines(done.stdout) if event["type"] == "tool_result"]
    assert [(event["tools"], event["error_code"]) for event in results] == [
        (["write_file"], "DENIED")
    ]
    told = home.requests()[1]["messages"][-1]
    assert told["role"] == "tool"
    assert told["is_error"] is True
    assert not target.exists()


def test_a_destructive_call_is_asked_about_on_a_terminal(home: AgentHome) -> None:
    target = home.cli.work / "out.txt"
    home.setup(
        turn("", ("write_file", {"path": str(target), "content": "x"})),
        {"text": "Written."},
    )
    child = spawn(home, "run", "write it")
    child.expect("needs approval")
    child.expect(r"\[o\]nce")
    child.sendline("o")
    child.expect("Written.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert target.read_text(encoding="utf-8") == "x"


def test_ctrl_c_at_an_approval_prompt_denies_and_ends_the_turn_interrupted(
    home: AgentHome,
) -> None:
    target = home.cli.work / "out.txt"
    home.setup(
        turn("", ("write_file", {"path": str(target), "content": "x"})),
        {"text": "never asked for"},
    )
    child = spawn(home, "run", "write it")
    child.expect(r"\[d\]eny: ")
    child.kill(signal.SIGINT)
    child.expect_exact("<- DENIED")
    child.expect_exact("hermes: stop: interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert not target.exists()
    assert len(home.requests()) == 1


def test_ctrl_c_mid_stream_ends_the_turn_interrupted_with_status_130(home: AgentHome) -> None:
    home.setup({"text": "word " * 200}, chunk=5, delay=0.05)
    process = home.cli.start("run", "--json", "talk")
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert first == {"type": "text", "text": "word "}
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, errors
    final = json_lines(rest)[-1]
    assert final["type"] == "final"
    assert final["stop"] == "interrupted"
    assert len(final["text"]) < len("word " * 200)


def test_a_second_ctrl_c_exits_at_once_while_a_tool_still_runs(home: AgentHome) -> None:
    home.setup(
        turn("", ("mcp__toolbox__sleep", {"seconds": 600})),
        {"text": "never reached"},
        mcp_servers={"toolbox": toolbox_server()},
        tools={"tool_search": {"enabled": "off"}},
        approvals={"policy": "off"},
    )
    process = home.cli.start("run", "--json", "sleep")
    try:
        assert process.stdout is not None
        started = json.loads(process.stdout.readline())
        while started["type"] != "tool_call":
            started = json.loads(process.stdout.readline())
        assert started["tools"] == ["mcp__toolbox__sleep"]
        process.send_signal(signal.SIGINT)  # the turn is to stop, but the call still runs
        assert process.stderr is not None
        said = process.stderr.readline()
        while not said.strip():
            said = process.stderr.readline()
        assert said == "hermes: stopping the turn (Ctrl-C again exits at once)\n"
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=60)  # a guard: the sleep is 600 s
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert errors.endswith("hermes: interrupted\n")
    assert "final" not in rest


def test_a_background_delegation_is_waited_for_and_its_results_answered(
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
    done = home.cli.run("run", "--json", "please delegate the counting")
    events = json_lines(done.stdout)
    kinds = [event["type"] for event in events]
    assert "child_started" in kinds
    assert "child_finished" in kinds
    texts = "".join(event["text"] for event in events if event["type"] == "text")
    assert texts.startswith("Started it.")  # the first turn's answer, streamed
    (final,) = [event for event in events if event["type"] == "final"]  # the run's, last
    assert final == events[-1]
    assert final["stop"] == "answer"
    assert "There are 3 words." in final["text"]  # the results, sent as the next message
    assert final["text"].startswith("heard: [delegation d1 finished]")


def test_a_run_with_a_background_delegation_writes_one_stop_line_at_its_end(
    home: AgentHome,
) -> None:
    # It wrote "hermes: stop: answer (3 model requests, 30 tokens)" when the first turn ended,
    # before the subagent had, and the run's own stop line after it.
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "text": "Three words."},
    )  # the fake model reports 15 tokens a request
    done = home.cli.run("run", "please delegate the counting")
    stops = [line for line in done.stderr.splitlines() if line.startswith("hermes: stop")]
    assert stops == ["hermes: stop: answer (4 model requests, 60 tokens)"]
    assert done.stderr.endswith(f"{stops[0]}\n")
    assert done.stdout == "Started it.\nThree words.\n"  # each turn's answer its own line


def test_a_turn_that_failed_before_its_subagents_results_is_noted_and_the_run_goes_on(
    home: AgentHome,
) -> None:
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "error": "fake model: 400 too long", "status": 400},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "text": "Three words."},
    )
    done = home.cli.run("run", "--json", "please delegate the counting")
    (final,) = [event for event in json_lines(done.stdout) if event["type"] == "final"]
    assert (final["stop"], final["text"]) == ("answer", "Three words.")
    lines = done.stderr.splitlines()
    assert (
        "hermes: turn ended: error: fake model: 400 too long; "
        "the run goes on with its subagents' results"
    ) in lines
    assert not any(line.startswith("hermes: stop") for line in lines)  # --json: an answer


def test_ctrl_c_while_waiting_for_a_delegation_stops_it_and_exits_130(home: AgentHome) -> None:
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started."},
        {"for": "Count the words", "text": "word " * 400},
        {"for": "please delegate", "text": "never asked for"},
        chunk=5,
        delay=0.05,
    )
    process = home.cli.start("run", "--json", "please delegate the counting")
    try:
        assert process.stdout is not None
        said = ""
        while not said.endswith("Started."):  # the first turn's answer: the child still runs
            event = json.loads(process.stdout.readline())
            said += event["text"] if event["type"] == "text" else ""
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, errors
    assert "hermes: stop: interrupted: stopped by the user" in errors.splitlines()[-1]
    assert not any("never asked for" in line for line in rest.splitlines())  # no further turn


def test_ctrl_c_while_waiting_for_a_delegation_ends_the_json_with_the_child_and_the_stop(
    home: AgentHome,
) -> None:
    """``hermes run --json`` read by a script: the last ``final`` said ``answer`` (the turn
    before the wait) while the run exited 130, and the child it started never ended there."""
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started."},
        {"for": "Count the words", "text": "word " * 400},
        chunk=5,
        delay=0.05,
    )
    process = home.cli.start("run", "--json", "please delegate the counting")
    try:
        assert process.stdout is not None
        said = ""
        while not said.endswith("Started."):  # the first turn's answer: the child still runs
            event = json.loads(process.stdout.readline())
            said += event["text"] if event["type"] == "text" else ""
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, errors
    events = json_lines(rest)
    assert [(e["type"], e.get("status")) for e in events[-2:]] == [
        ("child_finished", "interrupted"),
        ("final", None),
    ]
    assert [e["type"] for e in events].count("final") == 1
    assert events[-1]["stop"] == "interrupted"
    assert events[-1]["text"] == "Started."


def test_plain_output_shows_subagents_starting_and_ending(home: AgentHome) -> None:
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "text": "Three words."},
    )
    done = home.cli.run("run", "please delegate the counting")
    assert "=> d1.1 started: Count the words in notes.txt and report the count\n" in done.stderr
    assert "<= d1.1 completed\n" in done.stderr
    assert done.stdout.endswith("Three words.\n")


def test_the_stop_line_counts_the_subagents_tokens_as_it_counts_their_requests(
    home: AgentHome,
) -> None:
    # It said "4 model requests, 45 tokens": the child's request counted, its 15 tokens not.
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "text": "Three words."},
    )  # the fake model reports 15 tokens a request
    done = home.cli.run("run", "please delegate the counting")
    assert done.stderr.endswith("hermes: stop: answer (4 model requests, 60 tokens)\n")


def test_the_final_event_gives_the_turns_tokens_with_the_subagents_beside_its_requests(
    home: AgentHome,
) -> None:
    # `turns` counted the child's request, `input_tokens`/`output_tokens` not its tokens: a
    # cost summed from them side by side was short. The turn's own fields count as `turns` does.
    task = {
        "goal": "Count the words in notes.txt and report the count",
        "context": "The file notes.txt sits in the working directory and holds three words",
    }
    home.setup(
        {"for": "please delegate", **turn("", ("delegate_task", task))},
        {"for": "please delegate", "text": "Started it."},
        {"for": "Count the words", "text": "There are 3 words."},
        {"for": "please delegate", "text": "Three words."},
    )  # the fake model reports 15 tokens a request
    done = home.cli.run("run", "--json", "please delegate the counting")

    final = json_lines(done.stdout)[-1]
    assert (final["type"], final["turns"]) == ("final", 4)
    assert final["input_tokens"] + final["output_tokens"] == 45  # the conversation's own
    assert final["turn_input_tokens"] + final["turn_output_tokens"] == 60  # the child's too
    assert final["turn_output_tokens"] > final["output_tokens"]


def test_a_model_error_exits_1_with_the_providers_message(home: AgentHome) -> None:
    home.setup({"error": "fake model: 400 the model 'fake-1' rejected the request", "status": 400})
    done = home.cli.run("run", "hello", ok=False)
    assert done.returncode == 1
    assert "hermes: error: fake model: 400 the model 'fake-1' rejected the request" in done.stderr
    assert done.stdout == ""


def test_a_limit_exits_3_naming_it(home: AgentHome) -> None:
    home.setup(turn("thinking", ("read_file", {"path": "x"})), agent={"max_turns": 1})
    done = home.cli.run("run", "--json", "hello", ok=False)
    assert done.returncode == 3
    final = json_lines(done.stdout)[-1]
    assert (final["stop"], final["text"]) == ("max_turns", "thinking")


def test_no_model_set_is_a_configuration_error_naming_the_key(home: AgentHome) -> None:
    home.cli.config.write_text("{}", encoding="utf-8")
    done = home.cli.run("run", "hello", ok=False)
    assert done.returncode == 2
    assert done.stderr.startswith("hermes: error: ")
    assert "model.model" in done.stderr
    assert "hermes config set model.model" in done.stderr


def test_an_unknown_provider_is_a_configuration_error_naming_the_key(home: AgentHome) -> None:
    home.setup({"text": "hi"}, model={"provider": "opnai", "model": "m"})
    done = home.cli.run("run", "hello", ok=False)
    assert done.returncode == 2
    assert "unknown model provider 'opnai' (set by model.provider)" in done.stderr
    assert "fake" in done.stderr


RAISING_MODEL = """
from hermes_core.plugin import ModelProviderSpec, hookimpl


def _make(context):
    raise RuntimeError("the vendor SDK is not installed")


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("broken", _make)]
"""


def test_a_provider_whose_factory_raises_is_said_once(home: AgentHome) -> None:
    # The failure was logged as the plugin's warning and then printed as the error: the same
    # sentence twice.
    write_dir_plugin(home.cli.home / "plugins", "broken-model", RAISING_MODEL)
    home.setup(
        {"text": "hi"},
        model={"provider": "broken", "model": "b-1"},
        plugins={"enabled": ["broken-model"]},
    )

    done = home.cli.run("run", "hello", ok=False)

    assert done.returncode == 2
    init = home.cli.home / "plugins" / "broken-model" / "__init__.py"
    assert done.stderr == (
        "hermes: error: plugin 'broken-model': model provider 'broken' (from "
        "hermes_model_providers) could not be built: its factory raised RuntimeError: the "
        f"vendor SDK is not installed (at {init}, line 6)\n"
    )


def test_clarify_asks_on_the_terminal_and_the_answer_reaches_the_model(home: AgentHome) -> None:
    home.setup(
        turn("", ("clarify", {"question": "Which city?", "choices": ["Lyon", "Paris"]})),
        {"echo": True},
    )
    child = spawn(home, "run", "weather please")
    child.expect("the agent asks: Which city\\?")
    child.expect("2. Paris")
    child.sendline("2")
    child.expect("heard: Paris")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_an_mcp_servers_form_during_a_call_is_asked_on_the_terminal(home: AgentHome) -> None:
    home.setup(
        turn("", ("mcp__asking__ask", {"question": "Who are you?"})),
        {"echo": True},
        mcp_servers={"asking": asking_server()},
        tools={"tool_search": {"enabled": "off"}},
    )
    child = spawn(home, "run", "ask me")
    child.expect_exact("The MCP server 'asking' asks")
    child.expect_exact("[a]nswer, [d]ecline, [c]ancel: ")
    child.sendline("a")
    child.expect_exact("Your name")
    child.sendline("Grace")
    child.expect_exact("Favourite color")
    child.sendline("blue")
    child.expect_exact("Sure?")
    child.sendline("y")
    child.expect("heard: accept .*Grace")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_clarify_with_nobody_to_ask_tells_the_model_to_decide(home: AgentHome) -> None:
    home.setup(turn("", ("clarify", {"question": "Which city?"})), {"echo": True})
    done = home.cli.run("run", "weather please")
    assert done.stdout == (
        "heard: No answer: nobody can answer questions here (stdin is not a terminal). "
        "Decide yourself and say what you assumed.\n"
    )


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_an_empty_prompt_is_refused_before_the_model_is_asked(home: AgentHome, prompt: str) -> None:
    """``hermes run "$PROMPT"`` with PROMPT unset paid for a request answering nothing (a
    chat skips an empty line, ACP refuses an empty prompt)."""
    home.setup({"text": "What would you like?"})
    done = home.cli.run("run", prompt, ok=False)
    assert done.returncode == 2
    assert "PROMPT is empty" in done.stderr
    assert done.stdout == ""
    assert home.requests() == []


def test_help_lists_run_and_chat(home: AgentHome) -> None:
    done = home.cli.run("--help")
    assert "  run " in done.stdout
    assert "  chat " in done.stdout


def test_a_retryable_model_error_is_retried_and_says_so_on_stderr(home: AgentHome) -> None:
    home.setup(
        {"error": "fake model: 429 slow down", "status": 429, "retryable": True},
        {"text": "Fine."},
    )
    done = home.cli.run("run", "hello")
    assert done.stdout == "Fine.\n"
    assert "hermes: the model request failed (fake model: 429 slow down); retrying in" in (
        done.stderr
    )
    assert "(attempt 1 of 2)" in done.stderr


def test_a_request_that_failed_for_good_says_how_many_attempts_it_took(home: AgentHome) -> None:
    # "(1 model request, 0 tokens)" after two failed attempts read as if it had not retried.
    failed = {"error": "fake model: 503 busy", "status": 503, "retryable": True}
    home.setup(failed, failed)
    done = home.cli.run("run", "hello", ok=False)
    assert done.returncode != 0
    assert "(1 model request in 2 attempts, 0 tokens)" in done.stderr.splitlines()[-1]


# What the printer shows, in process -----------------------------------------------------------


def test_a_tool_call_line_names_each_real_tool_it_carries_with_its_arguments() -> None:
    carried = {
        "calls": [
            {"name": "weather_now", "arguments": {"city": "Lyon"}},
            {"name": ECHO, "arguments": {"text": "x" * 300}},
        ]
    }
    lines = call_lines(ModelToolCall("call_1", "tool_call", json.dumps(carried)))
    assert lines[0] == '-> weather_now {"city": "Lyon"}'
    assert lines[1].startswith(f'-> {ECHO} {{"text": "xxx')
    assert lines[1].endswith("...")
    assert len(lines[1]) < 230
    direct = ModelToolCall("call_2", "read_file", '{"path": "a\\u001b[2Jb"}')
    assert call_lines(direct) == ['-> read_file {"path": "a\\u001b[2Jb"}']
    shown = call_lines(ModelToolCall("call_3", "read_file", '{"path": "\x1b[2J"}'))
    assert "\x1b" not in shown[0]


def test_a_bridge_call_nested_too_deep_to_read_is_shown_as_written() -> None:
    # Past Python's recursion json.loads raises RecursionError, not ValueError: showing the
    # model's call stopped hermes chat and hermes run.
    deep = "[" * 100_000 + "]" * 100_000
    (line,) = call_lines(ModelToolCall("call_1", "tool_call", deep))
    assert line.startswith("-> tool_call [[[")
    assert line.endswith("...")


@pytest.mark.parametrize(
    ("stop", "status"),
    [
        ("answer", 0),
        ("error", 1),
        ("max_turns", 3),
        ("max_tokens", 3),
        ("max_seconds", 3),
        ("interrupted", 130),
    ],
)
def test_each_way_a_turn_ends_has_its_exit_status(stop: Any, status: int) -> None:
    assert exit_status(Finished("", stop, Usage(), 1)) == status


def test_the_texts_of_two_model_requests_do_not_run_together_on_a_piped_stdout() -> None:
    """``hermes run ... > answer.txt``: the text a model wrote before its tool call, then its
    answer, read "Let me look.It says: buy milk." (a terminal had the line ended)."""
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(out=out, err=err)
    call = ModelToolCall("call_1", "read_file", '{"path": "notes.txt"}')
    for event in (
        TextDelta("Let me "),
        TextDelta("look."),
        ToolStarted(call, ("read_file",)),
        ToolFinished(call, ("read_file",), "buy milk", None),
        TextDelta("It says: buy milk."),
        Finished("It says: buy milk.", "answer", Usage(3, 2), 2),
    ):
        printer.show(event)
    assert out.getvalue() == "Let me look.\nIt says: buy milk.\n"
    assert err.getvalue().splitlines()[:2] == ['-> read_file {"path": "notes.txt"}', "<- ok"]


class TerminalOut(io.StringIO):
    """stdout as a terminal (what a person sees)."""

    def isatty(self) -> bool:
        return True


def test_the_answer_reaches_a_terminal_with_its_control_characters_escaped() -> None:
    """The model's text may repeat what a page or a tool told it to: on a terminal, an OSC 52
    sequence writes the clipboard and a CSI one clears the screen, as the tool lines and the
    resume summary already escape. Lines and tabs stay; a piped stdout gets the text as is."""
    answer = "Done.\n\tClean\x1b[2J\x1b]52;c;cm0gLXJm\x07\r\u202eok"
    escaped = "Done.\n\tClean\\x1b[2J\\x1b]52;c;cm0gLXJm\\x07\\r\\u202eok\n"
    shown = {}
    for out in (TerminalOut(), io.StringIO()):
        printer = EventPrinter(out=out, err=io.StringIO())
        for event in (TextDelta(answer[:14]), TextDelta(answer[14:])):  # a split escape too
            printer.show(event)
        printer.show(Finished(answer, "answer", Usage(3, 2), 1))
        shown[out.isatty()] = out.getvalue()
    assert shown[True] == escaped
    assert shown[False] == answer + "\n"


def test_a_cut_answer_says_why_on_stderr_in_a_chat_too() -> None:
    """A chat leaves out the stop line of an answer, but not of one the output cap cut."""
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(quiet_answer=True, out=out, err=err)
    printer.show(TextDelta("Step two: rem"))
    cut = Finished("Step two: rem", "answer", Usage(3, 2), 1, "the answer was cut", Usage(3, 2))
    printer.show(cut)
    assert out.getvalue() == "Step two: rem\n"
    assert (
        err.getvalue() == "hermes: stop: answer: the answer was cut (1 model request, 5 tokens)\n"
    )


def test_json_mode_writes_nothing_but_event_lines_on_stdout() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(as_json=True, out=out, err=err)
    call = ModelToolCall("call_1", "read_file", '{"path": "x"}')
    for event in (
        TextDelta("Hi"),
        ToolStarted(call, ("read_file",)),
        ToolFinished(call, ("read_file",), "nope", "TOOL_ERROR"),
        Finished("Hi", "answer", Usage(3, 2), 1),
    ):
        printer.show(event)
    assert [json.loads(line)["type"] for line in out.getvalue().splitlines()] == [
        "text",
        "tool_call",
        "tool_result",
        "final",
    ]
    assert err.getvalue() == ""


@pytest.mark.parametrize(
    ("stop", "detail", "line"),
    [
        ("error", "openai: model 'm': HTTP 400", "hermes: error: openai: model 'm': HTTP 400"),
        ("max_turns", "agent.max_turns (1)", "hermes: stop: max_turns: agent.max_turns (1)"),
    ],
)
def test_json_mode_says_on_stderr_why_a_run_exits_non_zero(
    stop: Any, detail: str, line: str
) -> None:
    """``hermes run --json > events.jsonl`` in a job's log: exit 1 (or 3) with an empty stderr
    left the reason only in a file the log does not show."""
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(as_json=True, out=out, err=err)
    printer.show(Finished("", stop, Usage(3, 2), 1, detail, Usage(3, 2)))
    assert json.loads(out.getvalue())["stop"] == stop
    assert err.getvalue() == f"{line} (1 model request, 5 tokens)\n"


@pytest.mark.parametrize("command", ["run", "chat"])
def test_what_a_hook_prints_during_a_turn_stays_off_the_answers_stream(
    home: AgentHome, command: str
) -> None:
    """stdout is the answer's (``hermes run --json`` a line of JSON each): a ``print()`` left
    in a hook directory's handler goes to stderr, as under ``hermes tools call``."""
    hook = home.cli.home / "hooks" / "noisy"
    hook.mkdir(parents=True)
    (hook / "HOOK.yaml").write_text("event: pre_tool_call\n", encoding="utf-8")
    (hook / "handler.py").write_text(
        "def handle(event):\n    print('the noisy hook was here')\n", encoding="utf-8"
    )
    home.setup(
        turn("", ("tool_search", {"queries": ["anything"]})),
        {"text": "Done."},
        hooks={"enabled": ["noisy"]},
    )
    if command == "run":
        done = home.cli.run("run", "--json", "search for anything")
        assert [event["type"] for event in json_lines(done.stdout)][-1] == "final"
    else:
        done = home.cli.subprocess_run("chat", input="search for anything\n")  # a real stdin
        assert done.stdout.split() == ["Done."], done.stdout
    assert "the noisy hook was here" in done.stderr


def test_a_context_length_below_what_the_tools_need_is_a_warning_on_stderr(
    home: AgentHome,
) -> None:
    model = {"provider": "fake", "model": "fake-1", "max_retries": 1, "context_length": 2000}
    home.setup({"text": "Hello."}, model=model)
    done = home.cli.run("run", "Say hello")
    assert done.stdout == "Hello.\n"
    warnings = [line for line in done.stderr.splitlines() if "model.context_length" in line]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith("hermes: warning: model.context_length is 2000 tokens")


def test_an_emoji_sequence_and_a_persian_word_in_the_answer_reach_a_terminal_as_written() -> None:
    """A zero-width joiner inside an emoji sequence and a non-joiner between two Persian
    letters are part of the text a person reads; next to ASCII a joiner hides, so it shows."""
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want", with a ZWNJ
    answer = f"I am a \U0001f469\u200d\U0001f4bb and {persian}; r\u200dm\u202e"
    printer = EventPrinter(out=(out := TerminalOut()), err=io.StringIO())
    printer.show(TextDelta(answer))
    printer.show(Finished(answer, "answer", Usage(3, 2), 1))
    assert out.getvalue() == answer.replace("r\u200dm\u202e", "r\\u200dm\\u202e") + "\n"

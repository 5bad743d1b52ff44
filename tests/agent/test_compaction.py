"""Compaction: a conversation that outgrows the model's context window has its older part replaced
by a summary the model writes, before a request passes ``agent.compact_at`` of
``model.context_length``, or when the server refuses one for its size anyway (then the request
is sent again once); the transcript keeps every message, and taking the conversation up again
starts from the summary. The real ``hermes chat``, ``hermes run`` and ``hermes cron run`` (in
this process, as ``InProcessCli`` runs them), the bundled providers against the test kit's
``FakeModelServer`` standing for a model with a small window (no model runs here)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent._compaction import SUMMARY_HEADER
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, RecordedRequest
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_model_wire import request_tokens

pytestmark = pytest.mark.subprocess

WORDS = "lorem ipsum dolor sit amet " * 40
"""About 270 tokens of text."""
SUMMARY = "GOAL: read the five parts. DONE: parts 1 to 3. NEXT: the rest."


def part(number: int) -> str:
    """A message of about 1,000 tokens, named by its number."""
    return f"part {number}: " + WORDS * 4


SIZED_AT = 3122
"""The tokens of a first request (the default tools, the system prompt, a word) when the five
parts, their answers and the 8,000-token window were sized: compaction falls between two
particular turns by a few tokens. The window grows with that request (:func:`window`), so a
tool's description growing moves no compaction these tests expect."""


@pytest.fixture(scope="module")
def window(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The model's window in these tests: 8,000 tokens when a first request of ``hermes run``
    (measured in a home of its own) held :data:`SIZED_AT`, and as much more as ``compact_at``'s
    0.8 of it needs to keep each turn where it was against the threshold."""
    root = tmp_path_factory.mktemp("window")
    (root / "home").mkdir()
    (root / "work").mkdir()
    probe = InProcessCli(root, home=root / "home", work=root / "work")
    with FakeModelServer([FakeTurn(text="ok")]) as server:
        probe.subprocess_run("run", "hi", env=configure(probe, server))
        (request,) = server.requests
    return 8000 + round((request_tokens(request.body) - SIZED_AT) / 0.8)


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path, window: int) -> InProcessCli:
    made = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    made.window = window  # type: ignore[attr-defined]
    return made


def configure(
    cli: InProcessCli, server: FakeModelServer, wire: str = "openai", **sections: Any
) -> dict[str, str]:
    """A model behind ``server`` on ``wire`` with the tests' window (:func:`window`; the
    server refuses past it too), then ``sections``."""
    base_url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    size = getattr(cli, "window", 8000)
    if server.context_limit is not None and "context_length" not in sections.get("model", {}):
        server.context_limit = size  # the window the tests' 8,000 stands for
    model = {
        "provider": wire,
        "model": "fake-model",
        "base_url": base_url,
        "context_length": size,
        "max_output_tokens": 500,
        **sections.pop("model", {}),
    }
    config = {"model": model, **sections}
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
    return cli.variables(**{key: "sk-fake-key-for-tests"})


def summarising(request: RecordedRequest) -> bool:
    """Whether ``request`` is the one asking for the summary: no tools, a summarising prompt."""
    return not request.tool_names and "summar" in request.system.lower()


def answer(request: RecordedRequest) -> FakeTurn:
    if summarising(request):
        return FakeTurn(text=SUMMARY)
    return FakeTurn(text=f"Noted ({len(request.messages)} messages).")


def sent(request: RecordedRequest) -> str:
    return json.dumps(request.messages)


def records(cli: InProcessCli) -> list[dict[str, Any]]:
    (transcript,) = (cli.home / "sessions").glob("*.jsonl")
    lines = transcript.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def orphans(request: RecordedRequest) -> list[str]:
    """Tool results whose call is not in the request (both wires refuse one)."""
    called: set[str] = set()
    found: list[str] = []
    for message in request.messages:
        called.update(call["id"] for call in message.get("tool_calls") or [])
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use":
                called.add(block["id"])
            elif block.get("type") == "tool_result" and block["tool_use_id"] not in called:
                found.append(block["tool_use_id"])
        if message.get("role") == "tool" and message["tool_call_id"] not in called:
            found.append(message["tool_call_id"])
    return found


def chat_five_parts(cli: InProcessCli, server: FakeModelServer) -> Any:
    env = configure(cli, server)
    lines = "".join(part(number) + "\n" for number in range(1, 6))
    return cli.subprocess_run("chat", input=lines, env=env)


def test_a_chat_past_compact_at_is_compacted_into_a_summary_and_goes_on(
    cli: InProcessCli,
) -> None:
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        done = chat_five_parts(cli, server)
        requests = server.requests

    (summary_request,) = [request for request in requests if summarising(request)]
    assert "part 1:" in summary_request.messages[-1]["content"]
    after = requests[summary_request.number :]
    assert SUMMARY in sent(after[0])
    assert all("part 1:" not in sent(request) for request in after)
    assert "part 5:" in sent(requests[-1])
    assert all(
        request_tokens(request.body) <= server.context_limit for request in requests
    )  # none refused
    (line,) = [line for line in done.stderr.splitlines() if "compacted" in line]
    assert line.startswith("hermes: compacted ")
    assert "messages (about " in line
    assert "tokens) into a summary of " in line
    # the transcript keeps every message, then says what replaced which
    stored = records(cli)
    users = [r["content"] for r in stored if r["type"] == "message" and r["role"] == "user"]
    assert [text.split(":")[0] for text in users] == [f"part {n}" for n in range(1, 6)]
    (compaction,) = [r for r in stored if r["type"] == "compaction"]
    assert SUMMARY in compaction["summary"]["content"]


CHINESE = "请把这一部分的内容读完并记住其中的要点和数字。" * 18
"""About 400 characters of Chinese: more than 400 tokens to a real tokenizer (and to the fake,
which counts its JSON escapes), 100 by a quarter of its characters."""


def test_a_chat_in_chinese_is_compacted_before_the_server_refuses_it_and_its_summary_written(
    cli: InProcessCli,
) -> None:
    lines = "".join(f"第{number}部分: {CHINESE * 3}\n" for number in range(1, 6))
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server)
        done = cli.subprocess_run("chat", input=lines, env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr
    assert all(
        request_tokens(request.body) <= server.context_limit for request in requests
    )  # none refused
    assert [request for request in requests if summarising(request)]
    assert "dropped" not in done.stderr
    assert SUMMARY in sent(requests[-1])


def test_resuming_a_compacted_conversation_starts_from_its_summary(cli: InProcessCli) -> None:
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        chat_five_parts(cli, server)
        before = len(server.requests)
        env = configure(cli, server)
        done = cli.subprocess_run("chat", "--continue", input="and now?\n", env=env)
        (first,) = server.requests[before:]

    assert SUMMARY in sent(first)
    assert "part 5:" in sent(first)
    assert "part 1:" not in sent(first)
    assert "resuming" in done.stderr
    # session_search still finds what the summary replaced
    found = cli.run(
        "tools", "call", "session_search", '{"query": "part 1", "summarize": false}', env=env
    )
    assert re.search(r"part\W+1\W", found.stdout)  # the words found are marked


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_conversation_the_server_refuses_for_its_size_is_compacted_and_the_request_sent_again(
    cli: InProcessCli, wire: str
) -> None:
    """A conversation kept under a larger window (or a wrong model.context_length): taken up
    again, its first request is refused; it was bricked, every resume sending it again."""
    with FakeModelServer(responder=answer) as server:
        env = configure(cli, server, wire, model={"context_length": 128000})
        cli.subprocess_run("chat", input="".join(part(n) + "\n" for n in range(1, 5)), env=env)
    with FakeModelServer(responder=answer, context_limit=4500) as server:
        env = configure(cli, server, wire, model={"context_length": 128000})
        done = cli.run("run", "--continue", "--json", "what next?", env=env)
        requests = server.requests

    refused, summary_request, again = requests
    assert request_tokens(refused.body) > 4500
    assert summarising(summary_request)
    assert SUMMARY in sent(again)
    assert "what next?" in sent(again)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (compacted,) = [event for event in events if event["type"] == "compacted"]
    assert compacted["reason"] == "overflow"
    assert compacted["messages"] >= 4
    assert "part 1:" not in sent(again)
    assert events[-1]["stop"] == "answer"
    assert events[-1]["turns"] == 3  # the refused request, the summary's, the one sent again


def test_a_summary_that_cannot_be_written_drops_the_oldest_messages_saying_so(
    cli: InProcessCli,
) -> None:
    def refusing(request: RecordedRequest) -> FakeTurn:
        if summarising(request):
            return FakeTurn(error=400, error_message="summaries are refused here")
        return answer(request)

    with FakeModelServer(responder=refusing, context_limit=8000) as server:
        done = chat_five_parts(cli, server)
        requests = server.requests

    (line,) = [line for line in done.stderr.splitlines() if "oldest" in line]
    assert line.startswith("hermes: dropped the ")
    assert "summaries are refused here" in line
    assert "part 5:" in sent(requests[-1])
    assert all("part 1:" not in sent(request) for request in requests[-2:])
    assert done.returncode == 0


def test_a_cron_run_reading_long_files_is_compacted_mid_turn_keeping_calls_with_results(
    cli: InProcessCli,
) -> None:
    """Cron runs (and subagents) go through the same loop."""
    for number in range(1, 6):
        (cli.work / f"note{number}.txt").write_text(f"note {number}: {WORDS * 4}\n")

    def reading(request: RecordedRequest) -> FakeTurn:
        if summarising(request):
            return FakeTurn(text=SUMMARY)
        last = json.dumps(request.messages[-1])
        read = [n for n in range(1, 6) if f"note {n}:" in last]
        if read and read[-1] == 5:
            return FakeTurn(text="The five notes are lorem ipsum.")
        path = str(cli.work / f"note{read[-1] + 1 if read else 1}.txt")
        return FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": path})])

    with FakeModelServer(responder=reading, context_limit=8000) as server:
        env = configure(cli, server)
        cli.run(
            "cron",
            "create",
            "every 1h",
            "Sum up the notes",
            "--name",
            "notes",
            "--deliver",
            "stdout",
            env=env,
        )
        done = cli.run("cron", "run", "notes", env=env)
        requests = server.requests

    assert "The five notes are lorem ipsum." in done.stdout
    assert [request for request in requests if summarising(request)]
    assert all(orphans(request) == [] for request in requests)
    assert all(request_tokens(request.body) <= server.context_limit for request in requests)


def test_compact_in_a_chat_compacts_now_and_help_lists_it(cli: InProcessCli) -> None:
    with FakeModelServer(responder=answer) as server:
        env = configure(cli, server, model={"context_length": 128000}, agent={"compact_at": 0})
        lines = "/compact\n/help\n" + part(1) + "\n" + part(2) + "\n/compact\nand now?\n"
        done = cli.subprocess_run("chat", input=lines, env=env)
        requests = server.requests

    said = done.stderr.splitlines()
    assert "hermes: nothing to compact yet" in said
    assert any(line.strip().startswith("/compact ") for line in said)  # in /help's list
    (compacted,) = [line for line in said if line.startswith("hermes: compacted ")]
    assert compacted.startswith("hermes: compacted 2 messages (about ")
    _, _, summary_request, last = requests
    assert summarising(summary_request)
    assert "part 1:" in summary_request.messages[-1]["content"]
    assert SUMMARY in sent(last)
    assert "part 1:" not in sent(last)
    assert "part 2:" in sent(last)


def test_the_compaction_record_keeps_no_secret_of_the_messages_it_copies(
    cli: InProcessCli,
) -> None:
    secret = "sk-proj-" + "A1b2C3d4" * 6
    with FakeModelServer(responder=answer) as server:
        env = configure(cli, server, model={"context_length": 128000}, agent={"compact_at": 0})
        lines = f"{part(1)}\nmy key is {secret}\n/compact\n"
        cli.subprocess_run("chat", input=lines, env=env)

    (compaction,) = [record for record in records(cli) if record["type"] == "compaction"]
    assert compaction["kept"][0]["content"].startswith("my key is [redacted")
    (transcript,) = (cli.home / "sessions").glob("*.jsonl")
    assert secret not in transcript.read_text(encoding="utf-8")


def test_a_request_refused_again_once_compacted_ends_the_turn_saying_what_to_do(
    cli: InProcessCli,
) -> None:
    with FakeModelServer(responder=answer) as server:
        env = configure(cli, server, model={"context_length": 128000})
        cli.subprocess_run("chat", input="".join(part(n) + "\n" for n in range(1, 5)), env=env)
    with FakeModelServer(responder=answer, context_limit=5000) as server:
        env = configure(cli, server, model={"context_length": 128000})
        done = cli.run("run", "--continue", "and this: " + WORDS * 20, env=env, ok=False)
        requests = server.requests

    _, summary_request, refused_again = requests  # compacted once, sent once more
    assert summarising(summary_request)
    assert SUMMARY in sent(refused_again)
    assert done.returncode == 1
    assert "hermes: compacted " in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("hermes: error:")]
    assert "longer than the model's context window" in line
    assert "/compact" in line


def test_the_summary_request_counts_in_max_turns_and_no_request_passes_it(
    cli: InProcessCli,
) -> None:
    """With ``agent.max_turns: 1`` a turn that needs compacting first spends its one request on
    the summary and ends there, at the limit, instead of sending a second request."""
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server, agent={"max_turns": 1})
        lines = "".join(part(number) + "\n" for number in range(1, 7))
        done = cli.subprocess_run("chat", input=lines, env=env, ok=False)
        requests = server.requests

    assert len(requests) == 6, [summarising(request) for request in requests]  # one a line
    assert summarising(requests[-1])  # the last line's turn spent its one request on it
    stops = done.stderr.count("stop: max_turns: the limit of 1 model turns was reached")
    assert stops == len([request for request in requests if summarising(request)])
    assert done.returncode == 3


def test_a_forged_compaction_record_keeping_a_result_without_its_call_sends_no_orphan(
    cli: InProcessCli,
) -> None:
    """A transcript edited by hand (or by two processes at once) whose compaction record keeps a
    tool result without the call it answers: taken up again, the result is left out of what is
    sent (both wires refuse a result without its call, every request of the conversation), and
    the person's messages stay."""
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server)
        cli.subprocess_run("chat", input="hello\n", env=env)
        (transcript,) = (cli.home / "sessions").glob("*.jsonl")
        forged = {
            "type": "compaction",
            "time": 0,
            "replaced": 2,
            "summary": {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{SUMMARY}"},
            "kept": [
                {"role": "tool", "content": "42", "tool_call_id": "call_gone", "name": "calc"},
                {"role": "user", "content": "what was the result?"},
            ],
        }
        with transcript.open("a", encoding="utf-8") as file:
            file.write(json.dumps(forged) + "\n")
        cli.run("run", "--continue", "and now?", env=env)
        last = server.requests[-1]

    assert orphans(last) == []
    assert SUMMARY in sent(last)
    assert "what was the result?" in sent(last)
    assert "and now?" in sent(last)


def test_a_resumed_summary_that_alone_overflows_the_window_is_compacted_again(
    cli: InProcessCli,
) -> None:
    """A compaction record whose summary alone is past the window (forged, or an enormous
    summary a model wrote): taken up again, every request overflowed, and only ``/compact``
    in ``hermes chat`` could mend it; the summary is now summarised again before the
    request."""
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server)
        cli.subprocess_run("chat", input="hello\n", env=env)
        (transcript,) = (cli.home / "sessions").glob("*.jsonl")
        forged = {
            "type": "compaction",
            "time": 0,
            "replaced": 2,
            "summary": {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{WORDS * 40}"},
            "kept": [
                {"role": "user", "content": "what was it?"},
                {"role": "assistant", "content": "It was lorem ipsum."},
            ],
        }
        with transcript.open("a", encoding="utf-8") as file:
            file.write(json.dumps(forged) + "\n")
        done = cli.run("run", "--continue", "--json", "and now?", env=env, ok=False)
        requests = server.requests[1:]

    assert done.returncode == 0, done.stderr
    summary_request, last = requests
    assert summarising(summary_request)
    assert request_tokens(summary_request.body) <= server.context_limit
    assert SUMMARY in sent(last)
    assert "what was it?" in sent(last)
    assert "and now?" in sent(last)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (compacted,) = [event for event in events if event["type"] == "compacted"]
    assert compacted["reason"] == "size"

"""``hermes run --model NAME`` and ``hermes chat --model NAME``: a real ``hermes`` process sends
its requests to model NAME of the configured provider (the bundled ``openai`` one against the
test kit's ``FakeModelServer``), nothing saved in the configuration.

Checked: the model the server was asked for; the transcript's header naming NAME (what
``--continue``, ``--resume`` and ``session_search`` read); ``-m``; a conversation taken up again
going on with NAME, said as ``/model`` says it; a blank name or one of two words refused as
``/model`` refuses them (exit 2, nothing sent); ``chat``'s ``/model`` showing NAME."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

CONFIGURED = "fake-model"


class Served:
    """A home whose ``model`` section is the ``openai`` provider at ``server``."""

    def __init__(self, cli: HermesCli, server: FakeModelServer) -> None:
        self.cli = cli
        self.server = server
        model = {"provider": "openai", "model": CONFIGURED, "base_url": server.openai_base_url}
        cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        self.env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")

    def run(self, *args: str, ok: bool = True, input: str | None = None) -> Any:
        return self.cli.run(*args, ok=ok, input=input, env=self.env)

    def models(self) -> list[str]:
        return [request.body["model"] for request in self.server.requests]

    def headers(self) -> list[dict[str, Any]]:
        """The header lines of the one transcript, in order."""
        [path] = (self.cli.home / "sessions").glob("*.jsonl")
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [record for record in records if record["type"] == "session"]


@pytest.fixture
def served(hermes_cli: HermesCli) -> Iterator[Served]:
    with FakeModelServer() as server:
        yield Served(hermes_cli, server)


@pytest.mark.parametrize("option", ["--model", "-m"])
def test_run_model_sends_the_requests_to_that_model_and_the_transcript_names_it(
    served: Served, option: str
) -> None:
    served.server.add(FakeTurn(text="Hi from the other one."))
    config = served.cli.config.read_text(encoding="utf-8")
    done = served.run("run", option, "other-model", "hello")
    assert done.stdout == "Hi from the other one.\n"
    assert served.models() == ["other-model"]
    assert [header["model"] for header in served.headers()] == ["other-model"]
    assert served.cli.config.read_text(encoding="utf-8") == config  # nothing saved


def test_run_continue_with_model_goes_on_with_it_and_says_so(served: Served) -> None:
    served.server.add(FakeTurn(text="First."))
    served.run("run", "hello")
    served.server.add(FakeTurn(text="Second."))
    done = served.run("run", "--continue", "--model", "other-model", "and again")
    assert served.models() == [CONFIGURED, "other-model"]
    assert [header["model"] for header in served.headers()] == [CONFIGURED, "other-model"]
    assert "hermes: it was with fake-model; it goes on with other-model" in done.stderr
    assert (
        "the model is now other-model (provider openai) for this run, not saved in the "
        "configuration; a name openai does not know is its error at the next request"
    ) in done.stderr


def test_run_model_of_the_transcript_says_nothing_more(served: Served) -> None:
    served.server.add(FakeTurn(text="First."))
    served.run("run", "--model", "other-model", "hello")
    served.server.add(FakeTurn(text="Second."))
    done = served.run("run", "--continue", "--model", "other-model", "and again")
    assert served.models() == ["other-model", "other-model"]
    assert "it goes on with" not in done.stderr
    assert "the model is now" not in done.stderr


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        ("two words", "--model takes one name: --model NAME"),
        ("  ", "--model takes one name: --model NAME"),
        # the one rule of a model name, a cron job's too: at most 200 characters, printable
        ("m" * 201, "--model takes one name (201 characters; at most 200): --model NAME"),
        ("bad\x1bname", "--model takes one name (it holds a control character): --model NAME"),
        # hermes run -m --json "..." with the name forgotten: no model is named as an option is
        ("--json", "--model takes a model's name, not the option '--json': --model NAME"),
        # hermes run -m - (the prompt from stdin) with the name forgotten: '-' is no option
        ("-", "--model takes a model's name, not '-': --model NAME"),
    ],
)
@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_model_name_model_refuses_is_a_usage_error(
    served: Served, command: str, name: str, refusal: str
) -> None:
    prompt = ["hello"] if command == "run" else []
    done = served.run(command, "--model", name, *prompt, ok=False, input="hello\n")
    assert done.returncode == 2
    assert refusal in done.stderr
    assert served.server.requests == []


def test_chat_model_sends_every_request_to_it_and_model_shows_it(served: Served) -> None:
    served.server.add(FakeTurn(text="One."), FakeTurn(text="Two."))
    done = served.run("chat", "--model", "other-model", input="hello\n/model\nagain\n")
    assert served.models() == ["other-model", "other-model"]
    assert "hermes: model other-model of the provider openai" in done.stderr
    assert [header["model"] for header in served.headers()] == ["other-model"]


def test_chat_resume_with_model_goes_on_with_it_and_says_so(served: Served) -> None:
    served.server.add(FakeTurn(text="First."))
    served.run("chat", input="hello\n")
    [path] = (served.cli.home / "sessions").glob("*.jsonl")
    served.server.add(FakeTurn(text="Second."))
    done = served.run("chat", "--resume", path.stem, "-m", "other-model", input="again\n")
    assert served.models() == [CONFIGURED, "other-model"]
    assert "it goes on with other-model" in done.stderr
    assert "the model is now other-model (provider openai) for this chat" in done.stderr

"""The size of the next request, which decides when a conversation is compacted, starts from
what the server counted of the last one (its reported input tokens, cached or not) and adds
the estimate of only what came since; without such a count (a server that reports none, a
conversation just compacted or taken up again, tools that shrank) the whole request is
estimated. The real ``hermes chat`` (a subprocess), the bundled providers against the test
kit's ``FakeModelServer``, whose reported usage is its own count of each request (no model
runs here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_model_wire import request_tokens
from tests.agent.test_compaction import answer, configure, summarising

JAPANESE = "この部分の内容を読んで、数字と要点をすべて覚えておいてください。" * 8
"""About 250 characters of Japanese: a token a character by the estimate, about one and a half
to the server (the fake counts the JSON escape of each), as real tokenizers count many of
them."""


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.mark.subprocess
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_chat_the_server_counts_larger_than_estimated_is_compacted_before_a_refusal(
    cli: InProcessCli, wire: str
) -> None:
    """Each answer reports the server's count: the estimate of the next request starts from
    it, so the conversation is compacted before a request passes the window, not after the
    server refused one (a wasted request, and a turn that looked failed)."""
    lines = "".join(f"第{number}部分: {JAPANESE}\n" for number in range(1, 16))
    with FakeModelServer(responder=answer, context_limit=8000) as server:
        env = configure(cli, server, wire)
        done = cli.subprocess_run("chat", input=lines, env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr
    refused = [request.number for request in requests if request_tokens(request.body) > 8000]
    assert refused == []
    assert [request for request in requests if summarising(request)]

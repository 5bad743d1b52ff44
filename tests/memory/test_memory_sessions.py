"""The memory across sessions, as the model sees it (the scripted model server's records), and
the file provider under a writer killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Config, Environment
from hermes_core.agent import Agent, Finished
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, make_host

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "plugins_builtin" / "memory"


def system_prompt(body: Any) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


@pytest.mark.slow  # the OpenAI SDK's import and a host over the bundled plugins
async def test_the_snapshot_is_in_the_next_sessions_prompt_and_unchanged_within_a_session(
    bundled_env: Environment,
) -> None:
    remember = {"action": "add", "target": "user", "content": "The user's name is Ada"}
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("memory", remember)]),
        FakeTurn(text="Noted."),
        FakeTurn(text="Hello again, Ada."),
    ]
    with FakeModelServer(turns) as server:
        config = Config.model_validate(
            {"model": {"provider": "openai", "model": "fake", "base_url": server.openai_base_url}}
        )
        env = replace(bundled_env, variables={**bundled_env.variables, "OPENAI_API_KEY": "k"})
        host = make_host(config, env)
        agent = Agent.from_host(host)
        try:
            for text in ("My name is Ada, remember it.", "Hello!"):
                async with host.session() as session:
                    events = [event async for event in agent.conversation(session).send(text)]
                    assert isinstance(events[-1], Finished)
                    assert events[-1].stop == "answer"
        finally:
            await agent.aclose()
            host.close()
        first, second, third = (system_prompt(request.body) for request in server.requests)
    assert first == second  # the memory written mid-session leaves this session's prompt alone
    assert "Ada" not in first
    assert third.startswith(agent.system_prompt)
    assert (
        "## About the user (user: 22/1375 characters, 1 entry)\n§ The user's name is Ada" in third
    )


WRITER = """
import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("bundled_memory", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
provider = module.FileMemoryProvider(Path(sys.argv[1]))
entries = []
for number in range(200):
    entries.append(f"entry {number}: " + "x" * 200)
    provider.save("memory", entries)
    print(number, flush=True)
"""


@pytest.mark.slow
def test_a_writer_killed_during_200_writes_leaves_a_valid_file(tmp_path: Path) -> None:
    from tests.memory.bundled import bundled

    plugin = bundled("memory")
    store = tmp_path / "memories"
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    writer = subprocess.Popen(
        [sys.executable, str(script), str(store), str(BUNDLED / "__init__.py")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    for line in writer.stdout:
        if int(line) >= 60:  # well inside the 200 writes
            os.kill(writer.pid, signal.SIGKILL)
            break
    writer.wait()
    writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    entries = plugin.FileMemoryProvider(store).load("memory")
    assert len(entries) >= 61
    assert entries == [f"entry {n}: " + "x" * 200 for n in range(len(entries))]
    json.dumps(entries)  # plain text all through

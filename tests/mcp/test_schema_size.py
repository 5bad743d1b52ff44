"""A tool whose schema is megabytes: one careless or hostile MCP server (a real one here,
``servers/badtools.py``, listing a tool whose ``inputSchema`` is 3 MB of long property
descriptions) must not fill the model's context through ``tool_describe``, nor blow up every
request as a core tool. Such a tool is skipped at its listing with one warning naming the
server, the tool and the size, as a schema nested too deeply is; the server's other tools
register."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import FakeModelServer, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

BADTOOLS = Path(__file__).resolve().parent / "servers" / "badtools.py"
MAX_SCHEMA_CHARACTERS = 131_072
"""The cap docs/mcp.md states."""


def huge_schema() -> dict[str, Any]:
    """About 3 MB as JSON: 3,000 properties, each described in 1,000 characters."""
    return {
        "type": "object",
        "properties": {
            f"field_{index}": {"type": "string", "description": "d" * 1_000}
            for index in range(3_000)
        },
    }


SMALL = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "ok", "description": "Echo a text.", "inputSchema": SMALL},
    {"name": "huge", "description": "A tool of a careless server.", "inputSchema": huge_schema()},
]
HUGE_SIZE = len(json.dumps(TOOLS[1]["inputSchema"], separators=(",", ":"), ensure_ascii=False))


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _configure(cli: InProcessCli, tmp: Path, **config: Any) -> None:
    listing = tmp / "listing.json"
    listing.write_text(json.dumps(TOOLS), encoding="utf-8")
    server = {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
    cli.config.write_text(json.dumps({"mcp_servers": {"big": server}, **config}), "utf-8")


def _one_size_warning(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if "'huge'" in line]
    assert len(lines) == 1, stderr[-3000:]
    (line,) = lines
    assert "MCP server 'big'" in line
    assert f"{HUGE_SIZE:,}" in line
    assert f"{MAX_SCHEMA_CHARACTERS:,}" in line
    assert "skipped" in line


def test_the_cap_is_far_below_the_huge_schema_and_far_above_real_ones() -> None:
    # The largest real schema measured (docs/mcp.md): 27,955 characters.
    assert 4 * 27_955 < MAX_SCHEMA_CHARACTERS < HUGE_SIZE // 10


def test_tool_describe_of_a_3_mb_schema_says_not_found_and_warns_once(
    cli: InProcessCli, tmp_path: Path
) -> None:
    _configure(cli, tmp_path)

    done = cli.subprocess_run("tools", "describe", "--json", "mcp__big__huge", ok=False)
    described = cli.subprocess_run("tools", "describe", "--json", "mcp__big__ok")

    assert done.returncode == 1, done.stderr[-3000:]
    assert len(done.stdout) < 10_000
    assert json.loads(done.stdout)["not_found"] == ["mcp__big__huge"]
    _one_size_warning(done.stderr)
    assert json.loads(described.stdout)["tools"]["mcp__big__ok"]["parameters"] == SMALL


def test_a_core_tool_of_a_3_mb_schema_is_not_sent_to_the_model(
    cli: InProcessCli, tmp_path: Path
) -> None:
    with FakeModelServer([FakeTurn(text="Done.")]) as server:
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        visible = {"tool_search": {"always_visible": ["mcp__big__*"]}}
        _configure(cli, tmp_path, model=model, tools=visible)
        env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        done = cli.subprocess_run("run", "Echo hi.", env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Done." in done.stdout
    (request,) = requests
    sent = [tool["function"]["name"] for tool in request.body["tools"]]
    assert "mcp__big__ok" in sent
    assert "mcp__big__huge" not in sent
    assert len(json.dumps(request.body)) < 200_000
    _one_size_warning(done.stderr)

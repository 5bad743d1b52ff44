"""Progress and upstream questions through ``hermes serve``: an upstream MCP server's
``notifications/progress`` reach the served client under the client's own progress token, an
upstream ``elicitation/create`` form is forwarded to the served client (and its answer back to
the upstream server), a client that cannot answer gets a clear refusal naming the server, and
``terminal`` / ``execute_code`` report progress of their own. ``hermes serve`` run in this
process (``in_process.py``, as over stdio or streamable HTTP) driven by the ``mcp`` SDK client,
the upstream server the real child ``tests/mcp/servers/asking.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from in_process import http_in_process, in_process
from mcp import Client
from mcp.client.session import ClientRequestContext
from serving import BUNDLED, ServeHome

from hermes_core.testing import write_dir_plugin

ASKING = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "asking.py"


@pytest.fixture
def asking(served: ServeHome) -> ServeHome:
    served.write_config(
        mcp_servers={"asking": {"command": sys.executable, "args": [str(ASKING)]}},
        approvals={"allow": ["terminal", "execute_code"]},
    )
    return served


@pytest.fixture
def local(served: ServeHome) -> ServeHome:
    """No upstream server: ``terminal`` and ``execute_code`` report progress of their own."""
    served.write_config(approvals={"allow": ["terminal", "execute_code"]})
    return served


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


class Reports:
    """A progress callback keeping every report."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))

    @property
    def messages(self) -> list[str]:
        return [message or "" for _, _, message in self.seen]


class Answers:
    """An elicitation callback: records each form, answers ``content`` (accept)."""

    def __init__(self, content: dict[str, Any]) -> None:
        self.content = content
        self.forms: list[mcp_types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        self.forms.append(params)
        return mcp_types.ElicitResult(action="accept", content=self.content)


def call(
    served: ServeHome,
    transport: str,
    mode: Any,
    name: str,
    arguments: dict[str, Any],
    *,
    progress: Reports | None = None,
    answers: Answers | None = None,
) -> mcp_types.CallToolResult:
    """Call ``name`` once through a served hermes (as over stdio, or over http)."""

    async def run(client: Client) -> mcp_types.CallToolResult:
        with anyio.fail_after(60):
            return await client.call_tool(name, arguments, progress_callback=progress)

    async def main() -> mcp_types.CallToolResult:
        if transport == "stdio":
            async with in_process(served, mode=mode, elicitation_callback=answers) as client:
                return await run(client)
        async with (
            http_in_process(served) as server,
            server.client(mode=mode, elicitation_callback=answers) as client,
        ):
            return await run(client)

    return anyio.run(main)


TRANSPORTS = [
    pytest.param("stdio", "legacy", id="stdio-2025-11-25"),
    pytest.param("stdio", "auto", id="stdio-2026-07-28"),
    pytest.param("http", "auto", id="http-2026-07-28"),
]


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_upstream_progress_reaches_the_served_client(
    asking: ServeHome, transport: str, mode: Any
) -> None:
    reports = Reports()
    result = call(asking, transport, mode, "mcp__asking__count", {"steps": 3}, progress=reports)
    assert text_of(result) == "counted 3"
    # Every report, in order: none is held back (a slow client would get the newest only).
    assert reports.messages == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    assert [total for _, total, _ in reports.seen] == [3.0, 3.0, 3.0]


ASKING_TRANSPORTS = [
    pytest.param("stdio", "legacy", id="stdio-2025-11-25"),
    pytest.param("stdio", "auto", id="stdio-2026-07-28"),
]


@pytest.mark.parametrize(("transport", "mode"), ASKING_TRANSPORTS)
def test_an_upstream_form_is_forwarded_to_the_served_client_and_its_answer_goes_back(
    asking: ServeHome, transport: str, mode: Any
) -> None:
    answers = Answers({"name": "Grace", "color": "red"})
    result = call(
        asking, transport, mode, "mcp__asking__ask", {"question": "Who?"}, answers=answers
    )
    assert text_of(result) == 'accept {"color": "red", "name": "Grace"}'
    (form,) = answers.forms
    # Labelled: the person sees which server asks, and that hermes only passes it on.
    assert "MCP server 'asking'" in form.message
    assert form.message.endswith("Who?")
    assert form.requested_schema["properties"]["color"]["enum"] == ["red", "green", "blue"]


@pytest.mark.parametrize(("transport", "mode"), ASKING_TRANSPORTS)
def test_hermes_declares_form_elicitation_only_to_upstream_servers(
    asking: ServeHome, transport: str, mode: Any
) -> None:
    # hermes forwards forms and declines URL-mode requests: it declares only what it honours.
    result = call(asking, transport, mode, "mcp__asking__capabilities", {})
    assert text_of(result) == '{"form": {}}'


def test_a_client_without_elicitation_gets_a_refusal_naming_the_server(
    asking: ServeHome,
) -> None:
    result = call(asking, "stdio", "legacy", "mcp__asking__ask", {})
    text = text_of(result)
    assert text.startswith("decline")  # what the upstream server was told
    assert "MCP server 'asking' asked a question" in text
    assert "nobody could answer" in text


def test_terminal_reports_elapsed_time_and_output_to_the_served_client(
    local: ServeHome,
) -> None:
    reports = Reports()
    command = "for i in 1 2 3; do echo line $i; sleep 0.9; done"
    result = call(local, "stdio", "legacy", "terminal", {"command": command}, progress=reports)
    assert "line 3" in text_of(result)
    assert reports.seen, "no progress from terminal"
    progresses = [progress for progress, _, _ in reports.seen]
    assert progresses == sorted(set(progresses))  # increasing, as the spec requires
    assert any("line" in message and "s" in message for message in reports.messages)


def test_execute_code_reports_elapsed_time_calls_and_output_to_the_served_client(
    local: ServeHome,
) -> None:
    reports = Reports()
    code = (
        "import time\n"
        "from hermes_tools import read_file\n"
        "try:\n"
        "    read_file(path='nothing-here.txt')\n"
        "except Exception:\n"
        "    pass\n"
        "for i in range(3):\n"
        "    print('row', i, flush=True)\n"
        "    time.sleep(0.9)\n"
    )
    result = call(local, "stdio", "legacy", "execute_code", {"code": code}, progress=reports)
    assert "row 2" in text_of(result)
    assert reports.seen, "no progress from execute_code"
    assert any("1 tool call" in message for message in reports.messages), reports.messages
    assert any("row" in message for message in reports.messages), reports.messages


SLOW_PLUGIN = """
import time

from hermes_core.plugin import Tool, ToolAnnotations, ToolResult, hookimpl, report_progress


def slow(steps: int = 3) -> ToolResult:
    # A plain function: hermes runs it in a worker thread, and the reports cross back.
    for step in range(1, steps + 1):
        time.sleep(0.05)
        report_progress(step, steps, f"file {step} of {steps}")
    return ToolResult.text("slow done")


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            name="slow",
            description="Works slowly, reporting progress.",
            parameters={"type": "object", "properties": {"steps": {"type": "integer"}}},
            handler=slow,
            toolset="slowpoke",
            source_name="slowpoke",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
def test_a_plugin_tool_reports_progress_from_its_worker_thread(
    served: ServeHome, transport: str, mode: Any
) -> None:
    write_dir_plugin(served.home / "plugins", "slowpoke", SLOW_PLUGIN)
    served.write_config(plugins={"enabled": [*BUNDLED, "slowpoke"]})
    reports = Reports()
    result = call(served, transport, mode, "slow", {"steps": 3}, progress=reports)
    assert text_of(result) == "slow done"
    assert reports.messages[-1] == "file 3 of 3"
    assert [progress for progress, _, _ in reports.seen] == sorted(
        {progress for progress, _, _ in reports.seen}
    )

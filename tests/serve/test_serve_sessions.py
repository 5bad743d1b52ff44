"""Over stateless streamable HTTP each request runs in a hermes session of its own, and that
session ends once the request is answered: ``hermes_session_end`` observers run, so what a call
started in it (a browser, background processes) does not outlive the request. Over stdio the
connection is one session, started before its first call and ended when the client leaves.
Either way ``hermes_session_start`` observers run before the session's first call."""

from __future__ import annotations

import json

import anyio
from in_process import http_in_process, in_process
from serving import BUNDLED, ServeHome

from hermes_core.testing import write_dir_plugin

SESSIONS = """
import json
import uuid
from pathlib import Path

from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

LOG = Path(__file__).parent / "sessions.jsonl"


def _write(*entry):
    with LOG.open("a") as handle:
        handle.write(json.dumps(entry) + "\\n")


def remember(session) -> str:
    tag = session.state.setdefault("tag", "not started " + uuid.uuid4().hex)
    _write("call", tag)
    return tag


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            name="remember",
            description="Keep a tag in the session and answer it.",
            parameters={"type": "object", "properties": {}},
            handler=remember,
            toolset="sessions",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]


@hookimpl
def hermes_session_start(session):
    session.state["tag"] = uuid.uuid4().hex
    _write("start", session.state["tag"])


@hookimpl
def hermes_session_end(session):
    _write("end", session.state.get("tag"))
"""


def _records(served: ServeHome) -> list[tuple[str, str]]:
    log = served.home / "plugins" / "sessions" / "sessions.jsonl"
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]  # type: ignore[misc]


def test_each_stateless_http_request_ends_its_session(served: ServeHome) -> None:
    write_dir_plugin(served.home / "plugins", "sessions", source=SESSIONS)
    served.write_config(
        plugins={"enabled": [*BUNDLED, "sessions"]}, tools={"tool_search": {"enabled": False}}
    )

    async def main() -> list[str]:
        async with http_in_process(served) as server, server.client() as client:
            tags = []
            for _ in range(2):
                result = await client.call_tool("remember", {})
                assert not result.is_error
                tags.append(result.content[0].text)  # type: ignore[union-attr]
            return tags

    tags = anyio.run(main)
    records = _records(served)
    assert len(set(tags)) == 2  # a session a request
    for tag in tags:  # started before the call, ended after it
        assert records.index(("start", tag)) < records.index(("call", tag))
        assert records.index(("call", tag)) < records.index(("end", tag))


def test_the_stdio_connection_is_one_session_started_and_ended(served: ServeHome) -> None:
    write_dir_plugin(served.home / "plugins", "sessions", source=SESSIONS)
    served.write_config(
        plugins={"enabled": [*BUNDLED, "sessions"]}, tools={"tool_search": {"enabled": False}}
    )

    async def main() -> list[str]:
        async with in_process(served) as client:
            await client.list_tools()
            tags = []
            for _ in range(2):
                result = await client.call_tool("remember", {})
                assert not result.is_error
                tags.append(result.content[0].text)  # type: ignore[union-attr]
            assert [kind for kind, _ in _records(served)] == ["start", "call", "call"]
            return tags

    tags = anyio.run(main)
    (tag,) = set(tags)  # one session for the connection
    assert _records(served) == [("start", tag), ("call", tag), ("call", tag), ("end", tag)]

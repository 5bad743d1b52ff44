"""The test MCP servers over stdio are written on the standard library (``servers/stdio_mcp.py``'s
loop): ``toolbox.py``, the suite's most started one, ``badtools.py``, ``asking.py`` and
``serve/servers/late.py``. These check that each answers as the SDK's low-level server with the
same tools does (its ``--sdk`` twin), message for message on the wire (the toolbox also tool for
tool through the host; ``asking.py`` with its progress notifications and its forms, asked of the
client and answered), so the tests that use them check the host against what the SDK's servers
send."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
from realservers import BADTOOLS, TOOLBOX, ToolsSeen, call, toolbox_entry

from hermes_core._mcp import McpSupervisor
from hermes_core._paths import Environment

pytestmark = pytest.mark.subprocess

LATE = Path(__file__).resolve().parents[1] / "serve" / "servers" / "late.py"
ASKING = Path(__file__).resolve().parent / "servers" / "asking.py"

_META = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "check", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}


def _request(ident: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, **_META}}


def _call(ident: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return _request(ident, "tools/call", name=tool, arguments=arguments)


_CURRENT = [
    _request(1, "server/discover"),
    _request(2, "tools/list"),
    _request(3, "tools/list", cursor="2"),
    _request(4, "tools/list", cursor="6"),
    _call(5, "echo", text="hello"),
    _call(6, "add", a=2, b=40),
    _call(7, "fail"),
    _call(8, "env", name="HERMES_TOOLBOX_CHECK"),
    _call(9, "env"),  # no name: the handler raises
    _call(10, "header", name="x"),
    _call(11, "no_such_tool"),
    _request(12, "resources/list"),
    _request(13, "ping"),
    _request(14, "tools/list", cursor="not a number"),
]


def _dated(version: str, *requests: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A client of a dated ``version``: ``initialize``, then ``requests`` (method, params)."""
    hello = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "check", "version": "1"},
    }
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *(
            {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
            for ident, (method, params) in enumerate(requests, start=2)
        ),
    ]


_DATED = _dated("2025-06-18", ("tools/list", {}), ("tools/call", {"name": "add", "arguments": {}}))
_LISTING = [
    {"name": "ok", "inputSchema": {"type": "object", "properties": {}}},
    {"description": "nameless", "inputSchema": {"type": "object"}},
    {"name": "nope", "inputSchema": "nope"},
    {"name": "req", "inputSchema": {"type": "object", "required": "x"}, "extra": [1, None]},
]
_BADTOOLS_CURRENT = [
    _request(1, "server/discover"),
    _request(2, "tools/list"),
    _request(3, "tools/list", cursor="2"),
    _call(4, "ok"),
    _call(5, "nope", word="aa"),
    _request(6, "prompts/list"),
]
_BADTOOLS_LEGACY = [
    _request(1, "server/discover"),
    *_dated(
        "2025-11-25",
        ("tools/list", {}),
        ("tools/call", {"name": "req", "arguments": {"x": 1}}),
        ("resources/list", {}),
    ),
]
_LATE_CURRENT = [
    _request(1, "server/discover"),
    _request(2, "tools/list"),
    _call(3, "late_echo", text="hello"),
    _call(4, "late_echo"),
    _request(5, "resources/list"),
]
_LATE_DATED = _dated(
    "2025-11-25",
    ("tools/list", {}),
    ("tools/call", {"name": "late_echo", "arguments": {"text": "hi"}}),
)


_FORM_ANSWERS = {
    "Who?": {"action": "accept", "content": {"name": "Bo", "color": "red", "sure": True}},
    "Log in": {"action": "accept", "content": {"password": "hunter2"}},
    "Who are you?": {"action": "decline"},
}
_FORMS = {"elicitation": {"form": {}}}


def _asking_call(
    ident: int, tool: str, capabilities: Any = _FORMS, **params: Any
) -> dict[str, Any]:
    meta = {**_META["_meta"], "io.modelcontextprotocol/clientCapabilities": capabilities}
    meta.update(params.pop("_meta", {}))
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": tool, **params, "_meta": meta},
    }


_ASKING_CURRENT = [
    _request(1, "server/discover"),
    _request(2, "tools/list"),
    _asking_call(3, "count", arguments={"steps": 2}, _meta={"progressToken": 7}),
    _asking_call(4, "count", arguments={"steps": 1}),
    _asking_call(5, "capabilities", arguments={}),
    _asking_call(6, "capabilities", {"elicitation": {"form": {"x": 1}, "url": {}}}, arguments={}),
    _asking_call(7, "capabilities", {}, arguments={}),
    _asking_call(8, "ask", arguments={"question": "Who?"}),
    _asking_call(
        9,
        "ask",
        arguments={"question": "Who?"},
        inputResponses={"form": _FORM_ANSWERS["Who?"]},
        requestState="asked",
    ),
    _asking_call(10, "ask", {}, arguments={}),
    _asking_call(11, "ask_secret", {}, arguments={}),
    _asking_call(12, "ask_secret", arguments={}, inputResponses={"form": {"action": "decline"}}),
    _asking_call(13, "nope", arguments={}),
]


def _asking_dated(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    progress = {"_meta": {"progressToken": "t"}}
    calls = [
        ("tools/call", {"name": "count", "arguments": {"steps": 2}, **progress}),
        ("tools/call", {"name": "capabilities", "arguments": {}}),
        ("tools/call", {"name": "ask", "arguments": {"question": "Who?"}}),
        ("tools/call", {"name": "ask", "arguments": {}}),
        ("tools/call", {"name": "ask_secret", "arguments": {}}),
        ("ping", {}),
    ]
    messages = _dated("2025-11-25", ("tools/list", {}), *calls)
    messages[0]["params"]["capabilities"] = capabilities
    return messages


def _conversation(flags: list[str], messages: list[dict[str, Any]]) -> list[Any]:
    """Every message the server run with ``flags`` writes for ``messages``, sent one at a time:
    until the answer to each request, the notifications before it and the requests it sends
    the client, each answered from :data:`_FORM_ANSWERS` by the form's message."""
    written = []
    with _started(flags, {"PATH": "/usr/bin:/bin"}) as (stdin, stdout):
        for message in messages:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
            while "id" in message:
                line = json.loads(stdout.readline())
                written.append(line)
                if "method" in line and "id" in line:
                    reply = _FORM_ANSWERS[line["params"]["message"]]
                    stdin.write(json.dumps({"jsonrpc": "2.0", "id": line["id"], "result": reply}))
                    stdin.write("\n")
                    stdin.flush()
                elif line.get("id") == message["id"]:
                    break
    return written


def _exchange(flags: list[str], messages: list[dict[str, Any]]) -> list[Any]:
    """Each answer of the server run with ``flags`` (the toolbox's unless they name another
    script) to ``messages``, sent one at a time."""
    env = {"HERMES_TOOLBOX_CHECK": "set here", "PATH": "/usr/bin:/bin"}
    answers = []
    with _started(flags, env) as (stdin, stdout):
        for message in messages:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
            if "id" in message:
                answers.append(json.loads(stdout.readline()))
    return answers


@contextmanager
def _started(
    flags: list[str], env: dict[str, str] | None = None
) -> Iterator[tuple[IO[str], IO[str]]]:
    """The server with ``flags`` and its stdin and stdout; at the end its stdin is closed, and
    it must end by itself with status 0."""
    script = [] if flags and flags[0].endswith(".py") else [str(TOOLBOX)]
    with subprocess.Popen(
        [sys.executable, *script, *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        try:
            yield server.stdin, server.stdout
            server.stdin.close()
            assert server.wait(timeout=10) == 0
        finally:
            server.kill()


@pytest.mark.parametrize("messages", [_CURRENT, _DATED], ids=["2026-07-28", "2025-06-18"])
def test_the_stdlib_server_answers_as_the_sdk_server_does(messages: list[dict[str, Any]]) -> None:
    assert _exchange([], messages) == _exchange(["--sdk"], messages)


@pytest.mark.parametrize(
    ("legacy", "messages"),
    [([], _BADTOOLS_CURRENT), (["--legacy"], _BADTOOLS_LEGACY)],
    ids=["2026-07-28", "legacy-2025-11-25"],
)
def test_the_stdlib_badtools_server_answers_as_the_sdk_one_does(
    tmp_path: Path, legacy: list[str], messages: list[dict[str, Any]]
) -> None:
    listing = tmp_path / "listing.json"
    listing.write_text(json.dumps(_LISTING), encoding="utf-8")
    flags = [str(BADTOOLS), str(listing), *legacy]
    answers = _exchange(flags, messages)
    assert answers == _exchange([*flags, "--sdk"], messages)
    listed = next(
        answer["result"]["tools"] for answer in answers if "tools" in answer.get("result", {})
    )
    assert listed == _LISTING


@pytest.mark.parametrize("messages", [_LATE_CURRENT, _LATE_DATED], ids=["2026-07-28", "2025-11-25"])
def test_the_stdlib_late_server_answers_as_the_sdk_one_does(
    tmp_path: Path, messages: list[dict[str, Any]]
) -> None:
    ready = tmp_path / "ready"
    ready.touch()
    assert _exchange([str(LATE), str(ready)], messages) == _exchange(
        [str(LATE), str(ready), "--sdk"], messages
    )


@pytest.mark.parametrize(
    "messages",
    [_ASKING_CURRENT, _asking_dated(_FORMS), _asking_dated({})],
    ids=["2026-07-28", "2025-11-25", "2025-11-25-no-forms"],
)
def test_the_stdlib_asking_server_answers_and_asks_as_the_sdk_one_does(
    messages: list[dict[str, Any]],
) -> None:
    written = _conversation([str(ASKING)], messages)
    assert written == _conversation([str(ASKING), "--sdk"], messages)
    methods = [line.get("method") for line in written]
    assert "notifications/progress" in methods
    if messages is not _ASKING_CURRENT and messages[0]["params"]["capabilities"]:
        assert methods.count("elicitation/create") == 3  # asked of the client, and answered
    results = [line.get("result", {}).get("resultType") for line in written]
    assert ("input_required" in results) == (messages is _ASKING_CURRENT)


def test_the_late_server_reads_nothing_until_its_file_exists(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    with _started([str(LATE), str(ready)]) as (stdin, stdout):
        stdin.write(json.dumps(_request(1, "server/discover")) + "\n")
        stdin.flush()
        waiting, _, _ = select.select([stdout], [], [], 1.0)
        assert waiting == []  # no answer while the file is missing
        ready.touch()
        assert json.loads(stdout.readline())["result"]["supportedVersions"] == ["2026-07-28"]


@pytest.mark.parametrize("flags", [[], ["--sdk"]], ids=["stdlib", "sdk"])
def test_a_cancelled_call_is_not_answered_and_others_are_meanwhile(flags: list[str]) -> None:
    messages = [
        _request(1, "server/discover"),
        _call(2, "sleep", seconds=1.5),
        _call(3, "echo", text="meanwhile"),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
        _call(4, "echo", text="after"),
    ]
    with _started(flags) as (stdin, stdout):
        stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        stdin.flush()
        answered = [json.loads(stdout.readline())["id"] for _ in range(3)]
        time.sleep(2.5)  # past the sleep's 1.5 s: a call not cancelled would be answered by now
        stdin.close()
        rest = stdout.read()
    # Calls run side by side: 3 and 4 may be answered in either order (under load, 4 first).
    assert (sorted(answered), rest) == ([1, 3, 4], "")


@pytest.mark.anyio
async def test_the_host_sees_the_same_tools_and_results_from_both(env: Environment) -> None:
    seen = ToolsSeen()
    sdk = toolbox_entry(args=[str(TOOLBOX), "--sdk"])
    async with McpSupervisor({"lean": toolbox_entry(), "sdk": sdk}, env, on_tools_changed=seen):
        shown = {}
        for server in ("lean", "sdk"):
            tools = [seen.tool(name) for name in seen.names(server)]
            listed = [
                (t.name.split("__")[-1], t.description, t.parameters, t.annotations) for t in tools
            ]
            results = [
                await call(seen.tool(f"mcp__{server}__{name}"), **arguments)
                for name, arguments in (
                    ("echo", {"text": "hi"}),
                    ("add", {"a": 1, "b": 2}),
                    ("fail", {}),
                )
            ]
            answered = [(r.text_content, r.structured, r.is_error, r.error_code) for r in results]
            shown[server] = (listed, answered)
    assert shown["lean"] == shown["sdk"]
    assert len(shown["lean"][0]) == 7

"""Over stdio nothing but protocol reaches stdout: a plugin that prints while the host starts
and while its tool runs is heard on stderr, and every stdout line is a JSON-RPC message."""

from __future__ import annotations

import json
import subprocess

import pytest
from serving import ServeHome

from hermes_core.testing import write_dir_plugin

NOISY = """
from hermes_core._hookspecs import hookimpl
from hermes_core._tools import Tool, ToolAnnotations


def shout():
    print("NOISE-WHILE-CALLED")
    return "done"


@hookimpl
def hermes_tools():
    print("NOISE-AT-START")
    return [
        Tool(
            name="shout",
            description="Print to stdout, then answer.",
            handler=shout,
            toolset="noisy",
            core=True,
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


def request(ident: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})


@pytest.mark.subprocess
def test_stdout_carries_only_protocol_while_plugins_print(served: ServeHome) -> None:
    write_dir_plugin(
        served.home / "plugins", "noisy", NOISY, manifest={"provides_tools": ["shout"]}
    )
    served.write_config(plugins={"enabled": ["approvals", "bm25", "noisy"]})
    messages = [
        request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        ),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "tools/list", {}),
        request(3, "tools/call", {"name": "shout", "arguments": {}}),
    ]
    lines: list[str] = []
    with served.cli.start("serve", stdin=subprocess.PIPE) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        try:
            for message in messages:
                process.stdin.write(message + "\n")
                process.stdin.flush()
                if '"id"' in message:
                    # The answer comes before the next request is sent; pytest's timeout guards.
                    lines.append(process.stdout.readline())
            process.stdin.close()
            lines.extend(process.stdout.read().splitlines())
            stderr = process.stderr.read()
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, stderr
    answers = {message["id"]: message for message in map(json.loads, filter(None, lines))}
    assert set(answers) == {1, 2, 3}
    assert "shout" in [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert answers[3]["result"]["content"][0]["text"] == "done"
    assert not any("NOISE" in line for line in lines)
    assert "NOISE-AT-START" in stderr
    assert "NOISE-WHILE-CALLED" in stderr

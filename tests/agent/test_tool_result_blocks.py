"""What the model reads of a tool result that holds more than text: the real ``hermes run``
against the test kit's ``FakeModelServer`` and npm's ``@modelcontextprotocol/server-everything``
(installed by the suite's setup, as ``tests/mcp/realservers.py`` says), whose tools answer with
an image, resource links and an embedded resource beside their text. Tool results go to the
model as text, so each block that is not text must be said there, not dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

EVERYTHING_JS = (
    Path(__file__).resolve().parents[2]
    / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


def _everything() -> dict[str, object]:
    node = shutil.which("node")
    if node is None or not EVERYTHING_JS.is_file():
        pytest.fail(
            f"node and {EVERYTHING_JS} are needed: npm install --prefix .cache/npm "
            "@modelcontextprotocol/server-everything (in the repository root)"
        )
    return {"command": node, "args": [str(EVERYTHING_JS), "stdio"]}


def test_images_resource_links_and_embedded_resources_are_said_to_the_model(
    hermes_cli: HermesCli,
) -> None:
    calls = [
        FakeToolCall("mcp__everything__get-tiny-image", {}),
        FakeToolCall("mcp__everything__get-resource-links", {"count": 2}),
        FakeToolCall(
            "mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 3}
        ),
    ]
    turns = [FakeTurn(tool_calls=calls), FakeTurn(text="Seen.")]
    with FakeModelServer(turns) as server:
        config = {
            "model": {
                "provider": "openai",
                "model": "fake-model",
                "base_url": server.openai_base_url,
            },
            "mcp_servers": {"everything": _everything()},
            "tools": {"tool_search": {"enabled": "off"}},
        }
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        env = hermes_cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        hermes_cli.run("run", "--json", "Show me the logo and the resources", env=env)
        requests = server.requests
    assert len(requests) == 2
    image, links, reference = (m["content"] for m in requests[1].messages if m["role"] == "tool")
    # Before: "Here's the image you requested:\nThe image above is the MCP logo." and no image.
    assert "[image: image/png, 4,033 bytes" in image
    assert image.index("[image:") < image.index("The image above")
    # Before: "Here are 2 resource links to resources available in this server:" and no link.
    assert "demo://resource/dynamic/blob/1" in links
    assert "Text Resource 2" in links
    assert "demo://resource/dynamic/text/2" in links
    # Before: the resource's own text ("Resource 3: This is a plaintext resource ...") was lost.
    assert "[resource demo://resource/dynamic/text/3" in reference
    assert "Resource 3: This is a plaintext resource" in reference

"""A temporary home for ``hermes run`` and ``hermes chat``: a directory plugin registering a fake
model (none can run here) named ``fake``, which answers from a JSON script and records each
request it gets, the config enabling it, and real MCP servers from ``tests/mcp/servers``.

The script is a list of answers: ``{"text": ..., "calls": [[name, arguments], ...]}`` (a turn),
``{"error": message, "status": 500, "retryable": false}`` (a failed request), or
``{"echo": true}`` (a final answer repeating the last message it was sent: what a tool gave).
An answer with ``"for": TEXT`` answers only a conversation whose first message holds TEXT (a
subagent's, say); each request takes the first answer that fits.
Options: ``chunk`` (characters per streamed piece) and ``delay`` (seconds before each piece).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.testing import HermesCli, write_dir_plugin

MCP_SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"
TOOLBOX = MCP_SERVERS / "toolbox.py"
ASKING = MCP_SERVERS / "asking.py"

FAKE_MODEL_SOURCE = '''
"""A fake model provider, ``fake``: answers from the JSON script ``script`` names and appends
each request to the JSON-lines file ``requests`` names (both in plugins.entries.fake_model)."""

import json
from pathlib import Path

from hermes_core.agent import Message, ModelError, ModelTurn
from hermes_core.plugin import ModelProviderSpec, hookimpl
from hermes_core.testing import FakeModelProvider, fake_turn


def _fake_model(context):
    settings = context.settings
    script = json.loads(Path(settings["script"]).read_text(encoding="utf-8"))
    answers = list(script["answers"])
    requests = Path(settings["requests"])

    def respond(request):
        with requests.open("a", encoding="utf-8") as out:
            messages = [message.to_json() for message in request.messages]
            tools = [tool.name for tool in request.tools]
            record = {
                "system": request.system,
                "messages": messages,
                "tools": tools,
                "model": request.model,
            }
            out.write(json.dumps(record) + "\\n")
        first = request.messages[0].content if request.messages else ""
        index = next(i for i, a in enumerate(answers) if a.get("for", "") in first)
        answer = answers.pop(index)
        if "error" in answer:
            return ModelError(
                answer["error"],
                provider="fake",
                model=context.model.model,
                status=answer.get("status"),
                retryable=answer.get("retryable", False),
            )
        if answer.get("echo"):
            return ModelTurn(Message("assistant", "heard: " + request.messages[-1].content))
        calls = [(name, arguments) for name, arguments in answer.get("calls", [])]
        return fake_turn(answer.get("text", ""), *calls)

    return FakeModelProvider(
        responder=respond, chunk=script.get("chunk", 8), delay=script.get("delay", 0.0)
    )


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("fake", factory=_fake_model, description="a fake model")]
'''


def turn(text: str = "", *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted model turn saying ``text`` and asking for ``calls``."""
    return {"text": text, "calls": [[name, arguments] for name, arguments in calls]}


@dataclass
class AgentHome:
    """A :class:`HermesCli` with the fake model plugin in its home."""

    cli: HermesCli

    def __post_init__(self) -> None:
        write_dir_plugin(self.cli.home / "plugins", "fake_model", FAKE_MODEL_SOURCE)

    @property
    def script_path(self) -> Path:
        return self.cli.root / "script.json"

    @property
    def requests_path(self) -> Path:
        return self.cli.root / "requests.jsonl"

    def setup(
        self, *answers: dict[str, Any], chunk: int = 8, delay: float = 0.0, **sections: Any
    ) -> None:
        """Write the model's script and ``config.yaml``: the fake model, then ``sections``."""
        script = {"answers": list(answers), "chunk": chunk, "delay": delay}
        self.script_path.write_text(json.dumps(script), encoding="utf-8")
        plugins = sections.pop("plugins", {})
        enabled = ["fake_model", *plugins.pop("enabled", [])]
        entries = {
            "fake_model": {"script": str(self.script_path), "requests": str(self.requests_path)},
            **plugins.pop("entries", {}),
        }
        config = {
            "model": {"provider": "fake", "model": "fake-1", "max_retries": 1},
            "plugins": {"enabled": enabled, "entries": entries, **plugins},
            **sections,
        }
        self.cli.config.write_text(json.dumps(config, indent=2), encoding="utf-8")

    def requests(self) -> list[dict[str, Any]]:
        """Every request the fake model got: its messages and tool names."""
        if not self.requests_path.exists():
            return []
        lines = self.requests_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    def activity(self) -> list[dict[str, Any]]:
        """The activity log's records."""
        path = self.cli.log_dir / "activity.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def toolbox_server() -> dict[str, Any]:
    """An ``mcp_servers`` entry running ``tests/mcp/servers/toolbox.py`` (a real MCP server)."""
    return {"command": sys.executable, "args": [str(TOOLBOX)]}


def asking_server() -> dict[str, Any]:
    """An ``mcp_servers`` entry running ``tests/mcp/servers/asking.py``, whose ``ask`` tool asks
    the client a form (elicitation) during the call."""
    return {"command": sys.executable, "args": [str(ASKING)]}

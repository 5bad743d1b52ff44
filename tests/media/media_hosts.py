"""A host with the bundled plugins (``media`` among them) and a temporary home, a tool called in
a session, and a run of one conversation of the bundled ``openai`` or ``anthropic`` provider
against a :class:`~hermes_core.testing.FakeModelServer` (a fake: no model runs here)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from hermes_core import Config, Environment, Host, ToolResult
from hermes_core.agent import Agent, AgentEvent, Finished
from hermes_core.testing import FakeModelServer, make_host


def media_host(
    env: Environment,
    *,
    server: FakeModelServer | None = None,
    wire: str = "openai",
    media: dict[str, Any] | None = None,
    enabled: tuple[str, ...] = (),
    variables: dict[str, str] | None = None,
) -> Host:
    """A host with the bundled plugins (and the plugins ``enabled`` names), the model (when
    ``server``) on ``wire``, ``plugins.entries.media`` set to ``media``, and more environment
    ``variables``."""
    plugins: dict[str, Any] = {"entries": {"media": media or {}}, "enabled": list(enabled)}
    sections: dict[str, Any] = {"plugins": plugins}
    if server is not None:
        url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
        sections["model"] = {"provider": wire, "model": "vision-model", "base_url": url}
    kept = {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    kept.update(variables or {})
    return make_host(Config.model_validate(sections), replace(env, variables=kept))


def call(host: Host, cwd: Path, tool: str, arguments: dict[str, Any]) -> ToolResult:
    """``tool`` called with ``arguments`` in a session in ``cwd`` (no conversation)."""
    return anyio.run(host.dispatch, tool, arguments, host.new_session(cwd=cwd))


def converse(host: Host, cwd: Path, prompt: str) -> list[AgentEvent]:
    """One conversation in ``cwd``: ``prompt`` sent, every event of the turn."""

    async def main() -> list[AgentEvent]:
        agent = Agent.from_host(host)
        conversation = agent.conversation(host.new_session(cwd=cwd))
        try:
            return [event async for event in conversation.send(prompt)]
        finally:
            await conversation.aclose()
            await agent.aclose()

    return anyio.run(main)


def final(events: list[AgentEvent]) -> Finished:
    """The turn's end."""
    last = events[-1]
    assert isinstance(last, Finished), events
    return last

"""What importing another agent's MCP servers into ``mcp_servers`` does: each server found is
added, changed (with ``--force``), unchanged or kept, and its literal secrets planned for
``$HERMES_HOME/.env``. Pure: ``hermes import-agent`` prints the plan and writes it; the readers
of each agent's files (:mod:`~hermes_core._mcp.claude_import`,
:mod:`~hermes_core._mcp.cursor_import`) find the servers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core._config import InvalidConfig, McpServerConfig
from hermes_core._mcp.claude_import import ClaudeServer, SkippedServer
from hermes_core._mcp.secrets import move_secrets

__all__ = ["ImportPlan", "PlannedServer", "plan_import"]

Action = Literal["add", "change", "unchanged", "keep"]


@dataclass(frozen=True)
class PlannedServer:
    """What the import does with one server: ``add``, ``change`` (replace, with ``--force``),
    ``unchanged`` (already the same) or ``keep`` (differs; kept without ``--force``)."""

    server: ClaudeServer
    action: Action


@dataclass
class ImportPlan:
    """Every server found, what will happen to each, and what was skipped or shadowed.

    ``secrets`` are the values to write to ``.env`` for the added and changed servers, and
    ``moved`` says, per server, which of its values became which ``${VAR}``.
    """

    servers: list[PlannedServer] = field(default_factory=list)
    skipped: list[SkippedServer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    secrets: dict[str, str] = field(default_factory=dict)
    moved: dict[str, dict[str, str]] = field(default_factory=dict)

    def entries(self) -> dict[str, dict[str, Any]]:
        """The entries to write: the added and changed servers, by name."""
        return {
            planned.server.name: planned.server.entry
            for planned in self.servers
            if planned.action in ("add", "change")
        }


def _comparable(entry: Any) -> Any:
    """An entry with the defaults hermes fills in, so ``args: []`` equals no ``args``."""
    if not isinstance(entry, Mapping):
        return entry
    try:
        return McpServerConfig.model_validate(entry).model_dump()
    except InvalidConfig:
        return dict(entry)


def plan_import(
    found: Mapping[str, ClaudeServer],
    skipped: Sequence[SkippedServer],
    existing: Mapping[str, Any],
    *,
    force: bool,
    environment: Mapping[str, str] | None = None,
    dotenv: Mapping[str, str] | None = None,
) -> ImportPlan:
    """What importing ``found`` into ``existing`` (the current ``mcp_servers``) does.

    Literal secrets are taken out of each entry first (``environment`` and ``dotenv`` are the
    variables set now, so a name already used for another value is not taken), so importing
    again compares equal. A server not configured yet is added. One configured with the same
    entry is unchanged. One configured differently is replaced only with ``force``; an existing
    entry's ``include``, ``exclude``, timeouts, ``enabled`` and ``cwd`` are hermes settings, so a
    forced change keeps them.
    """
    plan = ImportPlan(skipped=list(skipped))
    taken = dict(dotenv or {})
    for name, found_server in found.items():
        moved = move_secrets(name, found_server.entry, environment=environment or {}, dotenv=taken)
        server = ClaudeServer(name, moved.entry, found_server.source, found_server.notes)
        for note in server.notes:
            plan.warnings.append(f"{name} ({server.source.describe()}): {note}")
        current = existing.get(name)
        if current is None:
            action: Action = "add"
        else:
            merged = dict(server.entry)
            if isinstance(current, Mapping):
                for key in ("include", "exclude", "timeout", "connect_timeout", "enabled", "cwd"):
                    if key in current:
                        merged[key] = current[key]
            server = ClaudeServer(name, merged, server.source, server.notes)
            if _comparable(merged) == _comparable(current):
                action = "unchanged"
            else:
                action = "change" if force else "keep"
        plan.servers.append(PlannedServer(server, action))
        if action in ("add", "change"):
            plan.secrets.update(moved.to_save)
            taken.update(moved.to_save)
            if moved.references:
                plan.moved[name] = moved.references
    return plan

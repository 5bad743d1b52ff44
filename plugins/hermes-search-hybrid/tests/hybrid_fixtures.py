"""Helpers of the hybrid plugin's tests: a small catalog, the configuration that selects the
plugin, and backends built by a real host from the real model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from hermes_core import Config, Environment, Host
from hermes_core.search import ToolDocument

DISTRIBUTION = "hermes-core-search-hybrid"
DEV_SETS = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "sets.json"
"""The keyword dev sets of the repository (benchmarks/data/README.md)."""

MakeBackend = Callable[..., Any]
"""The ``make_backend`` fixture: ``make(**settings)`` builds a new backend."""


def names(hits: Any) -> list[str]:
    """The tool names of ``hits`` (search hits or ranked tools), in order."""
    return [hit.name for hit in hits]


TOOLS = (
    ToolDocument("send_sms", "Send an SMS text message", "messaging", ("to", "body")),
    ToolDocument("send_email", "Send an email to a recipient", "messaging", ("to", "subject")),
    ToolDocument("create_event", "Create an event in a calendar", "calendar", ("title", "start")),
    ToolDocument(
        "get_weather", "Get the current weather forecast for a city", "weather", ("city",)
    ),
    ToolDocument("list_files", "List the files in a directory", "files", ("path",)),
    ToolDocument("translate_text", "Translate text into another language", "language", ("text",)),
)
"""A catalog in which "buzz mom on her mobile" shares no word with any tool."""

MISMATCH_QUERY = "buzz mom on her mobile"


def hybrid_config(settings: Mapping[str, Any] | None = None, **tool_search: Any) -> dict[str, Any]:
    """The configuration that enables the plugin and selects its backend."""
    return {
        "plugins": {"enabled": ["hybrid"], "entries": {"hybrid": dict(settings or {})}},
        "tools": {"tool_search": {"backend": "hybrid", **tool_search}},
    }


def environment(root: Path) -> Environment:
    """hermes' places under ``root``, with the real bundled plugins (``bm25`` among them)."""
    (root / "work").mkdir(parents=True, exist_ok=True)
    return Environment(
        home=root / "home",
        cwd=root / "work",
        variables={
            "HERMES_CACHE_DIR": str(root / "cache"),
            "HERMES_LOG_DIR": str(root / "logs"),
            "HERMES_STRICT_PLUGINS": "1",
        },
    )


def build_backend(root: Path, settings: Mapping[str, Any] | None = None) -> Any:
    """The backend a host builds for ``tools.tool_search.backend: hybrid``, as at a start."""

    async def main() -> Any:
        async with Host(Config.model_validate(hybrid_config(settings)), environment(root)) as host:
            return host.tool_search.backend

    return anyio.run(main)


def write_catalog(path: Path, tools: tuple[ToolDocument, ...] = TOOLS) -> Path:
    """``tools`` as a catalog file in the eval format."""
    entries = [
        {
            "name": tool.name,
            "description": tool.description,
            "server": tool.group,
            "input_schema": {
                "type": "object",
                "properties": {name: {"type": "string"} for name in tool.parameter_names},
            },
        }
        for tool in tools
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path

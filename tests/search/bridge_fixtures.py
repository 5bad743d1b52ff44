"""Builders for the tool search tests: real registries, a real host (for its dispatcher), tools
of each source. Connectors are tested against the reference gateway in ``tests/connectors``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import BM25Index

from hermes_core._approvals.policy import Decision
from hermes_core._availability import Availability
from hermes_core._config import Config, ToolSearchConfig
from hermes_core._hookspecs import hookimpl
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core._specs import ApprovalPolicySpec, ToolCall
from hermes_core._tools import Tool, ToolResult
from hermes_core.search._backend import SearchBackend
from hermes_core.search._toolsearch import ToolSearch

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SAAS_CATALOG = DATA / "saas_openapi_catalog" / "catalog.json"
LIVEMCP_TOOLS = DATA / "livemcpbench_tools" / "tools.json"

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


class RegistryCatalog:
    """The real :class:`~hermes_core._registry.Registry` seen as a ``LiveTools``."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    @property
    def generation(self) -> int:
        return self.registry.generation

    def tools(self) -> list[Tool]:
        return list(self.registry)

    def get(self, name: str) -> Tool | None:
        return self.registry.get(name)


def echo(**arguments: Any) -> dict[str, Any]:
    """A handler that answers with the arguments it received."""
    return {"received": arguments}


def mcp_tool(
    server: str,
    short: str,
    description: str = "",
    parameters: Mapping[str, Any] | None = None,
    handler: Callable[..., Any] | None = echo,
) -> Tool:
    """A tool as the MCP layer registers it: ``mcp__<server>__<short>`` in toolset
    ``mcp-<server>``."""
    return Tool(
        name=f"mcp__{server}__{short}",
        description=description or f"{short.replace('_', ' ')} on {server}.",
        parameters=dict(parameters or OBJECT),
        handler=handler,
        toolset=f"mcp-{server}",
        source="mcp",
        source_name=server,
    )


def plugin_tool(plugin: str, name: str, description: str = "", **fields: Any) -> Tool:
    """A tool a plugin registers."""
    fields.setdefault("handler", echo)
    return Tool(
        name=name,
        description=description or f"{name.replace('_', ' ')}.",
        toolset=fields.pop("toolset", plugin),
        source="plugin",
        source_name=plugin,
        **fields,
    )


def core_tool(name: str, description: str = "", **fields: Any) -> Tool:
    """A built-in tool of the core working set."""
    fields.setdefault("handler", echo)
    return Tool(
        name=name,
        description=description or f"{name.replace('_', ' ')}.",
        toolset=fields.pop("toolset", "core"),
        source="builtin",
        source_name="core",
        core=True,
        **fields,
    )


def registry_of(tools: Iterable[Tool]) -> Registry:
    """A real registry holding ``tools``, each registered under its own source name."""
    registry = Registry()
    for tool in tools:
        registry.register(tool, owner=tool.source_name or "test")
    return registry


def catalog_entries(count: int, server: str = "svc") -> list[dict[str, Any]]:
    """``count`` catalog entries in the eval format."""
    return [
        {
            "name": f"{server}__op_{index:04d}",
            "server": server,
            "description": f"Operation number {index} of {server}.",
            "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
        }
        for index in range(count)
    ]


def make_env(tmp_path: Path) -> Environment:
    """An environment with a temporary home, working directory and log directory, and an empty
    bundled-plugins directory (the tests' own tools are the only ones)."""
    home = tmp_path / "home"
    cwd = tmp_path / "work"
    bundled = tmp_path / "bundled"
    for directory in (home, cwd, bundled):
        directory.mkdir(parents=True, exist_ok=True)
    variables = {
        "HERMES_HOME": str(home),
        "HERMES_LOG_DIR": str(tmp_path / "logs"),
        "HERMES_CACHE_DIR": str(tmp_path / "cache"),
        "HERMES_BUNDLED_PLUGINS": str(bundled),
        "HERMES_STRICT_PLUGINS": "1",
    }
    return Environment(home=home, cwd=cwd, variables=variables)


class AllowEverythingPolicy:
    """An approval policy that allows every call (what a trusting user configures)."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        return Decision.allow()


@dataclass
class FixtureTools:
    """A plugin providing the tests' tools and the allow-everything approval policy."""

    tools: Sequence[Tool]

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        return list(self.tools)

    @hookimpl
    def hermes_approval_policies(self) -> list[ApprovalPolicySpec]:
        return [ApprovalPolicySpec("allow-everything", lambda context: AllowEverythingPolicy())]


@dataclass
class HookRecorder:
    """A plugin recording the tool names its pre and post hooks see."""

    pre: list[str] = field(default_factory=list)
    post: list[str] = field(default_factory=list)
    arguments: list[dict[str, Any]] = field(default_factory=list)

    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall, session: Session) -> None:
        self.pre.append(call.name)
        self.arguments.append(dict(call.arguments))

    @hookimpl
    def hermes_post_tool_call(self, call: ToolCall, result: ToolResult, session: Session) -> None:
        self.post.append(call.name)


def real_host(
    tmp_path: Path, tools: Sequence[Tool], plugins: Sequence[tuple[str, object]] = ()
) -> Host:
    """A started host whose registry holds ``tools`` (and no bundled plugin's), with
    ``plugins`` registered for their hooks and a policy that allows every call; close it."""
    config = Config.model_validate({"approvals": {"policy": "allow-everything"}})
    host = Host(config, make_env(tmp_path))
    host.register(FixtureTools(tools), name="test-tools")
    for name, plugin in plugins:
        host.register(plugin, name=name)
    host.start()
    return host


def use_search(host: Host, search: ToolSearch) -> ToolSearch:
    """Make ``search`` (a tool search of the test's own over ``host.registry``) the one the
    host's dispatcher routes the bridge tools to: its bridge tools replace the host's in the
    registry."""
    with host.registry.batch():
        for tool in search.bridge_tools():
            host.registry.unregister(tool.name)
            host.registry.register(tool, owner="bridge", bridge=True)
    return search


def tool_search(
    registry: Registry,
    *,
    config: ToolSearchConfig | None = None,
    backend: SearchBackend | None = None,
    **options: Any,
) -> ToolSearch:
    """A :class:`ToolSearch` over ``registry`` with the BM25 backend."""
    return ToolSearch(
        RegistryCatalog(registry),
        config or ToolSearchConfig(),
        backend if backend is not None else BM25Index(),
        Availability(registry, Config().tools),
        **options,
    )


def session(**fields: Any) -> Session:
    """A session in a neutral working directory."""
    fields.setdefault("cwd", Path("."))
    return Session(**fields)

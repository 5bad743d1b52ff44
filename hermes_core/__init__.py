"""hermes-core: the tool layer of an LLM agent.

Core tools stay visible; everything else is deferred behind ``tool_search``, ``tool_describe``
and ``tool_call``. Plugins are found by a pluggy host from five sources and stay disabled until
the user enables them. Every call goes through one dispatcher.

This module is the public API: plugin authors, embedders and the docs import from here and
nowhere else (``from hermes_core import Host, Tool, hookimpl``). Names are loaded on first use,
so ``hermes --version`` pays for none of pydantic, numpy or the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.exports import lazy_exports
from hermes_core.version import __version__

if TYPE_CHECKING:
    from hermes_core.approvals.policy import SHELL_COMMAND_META, ApprovalPolicy, Decision
    from hermes_core.approvals.prompt import ApprovalRequest, PromptTransport, TerminalPrompt
    from hermes_core.cache_files import (
        CACHE_FRAME_SIZE,
        CacheFileError,
        cache_frame,
        read_cache_frame,
    )
    from hermes_core.captured import head_and_tail
    from hermes_core.config import Config, ConfigDocument, McpServerConfig, edit_config, load_config
    from hermes_core.connectors.gateway import (
        ConnectionLink,
        ConnectorGateway,
        ConnectorSchema,
        ConnectorState,
        ExecuteCall,
        ExecuteError,
        ExecuteResult,
        GatewayConnections,
        GatewayExecution,
        GatewayFailure,
        GatewayListing,
        GatewaySchemas,
        GatewaySearch,
    )
    from hermes_core.errors import (
        ConfigError,
        HermesError,
        ManagedConfigError,
        PluginError,
        RegistrationError,
    )
    from hermes_core.execution.caller import ToolCaller
    from hermes_core.execution.memory_guard import hide_host_memory
    from hermes_core.hookspecs import hookimpl
    from hermes_core.host import Host
    from hermes_core.mcp.supervisor import ServerStatus
    from hermes_core.paths import Environment
    from hermes_core.private_files import create_private_file, make_private_dir, private_dir
    from hermes_core.process_groups import signal_group
    from hermes_core.progress import progress_listener, report_progress
    from hermes_core.project_trust import project_refusal
    from hermes_core.search.assembly import Assembly
    from hermes_core.search.backend import (
        Admission,
        KeyedDocuments,
        SearchBackend,
        SearchHit,
        ToolDocument,
    )
    from hermes_core.session import Session
    from hermes_core.skills.library import Skill, SkillError, load_skills
    from hermes_core.skills.variables import releasable_variables
    from hermes_core.specs import (
        ActivityEvent,
        ApprovalPolicySpec,
        CliCommandSpec,
        ConnectorGatewaySpec,
        GatewayContext,
        PluginContext,
        PreCallDirective,
        SearchBackendSpec,
        ToolCall,
    )
    from hermes_core.tools import (
        HINTS_META,
        READ_ONLY_CALLS_META,
        Tool,
        ToolAnnotations,
        ToolResult,
    )

_EXPORTS: dict[str, str] = {
    "HINTS_META": "hermes_core.tools",
    "READ_ONLY_CALLS_META": "hermes_core.tools",
    "SHELL_COMMAND_META": "hermes_core.approvals.policy",
    "ActivityEvent": "hermes_core.specs",
    "Admission": "hermes_core.search.backend",
    "ApprovalPolicy": "hermes_core.approvals.policy",
    "ApprovalPolicySpec": "hermes_core.specs",
    "ApprovalRequest": "hermes_core.approvals.prompt",
    "Assembly": "hermes_core.search.assembly",
    "CliCommandSpec": "hermes_core.specs",
    "Config": "hermes_core.config",
    "ConfigDocument": "hermes_core.config",
    "ConfigError": "hermes_core.errors",
    "ConnectionLink": "hermes_core.connectors.gateway",
    "ConnectorGateway": "hermes_core.connectors.gateway",
    "ConnectorGatewaySpec": "hermes_core.specs",
    "ConnectorSchema": "hermes_core.connectors.gateway",
    "ConnectorState": "hermes_core.connectors.gateway",
    "Decision": "hermes_core.approvals.policy",
    "Environment": "hermes_core.paths",
    "ExecuteCall": "hermes_core.connectors.gateway",
    "ExecuteError": "hermes_core.connectors.gateway",
    "ExecuteResult": "hermes_core.connectors.gateway",
    "GatewayConnections": "hermes_core.connectors.gateway",
    "GatewayContext": "hermes_core.specs",
    "GatewayExecution": "hermes_core.connectors.gateway",
    "GatewayFailure": "hermes_core.connectors.gateway",
    "GatewayListing": "hermes_core.connectors.gateway",
    "GatewaySchemas": "hermes_core.connectors.gateway",
    "GatewaySearch": "hermes_core.connectors.gateway",
    "HermesError": "hermes_core.errors",
    "KeyedDocuments": "hermes_core.search.backend",
    "Host": "hermes_core.host",
    "ManagedConfigError": "hermes_core.errors",
    "McpServerConfig": "hermes_core.config",
    "PluginContext": "hermes_core.specs",
    "PluginError": "hermes_core.errors",
    "PreCallDirective": "hermes_core.specs",
    "PromptTransport": "hermes_core.approvals.prompt",
    "RegistrationError": "hermes_core.errors",
    "SearchBackend": "hermes_core.search.backend",
    "SearchBackendSpec": "hermes_core.specs",
    "SearchHit": "hermes_core.search.backend",
    "ServerStatus": "hermes_core.mcp.supervisor",
    "Session": "hermes_core.session",
    "Skill": "hermes_core.skills.library",
    "SkillError": "hermes_core.skills.library",
    "TerminalPrompt": "hermes_core.approvals.prompt",
    "Tool": "hermes_core.tools",
    "ToolAnnotations": "hermes_core.tools",
    "ToolCall": "hermes_core.specs",
    "ToolCaller": "hermes_core.execution.caller",
    "ToolDocument": "hermes_core.search.backend",
    "ToolResult": "hermes_core.tools",
    "edit_config": "hermes_core.config",
    "create_private_file": "hermes_core.private_files",
    "head_and_tail": "hermes_core.captured",
    "hide_host_memory": "hermes_core.execution.memory_guard",
    "hookimpl": "hermes_core.hookspecs",
    "load_config": "hermes_core.config",
    "load_skills": "hermes_core.skills.library",
    "make_private_dir": "hermes_core.private_files",
    "private_dir": "hermes_core.private_files",
    "project_refusal": "hermes_core.project_trust",
    "releasable_variables": "hermes_core.skills.variables",
    "signal_group": "hermes_core.process_groups",
    "progress_listener": "hermes_core.progress",
    "report_progress": "hermes_core.progress",
    "CACHE_FRAME_SIZE": "hermes_core.cache_files",
    "CacheFileError": "hermes_core.cache_files",
    "cache_frame": "hermes_core.cache_files",
    "read_cache_frame": "hermes_core.cache_files",
}

__all__ = [
    "CACHE_FRAME_SIZE",
    "HINTS_META",
    "READ_ONLY_CALLS_META",
    "SHELL_COMMAND_META",
    "ActivityEvent",
    "Admission",
    "ApprovalPolicy",
    "ApprovalPolicySpec",
    "ApprovalRequest",
    "Assembly",
    "CacheFileError",
    "CliCommandSpec",
    "Config",
    "ConfigDocument",
    "ConfigError",
    "ConnectionLink",
    "ConnectorGateway",
    "ConnectorGatewaySpec",
    "ConnectorSchema",
    "ConnectorState",
    "Decision",
    "Environment",
    "ExecuteCall",
    "ExecuteError",
    "ExecuteResult",
    "GatewayConnections",
    "GatewayContext",
    "GatewayExecution",
    "GatewayFailure",
    "GatewayListing",
    "GatewaySchemas",
    "GatewaySearch",
    "HermesError",
    "Host",
    "KeyedDocuments",
    "ManagedConfigError",
    "McpServerConfig",
    "PluginContext",
    "PluginError",
    "PreCallDirective",
    "PromptTransport",
    "RegistrationError",
    "SearchBackend",
    "SearchBackendSpec",
    "SearchHit",
    "ServerStatus",
    "Session",
    "Skill",
    "SkillError",
    "TerminalPrompt",
    "Tool",
    "ToolAnnotations",
    "ToolCall",
    "ToolCaller",
    "ToolDocument",
    "ToolResult",
    "__version__",
    "cache_frame",
    "create_private_file",
    "edit_config",
    "head_and_tail",
    "hide_host_memory",
    "hookimpl",
    "load_config",
    "load_skills",
    "make_private_dir",
    "private_dir",
    "progress_listener",
    "project_refusal",
    "read_cache_frame",
    "releasable_variables",
    "report_progress",
    "signal_group",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())

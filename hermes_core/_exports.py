"""The public faces of hermes-core, by audience, in one table (:data:`FACES`), and the lazy
loading of each face: a face's ``__all__`` is its row of the table, and its names are imported
from their defining modules only when first used (so ``hermes --version`` pays for none of
pydantic, numpy or the MCP SDK).

- ``hermes_core``: an embedder (Host, Session, Config, the errors);
- ``hermes_core.plugin``: a plugin author (hookimpl, the registration specs, PluginContext...);
- ``hermes_core.search``: a search backend author (the SearchBackend contract);
- ``hermes_core.connectors``: a connector gateway author (the ConnectorGateway contract);
- ``hermes_core.agent``: an embedder of the agent runtime, and a model provider author (the
  ModelProvider contract and the messages it takes and returns);
- ``hermes_core.testing``: a plugin's tests (fixtures, builders, conformance suites, the
  reference gateway);
- ``hermes_core._plugin_support``: the bundled plugins' private helpers, no one else's.

Internal code imports from the defining modules, never from a face.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any, Final

__all__ = ["DEPRECATED_IN_CORE", "FACES", "REMOVAL_VERSION", "face_names", "lazy_exports"]

_CORE = "hermes_core"
_PLUGIN = "hermes_core.plugin"
_SEARCH = "hermes_core.search"
_CONNECTORS = "hermes_core.connectors"
_TESTING = "hermes_core.testing"
_AGENT = "hermes_core.agent"
_WIRE = "hermes_core.agent._wire"
_SUPPORT = "hermes_core._plugin_support"

_GATEWAY = "hermes_core.connectors._gateway"
_SPECS = "hermes_core._specs"
_TOOLS = "hermes_core._tools"
_BACKEND = "hermes_core.search._backend"
_QUESTIONS = "hermes_core._approvals.questions"

FACES: Final[Mapping[str, Mapping[str, str]]] = {
    # An embedder: builds a Host from a Config and an Environment, runs sessions, answers
    # approval prompts, reads server status.
    _CORE: {
        "__version__": "hermes_core._version",
        "Assembly": "hermes_core.search._assembly",
        "Config": "hermes_core._config",
        "ConfigDocument": "hermes_core._config",
        "ConfigError": "hermes_core._errors",
        "Environment": "hermes_core._paths",
        "HermesError": "hermes_core._errors",
        "Host": "hermes_core._host",
        "ManagedConfigError": "hermes_core._errors",
        "McpServerConfig": "hermes_core._config",
        "PluginError": "hermes_core._errors",
        "PromptTransport": "hermes_core._approvals.prompt",
        "ApprovalRequest": "hermes_core._approvals.prompt",
        "RegistrationError": "hermes_core._errors",
        "ServerStatus": "hermes_core._mcp.status",
        "Session": "hermes_core._session",
        "SkillError": "hermes_core._skills.library",
        "TerminalPrompt": "hermes_core._approvals.prompt",
        "Tool": _TOOLS,
        "ToolAnnotations": _TOOLS,
        "ToolResult": _TOOLS,
        "edit_config": "hermes_core._config",
        "load_config": "hermes_core._config",
    },
    # A plugin author: hooks, registration specs, tools, approvals, skills.
    _PLUGIN: {
        "HINTS_META": _TOOLS,
        "READ_ONLY_CALLS_META": _TOOLS,
        "SHELL_COMMAND_META": "hermes_core._approvals.policy",
        "ActivityEvent": _SPECS,
        "ApprovalPolicy": "hermes_core._approvals.policy",
        "ApprovalPolicySpec": _SPECS,
        "ApprovalRequest": "hermes_core._approvals.prompt",
        "CliCommandSpec": _SPECS,
        "Config": "hermes_core._config",
        "ConnectorGatewaySpec": _SPECS,
        "DoctorCheckSpec": _SPECS,
        "DoctorResult": _SPECS,
        "ModelContext": _SPECS,
        "ModelProviderSpec": _SPECS,
        "GeneratedImage": "hermes_core._image_providers",
        "ImageError": "hermes_core._image_providers",
        "ImageProvider": "hermes_core._image_providers",
        "ImageProviderSpec": _SPECS,
        "ImageRequest": "hermes_core._image_providers",
        "Decision": "hermes_core._approvals.policy",
        "Environment": "hermes_core._paths",
        "PluginContext": _SPECS,
        "PluginError": "hermes_core._errors",
        "PluginSettingsError": "hermes_core._errors",
        "PreCallDirective": _SPECS,
        "SearchBackendSpec": _SPECS,
        "WebResult": "hermes_core._web_search",
        "WebSearchError": "hermes_core._web_search",
        "WebSearchProvider": "hermes_core._web_search",
        "WebSearchProviderSpec": _SPECS,
        "Session": "hermes_core._session",
        "Skill": "hermes_core._skills.library",
        "SkillError": "hermes_core._skills.library",
        "Tool": _TOOLS,
        "ToolAnnotations": _TOOLS,
        "ToolCall": _SPECS,
        "ToolCaller": "hermes_core._execution.caller",
        "ToolResult": _TOOLS,
        "hookimpl": "hermes_core._hookspecs",
        "load_skills": "hermes_core._skills.library",
        "report_progress": "hermes_core._progress",
        "MemoryProviderSpec": _SPECS,
    },
    # A search backend author: the SearchBackend contract and the types it takes and returns.
    _SEARCH: {
        "Admission": _BACKEND,
        "KeyedDocuments": _BACKEND,
        "SearchBackend": _BACKEND,
        "SearchHit": _BACKEND,
        "ToolDocument": _BACKEND,
        "query_language": "hermes_core.search._query_language",
    },
    # A connector gateway author: the ConnectorGateway contract and its answer types.
    _CONNECTORS: {
        "ConnectionLink": _GATEWAY,
        "ConnectorGateway": _GATEWAY,
        "ConnectorSchema": _GATEWAY,
        "ConnectorState": _GATEWAY,
        "ExecuteCall": _GATEWAY,
        "ExecuteError": _GATEWAY,
        "ExecuteResult": _GATEWAY,
        "GatewayConnections": _GATEWAY,
        "GatewayContext": "hermes_core._specs",
        "GatewayExecution": _GATEWAY,
        "GatewayFailure": _GATEWAY,
        "GatewayListing": _GATEWAY,
        "GatewaySchemas": _GATEWAY,
        "GatewaySearch": _GATEWAY,
    },
    # The agent runtime: its embedder (the conversation loop) and a model provider author (the
    # ModelProvider contract and the messages it takes and returns).
    _AGENT: {
        "Agent": "hermes_core.agent._agent",
        "AgentEvent": "hermes_core.agent._events",
        "Budget": "hermes_core.agent._budget",
        "ChildCompacted": "hermes_core.agent._events",
        "ChildFinished": "hermes_core.agent._events",
        "ChildStarted": "hermes_core.agent._events",
        "Conversation": "hermes_core.agent._conversation",
        "Delegations": "hermes_core.agent._delegation",
        "Finished": "hermes_core.agent._events",
        "Retrying": "hermes_core.agent._events",
        "RetryPolicy": "hermes_core.agent._requests",
        "ToolFinished": "hermes_core.agent._events",
        "ToolStarted": "hermes_core.agent._events",
        "Transcript": "hermes_core.agent._transcripts",
        "TranscriptStore": "hermes_core.agent._transcripts",
        "UsageReport": "hermes_core.agent._events",
        "event_json": "hermes_core.agent._events",
        "send_until_settled": "hermes_core.agent._settling",
        "Question": _QUESTIONS,
        "QuestionTransport": _QUESTIONS,
        "Reply": _QUESTIONS,
        "TerminalQuestions": _QUESTIONS,
        "attach_questions": _QUESTIONS,
        "ImagePart": _WIRE,
        "SessionModel": "hermes_core.agent._session_model",
        "session_model": "hermes_core.agent._session_model",
        "Message": _WIRE,
        "ModelError": _WIRE,
        "ContextOverflowError": _WIRE,
        "ModelEvent": _WIRE,
        "ModelProvider": _WIRE,
        "ModelRequest": _WIRE,
        "ModelSettings": _WIRE,
        "ModelToolCall": _WIRE,
        "ThinkingBlock": _WIRE,
        "ReasoningDetail": _WIRE,
        "cache_breakpoints": _WIRE,
        "ModelTurn": _WIRE,
        "TextDelta": _WIRE,
        "ThinkingDelta": _WIRE,
        "ToolSchema": _WIRE,
        "Usage": _WIRE,
        "http_model_error": "hermes_core.agent._http_errors",
        "overflowed": "hermes_core.agent._http_errors",
        "transport_errors": "hermes_core.agent._http_errors",
        "Compacted": "hermes_core.agent._events",
        "listed_models": "hermes_core.agent._provider_checks",
        "no_stream_error": "hermes_core.agent._provider_checks",
        "require_vendor_key": "hermes_core.agent._provider_checks",
        "token_count": "hermes_core.agent._provider_checks",
        "VendorSdk": "hermes_core.agent._provider_checks",
        "CronJob": "hermes_core.agent._cron_rows",
        "CronJobs": "hermes_core.agent._cron_store",
        "CronRun": "hermes_core.agent._cron_rows",
        "JobError": "hermes_core.agent._cron_schedule",
        "job_toolsets": "hermes_core.agent._cron_toolsets",
        "MEMORY_TARGETS": "hermes_core.agent._memory_provider",
        "Memory": "hermes_core.agent._memory",
        "MemoryProvider": "hermes_core.agent._memory_provider",
        "MemoryTarget": "hermes_core.agent._memory_provider",
        "PromptSection": "hermes_core.agent._prompt_sections",
    },
    # A plugin's tests: fixtures and builders of real files, hosts and CLIs, the conformance
    # suites a plugin author runs against their backend, gateway or policy, the reference gateway.
    _TESTING: {
        "FakeModelProvider": "hermes_core.testing._fake_provider",
        "fake_turn": "hermes_core.testing._fake_provider",
        "PLUGIN_SOURCE": "hermes_core.testing._files",
        "SEARCH_BACKEND_RULES": "hermes_core.testing._backend_conformance",
        "GATEWAY_FIXTURES": "hermes_core.testing._gateway_conformance",
        "GATEWAY_RULES": "hermes_core.testing._gateway_conformance",
        "MODEL_PROVIDER_RULES": "hermes_core.testing._provider_conformance",
        "POLICY_RULES": "hermes_core.testing._policy_conformance",
        "DevGateway": "hermes_core.testing._devgateway",
        "FakeModelServer": "hermes_core.testing._fake_model",
        "FakeNixStore": "hermes_core.testing._files",
        "FakeToolCall": "hermes_core.testing._fake_model_wire",
        "FakeTurn": "hermes_core.testing._fake_model_wire",
        "Fixtures": "hermes_core.testing._gateway_fixtures",
        "HermesCli": "hermes_core.testing._cli",
        "InstalledDistribution": "hermes_core.testing._files",
        "RecordedRequest": "hermes_core.testing._fake_requests",
        "approval_policy_conformance": "hermes_core.testing._policy_conformance",
        "connector_gateway_conformance": "hermes_core.testing._gateway_conformance",
        "forget_modules_under": "hermes_core.testing._files",
        "hermes_cli": "hermes_core.testing._fixtures",
        "hermes_dir_plugin": "hermes_core.testing._fixtures",
        "hermes_distribution": "hermes_core.testing._fixtures",
        "hermes_env": "hermes_core.testing._fixtures",
        "hermes_home": "hermes_core.testing._fixtures",
        "hermes_host": "hermes_core.testing._fixtures",
        "hermes_nix_store": "hermes_core.testing._fixtures",
        "hermes_project": "hermes_core.testing._fixtures",
        "load_fixtures": "hermes_core.testing._gateway_fixtures",
        "make_approval_policy": "hermes_core.testing._hosts",
        "make_connector_gateway": "hermes_core.testing._hosts",
        "make_host": "hermes_core.testing._hosts",
        "make_model_provider": "hermes_core.testing._hosts",
        "make_nix_store": "hermes_core.testing._files",
        "make_search_backend": "hermes_core.testing._hosts",
        "model_provider_conformance": "hermes_core.testing._provider_conformance",
        "parse_fixtures": "hermes_core.testing._gateway_fixtures",
        "search_backend_conformance": "hermes_core.testing._backend_conformance",
        "search_backend_module": "hermes_core.testing._hosts",
        "write_dir_plugin": "hermes_core.testing._files",
        "write_distribution": "hermes_core.testing._files",
        "MEMORY_PROVIDER_RULES": "hermes_core.testing._memory_conformance",
        "memory_provider_conformance": "hermes_core.testing._memory_conformance",
    },
    # Bundled plugins only (plugins_builtin/): helpers that are not a third party's API.
    _SUPPORT: {
        "CACHE_FRAME_SIZE": "hermes_core._cache_files",
        "CacheFileError": "hermes_core._cache_files",
        "ClientFiles": "hermes_core._client_io",
        "ClientIOError": "hermes_core._client_io",
        "ClientTerminal": "hermes_core._client_io",
        "TerminalRun": "hermes_core._client_io",
        "attach_client_io": "hermes_core._client_io",
        "cache_dir_blocked": "hermes_core._cache_files",
        "cache_frame": "hermes_core._cache_files",
        "client_files": "hermes_core._client_io",
        "client_terminal": "hermes_core._client_io",
        "create_private_file": "hermes_core._private_files",
        "head_and_tail": "hermes_core._captured",
        "hide_host_memory": "hermes_core._execution.memory_guard",
        "make_private_dir": "hermes_core._private_files",
        "private_database": "hermes_core._private_files",
        "path_refusal": "hermes_core._path_arguments",
        "moved_settings": "hermes_core._plugin_settings",
        "readers_of": "hermes_core._checked_fetch",
        "setting_problem": "hermes_core._plugin_settings",
        "private_dir": "hermes_core._private_files",
        "progress_listener": "hermes_core._progress",
        "project_refusal": "hermes_core._project_trust",
        "read_cache_frame": "hermes_core._cache_files",
        "releasable_variables": "hermes_core._skills.variables",
        "scan_skills": "hermes_core._skills.library",
        "retry_after_seconds": "hermes_core._retry_after",
        "http_url": "hermes_core._config.checks",
        "signal_group": "hermes_core._process_groups",
        "group_alive": "hermes_core._process_groups",
        "end_group": "hermes_core._process_groups",
        "end_group_blocking": "hermes_core._process_groups",
        "secret_variable": "hermes_core._dotenv",
        "write_bytes_atomically": "hermes_core._atomic_write",
        "Question": _QUESTIONS,
        "questions_of": _QUESTIONS,
        "AddressRefused": "hermes_core._addresses",
        "AddressSettings": "hermes_core._addresses",
        "allowed_host": "hermes_core._addresses",
        "check_url": "hermes_core._addresses",
        "CheckedFetcher": "hermes_core._checked_fetch",
        "FetchError": "hermes_core._checked_fetch",
        "read_capped": "hermes_core._checked_fetch",
        "search_answer": "hermes_core._web_search",
        "joins": "hermes_core._terminal_cells",
        "shortened": "hermes_core._terminal_cells",
        "write_atomically": "hermes_core._atomic_write",
        "tls_context": "hermes_core._tls",
        "untrusted_certificate": "hermes_core._tls",
        "loopback_host": "hermes_core._addresses",
        "encodable": "hermes_core._encodable",
        "encodable_value": "hermes_core._encodable",
        "shown_url": "hermes_core._redaction",
        "urls_shown_in": "hermes_core._redaction",
        "image_type": "hermes_core._image_providers",
        "counts_as_message": "hermes_core.agent._transcripts",
        "transcript_read_lock": "hermes_core.agent._transcripts",
    },
}

REMOVAL_VERSION: Final = "0.2"
"""The release without the old ``hermes_core.<name>`` spellings of :data:`DEPRECATED_IN_CORE`."""

DEPRECATED_IN_CORE: Final = frozenset(
    {
        "CACHE_FRAME_SIZE",
        "HINTS_META",
        "READ_ONLY_CALLS_META",
        "SHELL_COMMAND_META",
        "ActivityEvent",
        "Admission",
        "ApprovalPolicy",
        "ApprovalPolicySpec",
        "CacheFileError",
        "CliCommandSpec",
        "ConnectionLink",
        "ConnectorGateway",
        "ConnectorGatewaySpec",
        "ConnectorSchema",
        "ConnectorState",
        "Decision",
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
        "KeyedDocuments",
        "PluginContext",
        "PreCallDirective",
        "SearchBackend",
        "SearchBackendSpec",
        "SearchHit",
        "Skill",
        "ToolCall",
        "ToolCaller",
        "ToolDocument",
        "cache_frame",
        "create_private_file",
        "head_and_tail",
        "hide_host_memory",
        "hookimpl",
        "load_skills",
        "make_private_dir",
        "private_dir",
        "progress_listener",
        "project_refusal",
        "read_cache_frame",
        "releasable_variables",
        "report_progress",
        "signal_group",
    }
)
"""Names ``hermes_core`` exported until 0.1 that now live in another face: they still work,
with a :class:`DeprecationWarning` naming the new place, until :data:`REMOVAL_VERSION`."""


def face_names(face: str) -> list[str]:
    """The ``__all__`` of ``face``: its row of :data:`FACES`, constants first, then sorted."""
    return sorted(FACES[face], key=lambda name: (not name.isupper(), name))


def _new_home(name: str) -> str:
    return next(face for face in FACES if face != _CORE and name in FACES[face])


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    names: Sequence[str],
    namespace: dict[str, Any],
    deprecated: frozenset[str] = frozenset(),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: ``exports`` maps each
    exported name to the module that defines it, ``names`` is the package's ``__all__`` and
    ``namespace`` its ``globals()``, where a loaded name is kept (the next lookup does not
    come back here). A ``deprecated`` name still loads, from the face that holds it now, with
    a :class:`DeprecationWarning` at every use."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None and name in deprecated:
            home = _new_home(name)
            where = (
                f"it is internal now ({home}, for the bundled plugins)"
                if home == _SUPPORT
                else f"import it from {home}"
            )
            warnings.warn(
                f"{package}.{name} is deprecated: {where}; the old name goes in {REMOVAL_VERSION}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(import_module(FACES[home][name]), name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__

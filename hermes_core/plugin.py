"""The plugin author's face: what a plugin of hermes-core imports.

A plugin is a module (a directory with ``plugin.yaml`` or a distribution with an entry point in
the group ``hermes_core.plugins``) whose functions marked :data:`hookimpl` implement the hooks
of docs/plugins.md: tools (:class:`Tool`, :class:`ToolResult`, :class:`ToolAnnotations`),
registration specs (:class:`SearchBackendSpec`, :class:`ConnectorGatewaySpec`,
:class:`ApprovalPolicySpec`, :class:`CliCommandSpec`, built from a :class:`PluginContext`),
the call hooks (:class:`ToolCall`, :class:`PreCallDirective`, :class:`ActivityEvent`) and
approval policies (:class:`ApprovalPolicy`, :class:`Decision`). A search backend's contract is
in ``hermes_core.search``, a connector gateway's in ``hermes_core.connectors``; tests use
``hermes_core.testing``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core._approvals.policy import (
        SHELL_COMMAND_META as SHELL_COMMAND_META,
    )
    from hermes_core._approvals.policy import (
        ApprovalPolicy as ApprovalPolicy,
    )
    from hermes_core._approvals.policy import (
        Decision as Decision,
    )
    from hermes_core._approvals.prompt import (
        ApprovalRequest as ApprovalRequest,
    )
    from hermes_core._config import (
        Config as Config,
    )
    from hermes_core._errors import (
        PluginError as PluginError,
    )
    from hermes_core._errors import (
        PluginSettingsError as PluginSettingsError,
    )
    from hermes_core._execution.caller import (
        ToolCaller as ToolCaller,
    )
    from hermes_core._hookspecs import (
        hookimpl as hookimpl,
    )
    from hermes_core._image_providers import (
        GeneratedImage as GeneratedImage,
    )
    from hermes_core._image_providers import (
        ImageError as ImageError,
    )
    from hermes_core._image_providers import (
        ImageProvider as ImageProvider,
    )
    from hermes_core._image_providers import (
        ImageRequest as ImageRequest,
    )
    from hermes_core._paths import (
        Environment as Environment,
    )
    from hermes_core._progress import (
        report_progress as report_progress,
    )
    from hermes_core._session import (
        Session as Session,
    )
    from hermes_core._skills.library import (
        Skill as Skill,
    )
    from hermes_core._skills.library import (
        SkillError as SkillError,
    )
    from hermes_core._skills.library import (
        load_skills as load_skills,
    )
    from hermes_core._specs import (
        ActivityEvent as ActivityEvent,
    )
    from hermes_core._specs import (
        ApprovalPolicySpec as ApprovalPolicySpec,
    )
    from hermes_core._specs import (
        CliCommandSpec as CliCommandSpec,
    )
    from hermes_core._specs import (
        ConnectorGatewaySpec as ConnectorGatewaySpec,
    )
    from hermes_core._specs import (
        DoctorCheckSpec as DoctorCheckSpec,
    )
    from hermes_core._specs import (
        DoctorResult as DoctorResult,
    )
    from hermes_core._specs import (
        ImageProviderSpec as ImageProviderSpec,
    )
    from hermes_core._specs import (
        MemoryProviderSpec as MemoryProviderSpec,
    )
    from hermes_core._specs import (
        PluginContext as PluginContext,
    )
    from hermes_core._specs import (
        PreCallDirective as PreCallDirective,
    )
    from hermes_core._specs import (
        SearchBackendSpec as SearchBackendSpec,
    )
    from hermes_core._specs import (
        ToolCall as ToolCall,
    )
    from hermes_core._specs import (
        WebSearchProviderSpec as WebSearchProviderSpec,
    )
    from hermes_core._tools import (
        HINTS_META as HINTS_META,
    )
    from hermes_core._tools import (
        READ_ONLY_CALLS_META as READ_ONLY_CALLS_META,
    )
    from hermes_core._tools import (
        Tool as Tool,
    )
    from hermes_core._tools import (
        ToolAnnotations as ToolAnnotations,
    )
    from hermes_core._tools import (
        ToolResult as ToolResult,
    )
    from hermes_core._web_search import (
        WebResult as WebResult,
    )
    from hermes_core._web_search import (
        WebSearchError as WebSearchError,
    )
    from hermes_core._web_search import (
        WebSearchProvider as WebSearchProvider,
    )

__all__ = face_names("hermes_core.plugin")

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())

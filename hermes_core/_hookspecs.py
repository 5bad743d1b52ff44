"""Every hook a plugin may implement. One typed function each; the docstring says when it runs.

Registration hooks return typed specs; the host collects them all. The decision hook may stop or
change a call and fails closed. Observer hooks are isolated per plugin: an exception is logged and
never stops the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._session import Session
    from hermes_core._specs import (
        ActivityEvent,
        ApprovalPolicySpec,
        CliCommandSpec,
        ConnectorGatewaySpec,
        DoctorCheckSpec,
        ImageProviderSpec,
        MemoryProviderSpec,
        ModelProviderSpec,
        PluginContext,
        PreCallDirective,
        SearchBackendSpec,
        ToolCall,
        WebSearchProviderSpec,
    )
    from hermes_core._tools import Tool, ToolResult

PROJECT_NAME = "hermes_core"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Decorate plugin functions with ``@hookimpl`` (importable from ``hermes_core._hookspecs``)."""


# Registration hooks ---------------------------------------------------------------------------
# Each is a plain function (``def``, never ``async def``): the host calls it once, outside any
# event loop, and uses what it returns; a coroutine would never run.


@hookspec
def hermes_tools(config: Config, env: Environment, context: PluginContext) -> Sequence[Tool]:
    """At host start: return the tools this plugin provides. A plain function, not
    ``async def``. Declare only the arguments you use: ``context`` is the plugin's own
    :class:`~hermes_core._specs.PluginContext` (its settings, and the providers its tools use:
    :meth:`~hermes_core._specs.PluginContext.image_provider`)."""
    ...


@hookspec
def hermes_search_backends() -> Sequence[SearchBackendSpec]:
    """At host start: return search backends, selectable by ``tools.tool_search.backend``.
    A plain function, not ``async def``."""
    ...


@hookspec
def hermes_connector_gateways() -> Sequence[ConnectorGatewaySpec]:
    """At host start: return connector gateways, selectable by ``tools.connectors.gateway``.
    A plain function, not ``async def``."""
    ...


@hookspec
def hermes_model_providers() -> Sequence[ModelProviderSpec]:
    """At host start: return model providers, selectable by ``model.provider``. A plain
    function, not ``async def``."""
    ...


@hookspec
def hermes_web_search_providers() -> Sequence[WebSearchProviderSpec]:
    """At host start: return web search providers, selectable by
    ``plugins.entries.web.search_provider``. A plain function, not ``async def``."""
    ...


@hookspec
def hermes_image_providers() -> Sequence[ImageProviderSpec]:
    """At host start: return image providers, selectable by name (``image_generate``'s
    ``plugins.entries.media.image_provider``). A plain function, not ``async def``."""
    ...


@hookspec
def hermes_memory_providers() -> Sequence[MemoryProviderSpec]:
    """At host start: return memory providers, selectable by ``memory.provider``. A plain
    function, not ``async def``."""
    ...


@hookspec
def hermes_approval_policies() -> Sequence[ApprovalPolicySpec]:
    """At host start: return approval policies, selectable by ``approvals.policy``.
    A plain function, not ``async def``."""
    ...


@hookspec
def hermes_cli_commands() -> Sequence[CliCommandSpec]:
    """When the ``hermes`` command starts: return extra subcommands. A plain function, not
    ``async def``."""
    ...


@hookspec
def hermes_doctor_checks(
    config: Config, env: Environment, context: PluginContext
) -> Sequence[DoctorCheckSpec]:
    """When ``hermes doctor`` runs, and only then: return the checks of what only this plugin
    knows (its service's key, a program it needs). A plain function, not ``async def``; a
    check's ``run`` may be either. Declare only the arguments you use."""
    ...


# Decision hook --------------------------------------------------------------------------------


@hookspec
def hermes_pre_tool_call(call: ToolCall, session: Session) -> PreCallDirective | None:
    """Before a call runs, after argument coercion: return ``None`` to let it go on, or a
    directive to block it, require approval, or replace its arguments. An exception or a
    timeout (``plugins.hook_timeout``) blocks the call."""
    ...


# Observer hooks -------------------------------------------------------------------------------


@hookspec
def hermes_post_tool_call(call: ToolCall, result: ToolResult, session: Session) -> None:
    """After a call finished (successfully or not). The return value is ignored."""
    ...


@hookspec
def hermes_transform_tool_result(
    call: ToolCall, result: ToolResult, session: Session
) -> ToolResult | None:
    """After a call: return a replacement result, or ``None`` to keep it. Transforms chain in
    hook order, each seeing the previous one's output."""


@hookspec
def hermes_tool_activity(event: ActivityEvent) -> None:
    """After every call, with the activity event that is also written to the activity log."""
    ...


@hookspec
def hermes_session_start(session: Session) -> None:
    """When a session starts."""
    ...


@hookspec
def hermes_session_end(session: Session) -> None:
    """When a session ends."""
    ...


@hookspec
def hermes_transcripts_deleted(env: Environment, session_ids: Sequence[str]) -> None:
    """After ``hermes sessions delete`` or ``prune`` removed the transcripts of
    ``session_ids`` (their subagents' included) from ``env``'s store
    (``env.data_home / "sessions"``), in that command's process: drop at once what you keep
    of those conversations (an index, a cache, a copy). Only the plugins enabled then are
    told; the return value is ignored."""
    ...

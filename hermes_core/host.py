"""``Host``: everything hermes-core builds from a ``Config`` and an ``Environment``.

There is no module-level host or plugin manager: build as many hosts as you like::

    async with Host(config, env) as host:
        backend = host.select_search_backend()
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from hermes_core.errors import HermesError
from hermes_core.plugins.loader import STRICT_FLAG, PluginSet, load_plugins
from hermes_core.plugins.registrations import Registrations, collect_registrations

if TYPE_CHECKING:
    import pluggy

    from hermes_core.config import Config
    from hermes_core.paths import Environment
    from hermes_core.plugins.records import PluginRecord
    from hermes_core.specs import ApprovalPolicySpec, ConnectorGatewaySpec, SearchBackendSpec

logger = logging.getLogger("hermes_core.plugins")


class Host:
    """The plugin host as an async context manager.

    Entering discovers plugins in the five sources, gates them, imports and registers the
    enabled ones and collects their registrations (raising
    :class:`~hermes_core.errors.RegistrationError` when two plugins claim one name). Leaving
    unregisters them. ``config_path`` is the file ``config`` was loaded from: a file inside the
    working directory cannot enable project plugins.
    """

    def __init__(
        self, config: Config, env: Environment, *, config_path: Path | None = None
    ) -> None:
        self.config = config
        self.env = env
        self.config_path = config_path
        self._plugins: PluginSet | None = None
        self._registrations: Registrations | None = None
        # The tool registry and the dispatcher (hermes_core.dispatch) are attached here.

    @classmethod
    def from_environment(cls, env: Environment) -> Host:
        """A host for the user's own configuration, ``env.config_path``."""
        from hermes_core.config import load_config

        return cls(load_config(env.config_path), env, config_path=env.config_path)

    def start(self) -> None:
        """Load plugins and collect registrations (what ``async with`` does on entry)."""
        if self._plugins is not None:
            raise HermesError("this host is already started")
        strict = self.env.flag(STRICT_FLAG)
        plugins = load_plugins(self.config, self.env, config_path=self.config_path, strict=strict)
        for warning in plugins.warnings:
            logger.warning("%s", warning)
        for record in plugins.records:
            if record.status == "error":
                logger.warning("plugin %r (%s): %s", record.name, record.source, record.message)
        try:
            self._registrations = collect_registrations(plugins.pm, plugins.records, strict=strict)
        except BaseException:
            _unregister_all(plugins)
            raise
        self._plugins = plugins

    def close(self) -> None:
        """Unregister every plugin (what ``async with`` does on exit)."""
        if self._plugins is not None:
            _unregister_all(self._plugins)
        self._plugins = None
        self._registrations = None

    async def __aenter__(self) -> Host:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _started(self) -> PluginSet:
        if self._plugins is None:
            raise HermesError("the host is not started: use 'async with Host(...) as host'")
        return self._plugins

    @property
    def plugins(self) -> list[PluginRecord]:
        """A record per discovered plugin copy, with its status (the rows of the CLI list)."""
        return self._started().records

    @property
    def warnings(self) -> list[str]:
        """What discovery ignored and why (impostors, unreadable directories, unknown keys)."""
        return self._started().warnings

    @property
    def pm(self) -> pluggy.PluginManager:
        """The pluggy plugin manager holding the loaded plugins."""
        return self._started().pm

    @property
    def registrations(self) -> Registrations:
        """The specs returned by the loaded plugins' registration hooks."""
        self._started()
        assert self._registrations is not None
        return self._registrations

    def select_search_backend(self) -> SearchBackendSpec:
        """The search backend named by ``tools.tool_search.backend``."""
        spec: SearchBackendSpec = self.registrations.select(
            "search_backend", self.config.tools.tool_search.backend
        )
        return spec

    def select_connector_gateway(self) -> ConnectorGatewaySpec:
        """The connector gateway named by ``tools.connectors.gateway``."""
        spec: ConnectorGatewaySpec = self.registrations.select(
            "connector_gateway", self.config.tools.connectors.gateway
        )
        return spec

    def select_approval_policy(self) -> ApprovalPolicySpec:
        """The approval policy named by ``approvals.policy``."""
        spec: ApprovalPolicySpec = self.registrations.select(
            "approval_policy", self.config.approvals.policy
        )
        return spec


def _unregister_all(plugins: PluginSet) -> None:
    for record in plugins.loaded:
        if record.plugin is not None and plugins.pm.is_registered(record.plugin):
            plugins.pm.unregister(record.plugin)

"""Started hosts and search backends made as the host makes them, for tests and benchmarks
(no pytest needed)."""

from __future__ import annotations

import importlib
import os
import tempfile
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core._paths import Environment

if TYPE_CHECKING:
    from hermes_core._approvals.policy import ApprovalPolicy
    from hermes_core._config import Config
    from hermes_core._host import Host
    from hermes_core.agent._wire import ModelProvider, ModelSettings
    from hermes_core.connectors._gateway import ConnectorGateway
    from hermes_core.search._backend import SearchBackend

__all__ = [
    "make_approval_policy",
    "make_connector_gateway",
    "make_host",
    "make_model_provider",
    "make_search_backend",
    "search_backend_module",
]


def _installed_only() -> Environment:
    """An environment that reads the plugins installed with the running Python: the bundled
    ones and the distributions pip installed (entry points on ``sys.path``), so the plugin a
    test's author installed is found as a user's ``hermes`` finds it. It reads nothing of the
    user's (no ``HERMES_HOME``, configuration, directory plugins, project or Nix store) and has
    its own home, logs and cache (a backend that persists its index never writes the user's),
    under a name of its own in the temporary folder, this user's alone (another account that
    made that name first would read the activity log, or link it to the user's files)."""
    from hermes_core._private_files import own_private_dir

    user = f"-{os.geteuid()}" if hasattr(os, "geteuid") else ""
    root = own_private_dir(Path(tempfile.gettempdir()) / f"hermes-make-search-backend{user}")
    return Environment(home=root / "home", cwd=root, variables={})


def make_host(
    config: Config | None = None,
    env: Environment | None = None,
    *,
    plugins: Mapping[str, object] | Iterable[tuple[str, object]] = (),
) -> Host:
    """A started :class:`~hermes_core._host.Host` over ``config`` (default: ``Config()``) and
    ``env`` (default: the bundled plugins and those pip installed in the running environment,
    nothing of the user's is read), with ``plugins``
    (name -> plugin object, a module or an object whose methods carry ``@hookimpl``) given to
    :meth:`~hermes_core._host.Host.register` first. Close it with ``host.close()``::

        host = make_host(plugins={"shouty": ShoutyPlugin()})
        result = anyio.run(host.dispatch, "shout", {"text": "hi"}, host.new_session())
        host.close()
    """
    from hermes_core._config import Config
    from hermes_core._host import Host

    host = Host(config or Config(), env or _installed_only())
    pairs = plugins.items() if isinstance(plugins, Mapping) else plugins
    for name, plugin in pairs:
        host.register(plugin, name=name)
    host.start()
    return host


def make_search_backend(
    name: str = "bm25", *, config: Config | None = None, env: Environment | None = None
) -> SearchBackend:
    """A new, empty instance of the search backend registered as ``name``, made as the host
    makes it (the selection step: factory guarded, protocol checked), from the plugins that
    ``config`` enables among those ``env`` finds (by default the bundled plugins and those pip
    installed in the running environment, nothing of the user's). For unit tests, conformance
    checks and benchmarks of a backend without a host::

        backend = make_search_backend("bm25")
        backend.build([ToolDocument("create_issue", "Create an issue", "github")])
    """
    host = make_host(config, env)
    try:
        return host.create_search_backend(name)
    finally:
        host.close()


def make_connector_gateway(
    url: str,
    token: str,
    name: str = "http",
    *,
    config: Config | None = None,
    env: Environment | None = None,
) -> ConnectorGateway:
    """A new instance of the connector gateway registered as ``name`` for the gateway at
    ``url`` and the user's ``token``, made as the host makes it, from the plugins found as
    :func:`make_search_backend` finds them. Close it with ``await gateway.aclose()``."""
    host = make_host(config, env)
    try:
        return host.create_connector_gateway(url, token, name)
    finally:
        host.close()


def make_model_provider(
    settings: ModelSettings, *, config: Config | None = None, env: Environment | None = None
) -> ModelProvider:
    """A new instance of the model provider registered as ``settings.provider``, made as the
    host makes it (its factory gets a ``ModelContext`` holding ``settings``; give
    ``api_key_env`` and ``api_key`` to hand it a key), from the plugins found as
    :func:`make_search_backend` finds them. Close it with ``await provider.aclose()``::

        settings = ModelSettings("openai", "m", base_url=server.openai_base_url)
        provider = make_model_provider(settings)
    """
    host = make_host(config, env)
    try:
        return host.create_model_provider(settings)
    finally:
        host.close()


def make_approval_policy(
    name: str = "annotations", *, config: Config | None = None, env: Environment | None = None
) -> ApprovalPolicy:
    """A new instance of the approval policy registered as ``name``, made as the host makes it
    (its plugin's factory, through the selection step), from the plugins found as
    :func:`make_search_backend` finds them."""
    from hermes_core._plugins.selection import build_selected

    host = make_host(config, env)
    try:
        policy: ApprovalPolicy = build_selected(
            host.registrations, "approval_policy", name, host.plugin_context
        )
        return policy
    finally:
        host.close()


def search_backend_module(name: str = "bm25", submodule: str = "") -> types.ModuleType:
    """The module of the plugin that registers the search backend ``name`` (its ``submodule``,
    e.g. ``"index"``, when given), imported as the host imports it (a bundled plugin lives
    under a private module name): for tests and benchmarks of the engine itself."""
    package = type(make_search_backend(name)).__module__.rpartition(".")[0]
    return importlib.import_module(f"{package}.{submodule}" if submodule else package)

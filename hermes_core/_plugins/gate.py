"""The gate: each plugin's status, decided from its manifest and the config before any import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._plugins.candidates import Candidate
from hermes_core._plugins.discovery import PROJECT_PLUGINS_FLAG
from hermes_core._plugins.manifest import normalize_name
from hermes_core._plugins.records import PluginStatus
from hermes_core._version import __version__

if TYPE_CHECKING:
    from hermes_core._config import HooksConfig, PluginsConfig
    from hermes_core._paths import Environment


def gate(
    candidate: Candidate,
    plugins: PluginsConfig | HooksConfig,
    env: Environment,
    *,
    project_enabled: bool,
    config_trusted_for_project: bool,
    section: str = "plugins",
    config_in_code: bool = False,
) -> tuple[PluginStatus, str | None]:
    """The status of a resolved candidate and the message explaining it, in the spec's order.

    1. named in ``plugins.disabled``: ``disabled`` (disabled always wins);
    2. a project plugin while ``HERMES_ENABLE_PROJECT_PLUGINS`` is off: ``gated``;
    3. a broken copy (bad manifest, no ``__init__.py``): ``error``;
    4. a bundled plugin of kind ``backend`` or ``toolset``: ``enabled (default)``;
    5. named in ``plugins.enabled``: ``enabled`` (a project plugin only when the config is the
       user's own, not a file inside the project);
    6. otherwise ``not enabled``, with the hint to enable it.

    An enabled plugin whose ``requires_hermes`` does not match, or whose ``requires_env``
    variables are missing, is an ``error``; so is an enabled folder of the user or the project
    that another local account could write (:func:`~hermes_core._private_files.others_could_write`).

    Hook directories go through the same gate with ``section="hooks"``: their lists are
    ``hooks.enabled`` and ``hooks.disabled``, and messages name those. ``config_in_code``
    (a host given no configuration file: an embedder's or a test helper's ``Config``) adds
    how to enable a plugin there, where ``hermes plugins enable`` changes nothing.
    """
    name = candidate.name
    if name in _names(plugins.disabled):
        also = f", which wins over {section}.enabled" if name in _names(plugins.enabled) else ""
        return "disabled", f"disabled in {section}.disabled{also}"
    if candidate.source == "project" and not project_enabled:
        return "gated", _gated(
            name,
            plugins,
            section,
            config_trusted_for_project,
            _enabling(name, section, config_in_code),
        )
    if candidate.error is not None or candidate.manifest is None:
        return "error", candidate.error or "no manifest"
    manifest = candidate.manifest
    if candidate.source == "bundled" and manifest.kind in ("backend", "toolset"):
        status: PluginStatus = "enabled (default)"
    elif name in _names(plugins.enabled):
        if candidate.source == "project" and not config_trusted_for_project:
            return "not enabled", (
                "project plugins can be enabled only from a config file outside the project "
                "(the user's own), and the one in effect lies inside it"
            )
        status = "enabled"
    else:
        return "not enabled", f"enable it with: {_enabling(name, section, config_in_code)}"
    problem = requirement_problem(candidate, env)
    if problem is not None:
        return "error", problem
    if candidate.directory is not None and candidate.source in ("user", "project"):
        from hermes_core._private_files import others_could_write

        weakness = others_could_write(candidate.directory)
        if weakness is not None:  # its code could be another account's: none of it runs
            return "error", f"not loaded: {weakness}"
    return status, None


def _enabling(name: str, section: str, config_in_code: bool) -> str:
    """``hermes plugins enable NAME``, and with ``config_in_code`` the ``Config`` to pass."""
    command = f"hermes {section} enable {name}"
    if not config_in_code:
        return command
    return (
        f"{command} (a config file), or, for a Config built in code, list it in "
        f"{section}.enabled: config=Config.model_validate({{'{section}': {{'enabled': "
        f"['{name}']}}}})"
    )


def _gated(
    name: str,
    plugins: PluginsConfig | HooksConfig,
    section: str,
    config_trusted: bool,
    enabling: str,
) -> str:
    """How to load a gated project copy: open the gate and, unless the config in effect (one
    outside the project) enables it already, what else it takes."""
    what = "plugins" if section == "plugins" else "hook directories"
    opening = (
        f"set {PROJECT_PLUGINS_FLAG}=1 in the environment to load the project's {what} "
        "(only for a project you trust)"
    )
    if not config_trusted:  # even enabled there, a project cannot enable its own code
        return (
            f"{opening}; and enable it in a config file outside the project (your own): the "
            "one in effect lies inside it"
        )
    if name not in _names(plugins.enabled):
        return f"{opening}; then enable it: {enabling}"
    return opening


def requirement_problem(candidate: Candidate, env: Environment) -> str | None:
    """Why an enabled plugin cannot load (``requires_hermes``, ``requires_env``), or ``None``."""
    manifest = candidate.manifest
    if manifest is None:
        return None
    if manifest.requires_hermes is not None:
        from packaging.version import InvalidVersion, Version

        try:
            running = Version(__version__)
        except InvalidVersion:  # pragma: no cover - our own version is always valid
            running = None
        if running is not None and not manifest.requires_hermes.contains(running, prereleases=True):
            return (
                f"requires hermes-core {manifest.requires_hermes}, "
                f"but this is hermes-core {__version__}"
            )
    missing = [variable for variable in manifest.requires_env if not env.get(variable)]
    if missing:
        return (
            "missing environment variable"
            + ("s" if len(missing) > 1 else "")
            + (": " + ", ".join(missing) + " (listed in requires_env)")
        )
    return None


def _names(values: list[str]) -> set[str]:
    return {normalize_name(value) for value in values}

"""The checks of ``hermes doctor`` that may send requests: the model (its provider, model, key
and, unless ``--offline``, its server, asked for its model list: no tokens spent) and each MCP
server (connected and listed as ``hermes mcp test`` does, all at once). With ``--offline``
nothing is sent and nothing started."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio

from hermes_core._cli.doctor_checks import Check, Status, not_checked
from hermes_core._errors import ConfigError, HermesError, RegistrationError
from hermes_core._redaction import shown_url
from hermes_core._shown import did_you_mean

if TYPE_CHECKING:
    from hermes_core._config import Config, McpServerConfig
    from hermes_core._host import Host
    from hermes_core._paths import Environment
    from hermes_core.agent._wire import ModelSettings

__all__ = ["MODEL_TIMEOUT", "declared_servers", "gate_refusals", "mcp_checks", "model_checks"]

MODEL_TIMEOUT: Final = 15.0
"""Seconds the model server gets to list its models: a listing is quick, and a doctor that
waits ``model.timeout`` (minutes) for a server that hangs would not say so."""

_SHOWN_MODELS: Final = 5
"""How many listed models a warning names."""


async def model_checks(host: Host, refused: list[str], *, offline: bool) -> list[Check]:
    """The ``model`` group: the provider ``model.provider`` selects (and its ``check`` of the
    settings: ``refused`` holds what they refuse), ``model.model``, the provider built (its
    key there, or none needed), and unless
    ``offline`` its server's answer to a listing of the models (the provider's optional
    ``list_models``), with whether ``model.model`` is among them (a warning only: some servers
    list none, or aliases)."""
    from hermes_core.agent._configured_model import configured_model, no_model_error
    from hermes_core.agent._wire import ModelError

    section = host.config.model
    hint = "hermes config validate"
    if refused:
        return [Check("model", "provider", "error", problem, hint) for problem in refused]
    try:  # a provider of a plugin that failed: selection_problems left it to this group
        host.registrations.select("model_provider", section.provider)
    except RegistrationError as exc:
        return [Check("model", "provider", "error", str(exc), "hermes plugins list")]
    label = host.registrations.label("model_provider", section.provider)
    found = [Check("model", "provider", "ok", f"{label}, selected by model.provider")]
    if section.model:
        found.append(Check("model", "model", "ok", f"model.model is {section.model!r}"))
    else:
        found.append(Check("model", "model", "error", str(no_model_error(host))))
    settings = configured_model(host, require_model=False)
    try:
        if offline and _ready_without_building(host, settings):
            found.append(Check("model", "key", "ok", _key_said(settings)))
            found.append(not_checked("model", "server", "not asked (--offline)"))
            return found
        provider = host.create_model_provider(settings)
    except ConfigError as exc:  # the provider's own words: the key's variable, and what to set
        # No hint: config validate builds no provider, so it would answer ok about a key.
        found.append(Check("model", "key", "error", str(exc)))
        return found
    except HermesError as exc:  # the SDK not installed, a factory that failed
        found.append(Check("model", "provider", "error", str(exc), "hermes plugins list"))
        return found
    found.append(Check("model", "key", "ok", _key_said(settings)))
    try:
        lister = getattr(provider, "list_models", None)
        if offline:
            found.append(not_checked("model", "server", "not asked (--offline)"))
        elif lister is None:
            why = f"the {section.provider} provider offers no model listing (list_models)"
            found.append(not_checked("model", "server", why))
        else:
            where = (
                shown_url(settings.base_url) if settings.base_url else "the provider's default URL"
            )
            try:
                with anyio.fail_after(MODEL_TIMEOUT):
                    listed = [str(name) for name in await lister()]
            except ModelError as exc:
                found.append(Check("model", "server", "error", str(exc)))
            except TimeoutError:
                message = (
                    f"{section.provider}: {where}: no answer to a model listing within "
                    f"{MODEL_TIMEOUT:g} s: check that the model server runs there and answers"
                )
                found.append(Check("model", "server", "error", message))
            except Exception as exc:  # a plugin's provider: its failure is a line, not a crash
                message = f"{section.provider}: list_models raised {type(exc).__name__}: {exc}"
                found.append(Check("model", "server", "error", message, "hermes plugins list"))
            else:
                said = f"{where} answered: {len(listed)} models listed"
                found.append(Check("model", "server", "ok", said))
                if section.model:
                    found.append(_listed_check(section.model, listed))
    finally:
        await provider.aclose()
    return found


def _ready_without_building(host: Host, settings: ModelSettings) -> bool:
    """Whether the selected provider's spec has a ``ready`` check, which is run (raising as its
    factory would): building the provider imports its SDK (about 3 s for the bundled ones), and
    offline nothing else needs it. A ``ready`` that fails otherwise is its plugin's error."""
    from hermes_core._errors import PluginError
    from hermes_core._specs import ModelContext

    spec = host.registrations.select("model_provider", settings.provider)
    ready = getattr(spec, "ready", None)
    if ready is None:
        return False
    plugin = host.registrations.table("model_provider")[settings.provider].plugin
    base = host.plugin_context(plugin)
    try:
        ready(ModelContext(base.config, base.env, base.settings, model=settings))
    except HermesError:
        raise
    except Exception as exc:
        detail = f"model provider {settings.provider!r}: its ready check raised "
        raise PluginError(plugin, f"{detail}{type(exc).__name__}: {exc}") from exc
    return True


def _key_said(settings: ModelSettings) -> str:
    if settings.api_key_env:
        state = "set" if settings.api_key else "not set"
        return f"{settings.api_key_env} (model.api_key_env) is {state}; the provider starts"
    if settings.base_url:
        base_url = shown_url(settings.base_url)
        return f"the provider starts (model.base_url {base_url}: a key is optional)"
    return "the provider starts: it has the key it needs (never shown), or needs none"


def _listed_check(model: str, listed: list[str]) -> Check:
    if not listed:
        return not_checked("model", "listed", "the server lists no models")
    if model in listed:
        return Check("model", "listed", "ok", f"{model!r} is among the models the server lists")
    shown = ", ".join(listed[:_SHOWN_MODELS]) + (", ..." if len(listed) > _SHOWN_MODELS else "")
    message = (
        f"{model!r} is not among the {len(listed)} models the server lists ({shown})."
        f"{did_you_mean(model, listed)} Some servers list aliases or none: if requests fail "
        "with HTTP 404, check model.model"
    )
    return Check("model", "listed", "warning", message)


def declared_servers(config: Config, env: Environment) -> dict[str, McpServerConfig]:
    """The MCP servers the configuration file declares: those in effect, or, when the file is
    a project's the gate holds back, those it declares (reported held back, never started)."""
    from hermes_core._config import config_held_back, load_config

    if config_held_back(env) is None:
        return dict(config.mcp_servers)
    return dict(load_config(env.config_path).mcp_servers)


def gate_refusals(servers: dict[str, McpServerConfig], env: Environment) -> dict[str, str]:
    """Why the project gate refuses to start each enabled server of ``servers`` it refuses (a
    launcher that reads what a cloned repository plants in the project: docs/security.md),
    by name; the reason says what to do. Nothing is started to know it."""
    from hermes_core._mcp.launch import launch_refusal

    refused: dict[str, str] = {}
    for name, entry in servers.items():
        if entry.enabled and entry.command is not None:
            reason = launch_refusal(entry, env)
            if reason is not None:
                refused[name] = reason.removeprefix("not started: ")
    return refused


async def mcp_checks(
    servers: dict[str, McpServerConfig], env: Environment, *, offline: bool
) -> list[Check]:
    """One check per server of ``servers``, in name order: disabled, held back by the project
    gate or refused by it (not started, either way), not asked (``offline``), or connected
    within its ``connect_timeout`` and its tools listed, all at once (``hermes mcp test``'s
    probe), or why it did not answer."""
    if not servers:
        return [Check("mcp", "servers", "ok", "no MCP servers configured")]
    # Here, not above: the module imports the MCP SDK (about 1 s), which no server needs.
    from hermes_core._mcp.install import not_started_note

    refused = gate_refusals(servers, env)
    results: dict[str, Check] = {}
    async with anyio.create_task_group() as group:
        for name, entry in sorted(servers.items()):
            note = not_started_note(env, name)
            if not entry.enabled:
                results[name] = Check("mcp", name, "ok", "disabled (enabled: false): not started")
            elif note is not None:
                results[name] = Check("mcp", name, "warning", note, "hermes mcp list")
            elif name in refused:
                said = f"refused by the project gate (not started): {refused[name]}"
                results[name] = Check("mcp", name, "warning", said, "hermes mcp list")
            elif offline:
                results[name] = not_checked("mcp", name, "not started (--offline)")
            else:
                group.start_soon(_probe, name, entry, env, results)
    return [results[name] for name in sorted(results)]


async def _probe(
    name: str, entry: McpServerConfig, env: Environment, results: dict[str, Check]
) -> None:
    from hermes_core._mcp.connection import McpConnectError
    from hermes_core._mcp.install import probe_failure
    from hermes_core._mcp.probe import probe_server

    hint = f"hermes mcp test {name}"
    status: Status = "ok"
    try:
        report = await probe_server(name, entry, env)
    except McpConnectError as exc:
        message = probe_failure(exc).splitlines()[0]  # the server's stderr: in mcp test
        status = "error"
    except HermesError as exc:  # a variable its entry names that is not set, say
        message = f"MCP server {name!r}: {exc}"
        status = "error"
    else:
        kept = sum(tool.kept for tool in report.tools)
        filtered = len(report.tools) - kept
        more = f" ({filtered} filtered out)" if filtered else ""
        message = f"{kept} tools{more}, answered in {report.connect_seconds:.1f} s"
        hint = ""
    results[name] = Check("mcp", name, status, message, hint)

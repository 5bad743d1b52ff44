"""``hermes config``: where the configuration lives, what it says, and how to change it.

pydantic and ruamel.yaml are imported inside the commands, so that listing the commands stays
fast.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment, say_if_held_back
from hermes_core._cli.output import echo_shown, warnings_to_stderr

if TYPE_CHECKING:
    from collections.abc import Iterator

    from hermes_core._config import Config, ConfigDocument
    from hermes_core._host import Host
    from hermes_core._paths import Environment
    from hermes_core._plugins.selection import SelectableKind


def _parse_value(key: str, text: str) -> Any:
    """VALUE (for ``key``) as a YAML scalar or flow collection: ``7.5``, ``off``, ``[a, b]``,
    ``{k: v}``. An empty VALUE is refused: YAML reads it as null, which the check of the edited
    file would blame on a line of config.yaml instead of on what was typed."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from hermes_core._yaml_limits import limited, load_limited

    if not text.strip():
        if key == "model.model":
            problem = "an empty value is not a model name: give one, e.g. gpt-4.1-mini"
        else:
            problem = f"VALUE is empty: give a value for {key} ('' is the empty text, null unsets)"
        raise click.BadParameter(problem, param_hint="VALUE")
    try:
        # The limits of config.yaml hold for a value typed here too: no aliases, no deep nesting,
        # no 5,000-digit numbers.
        return load_limited(limited(YAML(typ="safe", pure=True)), text)
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise click.BadParameter(f"not a YAML value: {problem}", param_hint="VALUE") from None


@click.group("config")
def config() -> None:
    """Show, check and change config.yaml ($HERMES_HOME/config.yaml)."""


@config.command("path")
def path_command() -> None:
    """Print the path of the configuration file."""
    click.echo(str(environment().config_path))


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def show_command(as_json: bool) -> None:
    """Print the effective configuration, defaults filled in (a URL's password replaced)."""
    from hermes_core._config import config_in_effect
    from hermes_core._redaction import shown_urls

    with warnings_to_stderr():
        effective = config_in_effect(environment())
    # Printed to be read or pasted: a URL's password stays in the file, never on the screen.
    data = shown_urls(effective.model_dump(mode="json"))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import RoundTripRepresenter

    class ShowRepresenter(RoundTripRepresenter):
        """Writes an unset value as ``null``, which reads better than nothing after the colon."""

    # add_representer is a class method: a subclass keeps ruamel's own representer untouched.
    ShowRepresenter.add_representer(
        type(None),
        lambda representer, _: representer.represent_scalar("tag:yaml.org,2002:null", "null"),
    )
    yaml = YAML(typ="rt")
    yaml.Representer = ShowRepresenter
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(data, stream)
    click.echo(stream.getvalue(), nl=False)


@config.command("set")
@click.argument("key")
@click.argument("value")
def set_command(key: str, value: str) -> None:
    """Set a dotted KEY to VALUE, parsed as YAML.

    Example: hermes config set tools.tool_search.threshold_pct 7.5. The edited file is
    checked as hermes config validate checks it before it is written (exit status 2, nothing
    written, when it has problems); its comments and key order are kept.
    """
    from hermes_core._config import edit_config

    parsed = _parse_value(key, value)
    env = environment()
    with warnings_to_stderr(), edit_config(env) as document, checked_edit(document, env):
        document.set(key, parsed)
    click.echo(f"{key} = {json.dumps(parsed, default=str)} ({env.config_path})")
    say_if_held_back(env)


@config.command("validate")
def validate_command() -> None:
    """Check the configuration file; exit status 2 when it has problems.

    Besides its keys and values: the settings each plugin checks (plugins.entries.NAME), the
    names the plugins must know (approvals.policy, tools.tool_search.backend,
    tools.connectors.gateway, model.provider, memory.provider) and the model settings the
    provider refuses (model.max_output_tokens under the anthropic thinking budget).
    """
    from hermes_core._config import config_held_back, config_in_effect, load_config

    env = environment()
    held_back = config_held_back(env)
    if held_back is not None:
        # Its keys and values are data, checked; its plugins are not loaded as it enables
        # them, the very thing the project gate holds back.
        with warnings_to_stderr():
            load_config(env.config_path)
        click.echo(f"ok: {env.config_path} (its keys and values; not in effect: {held_back})")
        return
    with warnings_to_stderr():
        config = config_in_effect(env)
    problems = _plugin_problems(config, env)
    for problem in problems:
        echo_shown(f"hermes: error: {problem}", err=True)
    if problems:
        sys.exit(2)
    click.echo(f"ok: {env.config_path}")


@contextmanager
def checked_edit(document: ConfigDocument, env: Environment) -> Iterator[None]:
    """The edit of ``document`` made in the ``with`` block, then checked as ``config
    validate`` checks a file: its own keys and values first, then what the plugins refuse
    (:func:`_refuse_what_the_plugins_refuse`); exits with status 2 on a problem, so that
    :func:`~hermes_core._config.edit_config` writes nothing. ``config set`` and ``plugins
    enable|disable`` edit through it: one rule."""
    before = _enabling(document)
    unedited = _as_saved_or_none(document)
    yield
    document.validate()  # the file's own problems first, as validate says them
    _refuse_what_the_plugins_refuse(document, env, before, unedited)


def _enabling(document: ConfigDocument) -> tuple[set[str], set[str]]:
    """The plugin names ``document`` enables and disables (normalized; a list that is not one
    names none)."""
    from hermes_core._plugin_names import normalize_name

    def names(key: str) -> set[str]:
        value = document.get(key)
        items = value if isinstance(value, list) else []
        return {normalize_name(item) for item in items if isinstance(item, str)}

    return names("plugins.enabled"), names("plugins.disabled")


def _as_saved_or_none(document: ConfigDocument) -> Config | None:
    """``document`` as it stands, before the edit (:meth:`ConfigDocument.as_saved`), or
    ``None`` when its keys or values are wrong already."""
    from hermes_core._errors import ConfigError

    try:
        return document.as_saved()
    except ConfigError:
        return None


def _refuse_what_the_plugins_refuse(
    document: ConfigDocument,
    env: Environment,
    before: tuple[set[str], set[str]],
    unedited: Config | None,
) -> None:
    """Exit with status 2, printing them as ``config validate`` does, when the plugins refuse
    the edited ``document`` (:func:`selection_problems`) for a problem the edit brings: one the
    ``unedited`` file had already is said as a warning, so that each ``set`` mending one of two
    such problems (the policy and the backend of a plugin uninstalled) is not refused for the
    other. A problem the edit brings by disabling the plugin of a name in use is said as what
    the edit would do (:func:`_disabling`). Skipped, as by ``validate``, for a file the project
    gate holds back, and when the
    edit enables a plugin the file did not (named in ``plugins.enabled``, or no longer in
    ``plugins.disabled``): ``set`` runs no code of a plugin that was not enabled; the next
    command loads it and ``validate`` judges it."""
    from hermes_core._project_trust import config_refusal

    # config_held_back asks only of a file that exists; this one may be written now.
    if config_refusal(env, env.config_path, "the config file") is not None:
        return
    enabled, disabled = _enabling(document)
    if enabled - before[0] or before[1] - disabled:
        return
    problems, _ = _judged(document.as_saved(), env)
    if problems and unedited is not None:
        had_problems, in_use = _judged(unedited, env)
        had = {_unplaced(problem, env) for _, problem in had_problems}
        for _, problem in [p for p in problems if _unplaced(p[1], env) in had]:
            echo_shown(f"hermes: warning: {problem} (in the file already)", err=True)
        stopped = (before[0] - enabled) | (disabled - before[1])
        problems = [
            (kind, _disabling(kind, problem, in_use, stopped))
            for kind, problem in problems
            if _unplaced(problem, env) not in had
        ]
    for _, problem in problems:
        echo_shown(f"hermes: error: {problem}", err=True)
    if problems:
        sys.exit(2)


def _disabling(
    kind: SelectableKind | None,
    problem: str,
    in_use: dict[SelectableKind, tuple[str, str]],
    stopped: set[str],
) -> str:
    """``problem`` as what the edit would do when the plugin it ``stopped`` (disabled, or no
    longer enabled) provides the name of ``kind`` the file selects (``in_use``: the name and
    its plugin, before the edit): validate's words would describe a state not written."""
    from hermes_core._plugins.registrations import config_key

    if kind is None or kind not in in_use or in_use[kind][1] not in stopped:
        return problem
    name, plugin = in_use[kind]
    what = kind.replace("_", " ")
    which = f"is the {what}" if plugin == name else f"provides {name!r}, the {what}"
    # Memory can also be turned off: its provider is then no longer selected.
    off = ", or turn memory off (memory.enabled false)," if kind == "memory_provider" else ""
    return (
        f"cannot disable {plugin}: {plugin} {which} in use ({config_key(kind)}): choose "
        f"another {what}{off} first"
    )


def _unplaced(problem: str, env: Environment) -> str:
    """``problem`` without the file's ``FILE:LINE`` wherever it is (first, or in the middle, as
    in a plugin's settings problem: ``plugin 'web': FILE:6: ...``): an edit moves lines."""
    import re

    return re.sub(rf"{re.escape(str(env.config_path))}:\d+(?=: )", "FILE", problem)


def _tool_providers(config: Config, host: Host) -> list[tuple[SelectableKind, str]]:
    """The providers the bundled tools that loaded select in their settings: the ``web``
    plugin's search provider (when one is set) and the ``media`` plugin's image provider."""
    loaded = {record.name for record in host.plugins if record.winner and record.loadable}
    entries = config.plugins.entries
    web = entries.get("web", {}).get("search_provider")
    media = entries.get("media", {}).get("image_provider", "openai")
    selected: list[tuple[SelectableKind, str]] = []
    if "web" in loaded and isinstance(web, str) and web:
        selected.append(("web_search_provider", web))
    if "media" in loaded and isinstance(media, str) and media:
        selected.append(("image_provider", media))
    return selected


def _plugin_problems(config: Config, env: Environment) -> list[str]:
    """What the plugins refuse of ``config``, loading them as a host does
    (:func:`selection_problems`)."""
    return [problem for _, problem in _judged(config, env)[0]]


def _judged(
    config: Config, env: Environment
) -> tuple[list[tuple[SelectableKind | None, str]], dict[SelectableKind, tuple[str, str]]]:
    """What the plugins refuse of ``config``, loading them as a host does
    (:func:`selection_problems`), and each kind of name it selects that a plugin provides:
    the name and that plugin."""
    import logging

    from hermes_core._cli.host_runs import cli_host

    runtime_log = logging.getLogger("hermes_core._host")
    level = runtime_log.level
    runtime_log.setLevel(logging.ERROR)  # the problems are printed below, once each
    try:
        with cli_host(config, env, strict=False) as host:
            host.load_plugins()
            host.check_plugins()  # builds what a plugin not bundled makes: its settings
            in_use = {
                kind: (name, found.plugin)
                for kind, name in _selected(config, host)
                if (found := host.registrations.table(kind).get(name)) is not None
            }
            return selection_problems(config, host), in_use
    finally:
        runtime_log.setLevel(level)


def _selected(config: Config, host: Host) -> list[tuple[SelectableKind, str]]:
    """Each kind of name ``config`` selects from the plugins ``host`` loaded, with the name."""
    from hermes_core._plugins.selection import configured_selections

    selected: list[tuple[SelectableKind, str]] = [
        *configured_selections(config),
        ("model_provider", config.model.provider),
    ]
    if config.memory.enabled:
        selected.append(("memory_provider", config.memory.provider))
    return selected + _tool_providers(config, host)


def selection_problems(config: Config, host: Host) -> list[tuple[SelectableKind | None, str]]:
    """What the plugins ``host`` loaded refuse of ``config``, each with the kind of name it is
    about (``None``: a plugin's settings): a name no loaded plugin registers (unless its
    plugin is there and failed, which is no mistake of the file: ``hermes plugins list`` shows
    it), settings a plugin's typed settings refuse, the model settings the provider's
    ``check`` refuses. Also ``hermes doctor``'s."""
    from hermes_core._errors import ConfigError, RegistrationError, UnloadedPluginError
    from hermes_core._plugin_names import normalize_name
    from hermes_core.agent._wire import ModelSettings

    problems: list[tuple[SelectableKind | None, str]] = []
    failed = {record.name for record in host.plugins if record.status == "error"}
    for kind, name in _selected(
        config, host
    ):  # the host's registrations name where each name is written
        try:
            spec = host.registrations.select(kind, name)
            if kind == "model_provider" and spec.check is not None:
                spec.check(ModelSettings.of_section(config.model))
        except UnloadedPluginError as exc:
            # Only a plugin of that name is surely the one that failed (shown by plugins list).
            if exc.plugin not in failed or exc.plugin != normalize_name(name):
                problems.append((kind, str(exc)))
        except RegistrationError as exc:
            problems.append((kind, str(exc)))
        except ConfigError as exc:  # the provider's check: it names its own key
            problems.append((kind, str(exc)))
    problems += [(None, r.settings_error) for r in host.plugins if r.settings_error is not None]
    return problems

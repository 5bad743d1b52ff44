"""``hermes config``: where the configuration lives, what it says, and how to change it.

pydantic and ruamel.yaml are imported inside the commands, so that listing the commands stays
fast.
"""

from __future__ import annotations

import io
import json
from typing import Any

import click

from hermes_core._cli.context import environment
from hermes_core._cli.output import warnings_to_stderr


def _parse_value(text: str) -> Any:
    """VALUE as a YAML scalar or flow collection: ``7.5``, ``off``, ``[a, b]``, ``{k: v}``."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from hermes_core._yaml_limits import limited, load_limited

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
    """Print the effective configuration, defaults filled in."""
    from hermes_core._config import load_config

    with warnings_to_stderr():
        effective = load_config(environment().config_path)
    data = effective.model_dump(mode="json")
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
    validated before it is written; its comments and key order are kept.
    """
    from hermes_core._config import edit_config

    parsed = _parse_value(value)
    env = environment()
    with warnings_to_stderr(), edit_config(env) as document:
        document.set(key, parsed)
    click.echo(f"{key} = {json.dumps(parsed, default=str)} ({env.config_path})")


@config.command("validate")
def validate_command() -> None:
    """Check the configuration file; exit status 2 when it has problems."""
    from hermes_core._config import load_config

    config_path = environment().config_path
    with warnings_to_stderr():
        load_config(config_path)
    click.echo(f"ok: {config_path}")

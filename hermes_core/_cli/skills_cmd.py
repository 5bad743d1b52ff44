"""``hermes skills list``: the skills of ``$HERMES_HOME/skills`` as the model's ``skills_list``
sees them, and for each that does not load, why (read by the same code, the project gate
included), without starting a host or asking the model."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment, load_config_declared
from hermes_core._cli.output import columns, exit_if_broken

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._paths import Environment
    from hermes_core._skills import SkillFolder


@click.group("skills")
def skills() -> None:
    """List the skills of $HERMES_HOME/skills and why one does not load."""


def _row(folder: SkillFolder) -> dict[str, Any]:
    skill = folder.skill
    return {
        "name": folder.name,
        "status": folder.status,
        "directory": str(folder.directory),
        "description": skill.description if skill is not None else None,
        "required_environment_variables": (
            list(skill.required_environment_variables) if skill is not None else []
        ),
        "files": skill.files() if skill is not None else [],
        "problem": folder.problem,
        "category": folder.category,
    }


def skills_unseen(config: Config, env: Environment) -> str | None:
    """Why the model gets no skills tools under this configuration, or ``None``."""
    from hermes_core._tools import toolsets_config_allows

    if "skills" in config.plugins.disabled:
        return f"the skills plugin is disabled (plugins.disabled in {env.config_path})"
    if not toolsets_config_allows("skills", config.tools):
        key = (
            "disabled_toolsets"
            if "skills" in config.tools.disabled_toolsets
            else "enabled_toolsets"
        )
        return f"the skills toolset is off (tools.{key} in {env.config_path})"
    return None


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
def list_command(as_json: bool) -> None:
    """One row per skill folder of $HERMES_HOME/skills: name, status (loaded, error, gated),
    folder, and its description or why it does not load; exit 1 when one is an error."""
    from hermes_core._skills import scan_skills

    env = environment()
    config = load_config_declared(env)
    if (unseen := skills_unseen(config, env)) is not None:
        click.echo(
            f"hermes: warning: {unseen}: the model gets no skills_list or skill_view", err=True
        )
    rows = [_row(folder) for folder in scan_skills(env.skills_dir, env)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo(f"No skills in {env.skills_dir} (a folder <name>/SKILL.md each).")
    else:
        table: list[tuple[str, ...]] = [("name", "status", "folder", "note")]
        table += [
            (row["name"], row["status"], row["directory"], row["problem"] or row["description"])
            for row in rows
        ]
        click.echo(columns(table))
    exit_if_broken(rows, lambda row: row["status"] == "error")

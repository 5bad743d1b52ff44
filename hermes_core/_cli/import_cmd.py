"""``hermes import-agent``: bring another agent's MCP servers into config.yaml (and their literal
secrets into ``$HERMES_HOME/.env``): Claude Code's and Claude Desktop's, with Claude Code's
skills into ``$HERMES_HOME/skills/``, or Cursor's. Their instructions (``CLAUDE.md``, Cursor's
rules) are listed as not imported: hermes has no instructions file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment
from hermes_core._shown import printable_lines

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from hermes_core._mcp.claude_import import ClaudeServer, SkippedServer, Source
    from hermes_core._mcp.import_plan import ImportPlan
    from hermes_core._paths import Environment
    from hermes_core._skills.claude_import import SkillImportPlan

_VERBS = {"add": "added", "change": "changed", "unchanged": "unchanged", "keep": "kept"}
_NO_INSTRUCTIONS = "hermes has no instructions file (it imports MCP servers and skills only)"


def claude_instruction_files(env: Environment) -> list[Path]:
    """Claude Code's instruction files that exist: the user's ``~/.claude/CLAUDE.md`` and the
    repository's ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md``."""
    from hermes_core._mcp.claude_import import user_home

    places = [
        user_home(env) / ".claude" / "CLAUDE.md",
        env.cwd / "CLAUDE.md",
        env.cwd / ".claude" / "CLAUDE.md",
        env.cwd / "CLAUDE.local.md",
    ]
    return [path for path in places if path.is_file()]


@click.group("import-agent")
def import_agent() -> None:
    """Import MCP servers and skills from another agent."""


@import_agent.command("claude-code")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option(
    "--force", is_flag=True, help="Replace servers and skills of the same name that differ."
)
@click.option(
    "--claude-json",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Claude Code's file instead of ~/.claude.json (it must exist).",
)
@click.option(
    "--desktop-config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Claude Desktop's claude_desktop_config.json instead of its usual place (it must exist).",
)
@click.option(
    "--project",
    is_flag=True,
    help="Also import the repository's servers (./.mcp.json) and skills (./.claude/skills/); "
    "never a server disabled in Claude Code.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def claude_code(
    dry_run: bool,
    force: bool,
    project: bool,
    claude_json: Path | None,
    desktop_config: Path | None,
    as_json: bool,
) -> None:
    """Import the MCP servers of Claude Code (local, project and user scopes, in that order of
    precedence) and Claude Desktop into mcp_servers. ${VAR} templates are kept as they are;
    literal secrets go to $HERMES_HOME/.env, with a ${VAR} reference in config.yaml. Also copy
    Claude Code's skills (~/.claude/skills/) into $HERMES_HOME/skills/.

    The repository's own servers (./.mcp.json) and skills (./.claude/skills/) are imported
    only with --project, and a server disabled in Claude Code never is. Each server and skill
    is listed with what happens to it (--dry-run: what would)."""
    from hermes_core._mcp.claude_import import (
        claude_sources,
        disabled_project_servers,
        read_claude_servers,
    )
    from hermes_core._skills.claude_import import (
        apply_skill_import,
        claude_skill_sources,
        left_out_project_skills,
        plan_skill_import,
        read_claude_skills,
    )

    env = environment()
    sources = claude_sources(env, claude_json=claude_json, desktop_config=desktop_config)
    # Only the repository's servers can be disabled there: without --project none is imported.
    disabled = disabled_project_servers(env, claude_json=claude_json) if project else {}
    found, skipped = read_claude_servers(sources, project=project, disabled=disabled, into=env)
    skills, skipped_skills, skill_warnings = read_claude_skills(
        claude_skill_sources(env, project=project)
    )
    if not project:
        skipped_skills += left_out_project_skills(env)
    skill_plan = plan_skill_import(
        skills, skipped_skills, env.skills_dir, force=force, warnings=skill_warnings
    )
    plan = _write_servers(env, found, skipped, force=force, dry_run=dry_run)
    if not dry_run:
        apply_skill_import(skill_plan)
    instructions = claude_instruction_files(env)
    report = _Report("Claude Code or Claude Desktop", "instructions", instructions)
    report.show(plan, skill_plan, env, sources, dry_run=dry_run, as_json=as_json)


@import_agent.command("cursor")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--force", is_flag=True, help="Replace servers of the same name that differ.")
@click.option(
    "--mcp-json",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Cursor's file instead of ~/.cursor/mcp.json (it must exist).",
)
@click.option(
    "--project",
    is_flag=True,
    help="Also import the repository's servers (./.cursor/mcp.json).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def cursor(dry_run: bool, force: bool, project: bool, mcp_json: Path | None, as_json: bool) -> None:
    """Import the MCP servers of Cursor (the repository's .cursor/mcp.json, then the user's
    ~/.cursor/mcp.json) into mcp_servers. ${env:NAME} becomes ${NAME}, expanded by hermes when
    it connects; ${userHome} and, in the repository's file, ${workspaceFolder} are written out.
    Literal secrets go to $HERMES_HOME/.env, with a ${VAR} reference in config.yaml.

    The repository's servers are imported only with --project. Each server is listed with what
    happens to it (--dry-run: what would). Cursor's rules are listed as not imported."""
    from hermes_core._mcp.claude_import import read_claude_servers
    from hermes_core._mcp.cursor_import import CursorVariables, cursor_rule_files, cursor_sources
    from hermes_core._skills.claude_import import SkillImportPlan

    env = environment()
    sources = cursor_sources(env, mcp_json=mcp_json)
    found, skipped = read_claude_servers(
        sources, project=project, prepare=CursorVariables(env), into=env
    )
    plan = _write_servers(env, found, skipped, force=force, dry_run=dry_run)
    report = _Report("Cursor", "rules", cursor_rule_files(env))
    report.show(plan, SkillImportPlan(), env, sources, dry_run=dry_run, as_json=as_json)


def _write_servers(
    env: Environment,
    found: Mapping[str, ClaudeServer],
    skipped: Sequence[SkippedServer],
    *,
    force: bool,
    dry_run: bool,
) -> ImportPlan:
    """Plan ``found`` against config.yaml's ``mcp_servers`` and, unless ``dry_run``, write the
    added and changed entries and their secrets."""
    from hermes_core._config import ConfigDocument, edit_config
    from hermes_core._dotenv import read_dotenv
    from hermes_core._mcp.import_plan import plan_import
    from hermes_core._mcp.secrets import save_home_secrets

    variables = {"environment": env.variables, "dotenv": read_dotenv(env.dotenv_path)}
    if dry_run:
        existing = ConfigDocument.load(env.config_path).get("mcp_servers") or {}
        return plan_import(found, skipped, existing, force=force, **variables)
    with edit_config(env) as document:
        existing = document.get("mcp_servers") or {}
        plan = plan_import(found, skipped, existing, force=force, **variables)
        for name, entry in plan.entries().items():
            document.set(f"mcp_servers.{name}", entry)
        document.validate()
        if plan.secrets:
            save_home_secrets(env, plan.secrets)
    return plan


@dataclass(frozen=True)
class _Report:
    """How one agent's import is reported: the agent's name for "nothing found", and what of
    its instructions hermes leaves behind."""

    agent: str
    instructions_kind: str
    instructions: list[Path]

    def show(
        self,
        plan: ImportPlan,
        skill_plan: SkillImportPlan,
        env: Environment,
        sources: Sequence[Source],
        *,
        dry_run: bool,
        as_json: bool,
    ) -> None:
        """Print the report, as text or ``--json``."""
        gated = _gated_notes(plan, skill_plan, env)
        if as_json:
            data = self._data(plan, skill_plan, env, dry_run=dry_run)
            data["warnings"] += gated
            click.echo(json.dumps(data, indent=2))
            return
        for warning in plan.warnings + skill_plan.warnings:
            click.echo(f"hermes: warning: {warning}", err=True)
        _report_servers(plan, env, sources, self.agent, dry_run=dry_run)
        _report_skills(skill_plan, env, dry_run=dry_run)
        for path in self.instructions:
            click.echo(f"not imported: {self.instructions_kind} {path}: {_NO_INSTRUCTIONS}")
        for note in gated:
            click.echo(f"hermes: warning: {note}", err=True)

    def _data(
        self, plan: ImportPlan, skill_plan: SkillImportPlan, env: Environment, *, dry_run: bool
    ) -> dict[str, Any]:
        return {
            "dry_run": dry_run,
            "config": str(env.config_path),
            "servers": [
                {
                    "name": p.server.name,
                    "action": _VERBS[p.action],
                    "from": p.server.source.describe(),
                    "entry": p.server.entry,
                }
                for p in plan.servers
            ],
            "skipped": [
                {"name": s.name, "reason": s.reason, "from": s.where} for s in plan.skipped
            ],
            "warnings": plan.warnings + skill_plan.warnings,
            "secrets": {
                "dotenv": str(env.dotenv_path),
                "moved": plan.moved,
                "written": sorted(plan.secrets) if not dry_run else [],
            },
            "skills": [
                {
                    "name": p.skill.name,
                    "action": _VERBS[p.action],
                    "from": str(p.skill.directory),
                    "to": str(p.target),
                }
                for p in skill_plan.skills
            ],
            "skills_skipped": [
                {"name": s.name, "reason": s.reason, "from": s.where} for s in skill_plan.skipped
            ],
            "not_imported": [
                {"what": self.instructions_kind, "from": str(path), "reason": _NO_INSTRUCTIONS}
                for path in self.instructions
            ],
        }


def _gated_notes(plan: ImportPlan, skill_plan: SkillImportPlan, env: Environment) -> list[str]:
    """What of the import the project gate keeps out: written into a home that is the
    project's (``HERMES_HOME=./.hermes``), the servers are not started and the skills not
    loaded while it is closed. They are written all the same, as ``hermes mcp add`` writes:
    the home is the one hermes uses, and opening the gate is the user's to decide."""
    from hermes_core._project_trust import config_refusal, project_refusal

    notes = []
    servers = list(plan.entries())
    refusal = config_refusal(env, env.config_path, "the MCP servers of the config")
    if servers and refusal is not None:
        named = _named("MCP server", servers)
        notes.append(
            f"{named} will not be started (hermes mcp list shows {_them(servers)} 'gated'): "
            f"{refusal}, or when the file is named on the command line (hermes --config "
            f"{env.config_path} ...)"
        )
    skills = [planned.skill.name for planned in skill_plan.to_copy()]
    refusal = project_refusal(env, env.skills_dir, "the skills folder")
    if skills and refusal is not None:
        named = _named("skill", skills)
        notes.append(
            f"{named} will not load (hermes skills list shows {_them(skills)} 'gated'): {refusal}"
        )
    return notes


def _them(names: list[str]) -> str:
    return "them" if len(names) > 1 else "it"


def _named(what: str, names: list[str]) -> str:
    """``skill 'a'``, ``skills 'a', 'b'``."""
    return f"{what}{'s' if len(names) > 1 else ''} {', '.join(repr(name) for name in names)}"


def _report_skills(plan: SkillImportPlan, env: Environment, *, dry_run: bool) -> None:
    prefix = "would be " if dry_run else ""
    for planned in plan.skills:
        line = f"{prefix}{_VERBS[planned.action]}: skill {planned.skill.name} from "
        line += planned.skill.source.describe()
        if planned.action == "keep":
            line += f"; it differs from {planned.target} (use --force)"
        click.echo(printable_lines(line))
    for item in plan.skipped:
        click.echo(printable_lines(f"skipped: skill {item.name} from {item.where}: {item.reason}"))
    copied = plan.to_copy()
    if dry_run and copied:
        click.echo(f"Dry run: nothing was copied to {env.skills_dir}.")
    elif copied:
        click.echo(f"Copied {len(copied)} skill(s) to {env.skills_dir}.")


def _report_servers(
    plan: ImportPlan, env: Environment, sources: Sequence[Source], agent: str, *, dry_run: bool
) -> None:
    from hermes_core._mcp.secrets import describe_moved

    config_path = env.config_path
    if not plan.servers and not plan.skipped:
        # Where it looked, so a file in another place (or not made yet) is seen at once.
        paths = dict.fromkeys(source.path for source in sources)
        looked = ", ".join(
            f"{path} ({'no servers' if path.exists() else 'no such file'})" for path in paths
        )
        click.echo(f"No MCP servers found in {agent}; looked in {looked}.")
        return
    prefix = "would be " if dry_run else ""
    # Names and reasons come from the agent's files, a cloned project's .mcp.json among them.
    for planned in plan.servers:
        verb = _VERBS[planned.action]
        line = f"{prefix}{verb}: {planned.server.name} from {planned.server.source.describe()}"
        if planned.action == "keep":
            line += "; it differs from mcp_servers." + planned.server.name + " (use --force)"
        click.echo(printable_lines(line))
    for item in plan.skipped:
        click.echo(printable_lines(f"skipped: {item.name} from {item.where}: {item.reason}"))
    references = {
        f"{server}.{where}": name
        for server, moved in plan.moved.items()
        for where, name in moved.items()
    }
    if references:
        line = describe_moved(references, env.dotenv_path, planned=dry_run)
        click.echo(printable_lines(line))  # the files' keys
    if dry_run:
        click.echo(f"Dry run: {config_path} was not changed.")
    elif plan.entries():
        click.echo(f"Wrote {len(plan.entries())} server(s) to {config_path}.")

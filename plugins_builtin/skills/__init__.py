"""The ``skills`` toolset: ``skills_list`` and ``skill_view`` over ``$HERMES_HOME/skills``.

A skill is a directory (``skills/<name>``, or ``skills/<category>/<name>``) holding ``SKILL.md``
(YAML front matter: ``name``, ``description``, ``required_environment_variables``,
``metadata``; then the instructions) and the files it uses.
Skills are read again at every call, so one added while the host runs is listed at once.

Viewing a skill loads it into the session: of the ``required_environment_variables`` it
declares, those the user allowed (``skills.allowed_environment_variables``; never hermes' own
credentials, :mod:`hermes_core._skills.variables`) that are set in the host's environment pass
the scrub of that session's ``execute_code`` scripts from then on (and only those, and only in
that session).

A skill whose folder is the project's (``HERMES_HOME=./.hermes``, a link into the working
directory) is not loaded unless the project gate is open
(:func:`hermes_core._project_trust.project_refusal`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._plugin_support import path_refusal, releasable_variables, scan_skills
from hermes_core.plugin import (
    Skill,
    SkillError,
    Tool,
    ToolAnnotations,
    ToolCaller,
    ToolResult,
    hookimpl,
    load_skills,
)

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_PLUGIN = "skills"


class SkillTools:
    """The handlers over one skills directory."""

    def __init__(
        self, root: Path, env: Environment | None = None, allowed: Collection[str] = ()
    ) -> None:
        self.root = root
        self.env = env
        self.allowed = allowed

    def _load(self) -> tuple[list[Skill], list[str]]:
        """The skills that may load, and a problem per one that cannot (or may not)."""
        return load_skills(self.root, self.env)

    def skills_list(self) -> ToolResult:
        """Every skill: name and description."""
        skills, problems = self._load()
        rows = [
            {"name": skill.name, "description": skill.description}
            | ({"category": skill.category} if skill.category is not None else {})
            for skill in skills
        ]
        lines = [f"{row['name']}: {row['description']}" for row in rows]
        if not lines:
            lines.append(f"no skills in {self.root}")
        lines += [f"[not loaded: {problem}]" for problem in problems]
        return ToolResult.text("\n".join(lines), structured={"skills": rows, "problems": problems})

    def _find(self, name: str) -> Skill | ToolResult:
        folders = scan_skills(self.root, self.env)
        skills = sorted(
            (folder.skill for folder in folders if folder.skill and folder.status == "loaded"),
            key=lambda skill: skill.name,
        )
        for skill in skills:
            if skill.name == name:
                return skill
        for folder in folders:
            if folder.status != "loaded" and name in (folder.name, folder.directory.name):
                return ToolResult.error(
                    "TOOL_ERROR", f"skill_view: skill {name!r} is not loaded: {folder.problem}"
                )
        for skill in skills:
            if skill.directory.name == name:
                return ToolResult.error(
                    "TOOL_ERROR",
                    f"skill_view: no skill {name!r}: the folder {skill.directory} holds the "
                    f"skill {skill.name!r} (the name in its SKILL.md); view it by that name",
                )
        held = [skill.name for skill in skills if skill.category == name]
        if held:
            return ToolResult.error(
                "TOOL_ERROR",
                f"skill_view: {name!r} is a category of skills: {', '.join(held)}; "
                "view one of them",
            )
        known = ", ".join(skill.name for skill in skills) or "none"
        return ToolResult.error("TOOL_ERROR", f"skill_view: no skill {name!r} (skills: {known})")

    def skill_view(self, name: str, caller: ToolCaller, path: str | None = None) -> ToolResult:
        """The body of skill ``name`` and the files beside it, or the file ``path`` of it;
        loads the skill into the session (its variables pass to the session's scripts)."""
        if (bad_path := path_refusal("skill_view", name=name, path=path)) is not None:
            return bad_path
        skill = self._find(name)
        if isinstance(skill, ToolResult):
            return skill
        wanted = skill.required_environment_variables
        released, refused = releasable_variables(wanted, self.allowed)
        passed = caller.pass_variables(released)
        missing = [variable for variable in released if variable not in passed]
        if path is not None:
            try:
                return ToolResult.text(skill.read(path), structured={"skill": name, "path": path})
            except SkillError as exc:
                return ToolResult.error("TOOL_ERROR", f"skill_view: {exc}")
        files = skill.files()
        parts = [skill.body.rstrip("\n")]
        if files:
            parts.append(
                "Files of this skill (read one with skill_view(name, path)):\n"
                + "\n".join(f"- {file}" for file in files)
            )
        parts.append(
            f"This skill's folder: {skill.directory} (its files' paths are relative to it: run "
            "a script of it by its path there)"
        )
        if passed:
            parts.append(f"[execute_code scripts of this session now see: {', '.join(passed)}]")
        if missing:
            parts.append(f"[not set in the environment: {', '.join(missing)}]")
        if refused:
            parts.append(
                "[not released to scripts: "
                + "; ".join(f"{variable} ({why})" for variable, why in refused.items())
                + "]"
            )
        return ToolResult.text(
            "\n\n".join(part for part in parts if part),
            structured={
                "name": skill.name,
                "description": skill.description,
                "directory": str(skill.directory),
                "files": files,
                "required_environment_variables": list(wanted),
                "variables_passed": passed,
                "variables_missing": missing,
                "variables_refused": refused,
                "metadata": dict(skill.metadata),
            },
        )


def build_tools(
    root: Path, env: Environment | None = None, allowed: Collection[str] = ()
) -> Sequence[Tool]:
    """``skills_list`` and ``skill_view`` over the skills in ``root``; ``env`` decides which
    are the project's, ``allowed`` the variables a skill may release."""
    handlers = SkillTools(root, env, allowed)
    reads = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
    common: dict[str, Any] = {
        "toolset": "skills",
        "source": "builtin",
        "source_name": _PLUGIN,
        "annotations": reads,
        "core": True,
        "timeout": 30.0,
    }
    return [
        Tool(
            name="skills_list",
            description=(
                "List the skills installed for this agent (name and description). A skill holds "
                "instructions and files for a kind of task; read one with skill_view."
            ),
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            handler=handlers.skills_list,
            **common,
        ),
        Tool(
            name="skill_view",
            description=(
                "Read a skill: its instructions and the list of its files, or with `path` one "
                "of those files. Viewing a skill lets its declared environment variables reach "
                "this session's execute_code scripts."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "path": {
                        "type": ["string", "null"],
                        "description": "A file of the skill, relative to its directory.",
                    },
                },
                "required": ["name"],
                "additionalProperties": False,
            },
            handler=handlers.skill_view,
            **common,
        ),
    ]


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The skills tools over ``$HERMES_HOME/skills``."""
    return build_tools(env.skills_dir, env, config.skills.allowed_environment_variables)

"""Skills (``$HERMES_HOME/skills/<name>/SKILL.md``): reading them, and bringing Claude Code's
into hermes (``hermes import-agent claude-code``)."""

from __future__ import annotations

from hermes_core._skills.library import (
    SKILL_FILE,
    Skill,
    SkillError,
    SkillFolder,
    load_skills,
    read_skill,
    scan_skills,
    skills_state,
)

__all__ = [
    "SKILL_FILE",
    "Skill",
    "SkillError",
    "SkillFolder",
    "load_skills",
    "read_skill",
    "scan_skills",
    "skills_state",
]

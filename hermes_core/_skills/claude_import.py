"""Claude Code's skills, planned and copied into ``$HERMES_HOME/skills/``.

The places read, highest precedence first: the project's ``.claude/skills/<name>/`` (in the
working directory; only when asked, ``--project``: a repository's skills are the repository's),
then the user's ``~/.claude/skills/<name>/``. A skill of one name is taken
from the highest place that has it. A folder whose ``SKILL.md`` cannot be read
(:func:`~hermes_core._skills.library.read_skill`), or that is too large, is skipped with the
reason. What happens to each, as for servers: ``add`` (new), ``unchanged`` (the same files are
already there), ``keep`` (it differs; kept without ``--force``) or ``change`` (replaced whole,
with ``--force``). A skill named like a category folder of skills
(``skills/<category>/<name>``), or like a skill a category holds, is skipped, saying so:
``--force`` never replaces a category whole, nor adds a second skill of one name. Only regular
files and folders are copied; symbolic links are not, so a
skill folder that is a link, or whose ``SKILL.md`` is one, is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from hermes_core._private_files import make_private_dir
from hermes_core._shown import shown
from hermes_core._skills.library import SKILL_FILE, SkillError, read_skill, scan_skills

if TYPE_CHECKING:
    from hermes_core._paths import Environment

__all__ = [
    "ClaudeSkill",
    "PlannedSkill",
    "SkillImportPlan",
    "SkillSource",
    "SkippedSkill",
    "apply_skill_import",
    "claude_skill_sources",
    "left_out_project_skills",
    "plan_skill_import",
    "read_claude_skills",
]

Action = Literal["add", "change", "unchanged", "keep"]
MAX_FILES: Final = 2000
MAX_BYTES: Final = 50 * 1024 * 1024
"""A skill folder with more files, or more bytes, is not imported."""


@dataclass(frozen=True)
class SkillSource:
    """A folder Claude Code keeps skills in."""

    label: str
    """``project skills`` or ``user skills``."""
    path: Path

    def describe(self) -> str:
        """``user skills (/home/me/.claude/skills)``."""
        return f"{self.label} ({self.path})"


@dataclass(frozen=True)
class ClaudeSkill:
    """A skill found in a Claude folder: its name, folder and files (relative paths)."""

    name: str
    directory: Path
    source: SkillSource
    files: tuple[str, ...]


@dataclass(frozen=True)
class SkippedSkill:
    """A skill folder that is not imported, and why."""

    name: str
    reason: str
    where: str


@dataclass(frozen=True)
class PlannedSkill:
    """What the import does with one skill, and where it goes."""

    skill: ClaudeSkill
    action: Action
    target: Path


@dataclass
class SkillImportPlan:
    """Every skill found and what will happen to it; the skipped ones and the warnings."""

    skills: list[PlannedSkill] = field(default_factory=list)
    skipped: list[SkippedSkill] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_copy(self) -> list[PlannedSkill]:
        """The skills to write: the added and changed ones."""
        return [planned for planned in self.skills if planned.action in ("add", "change")]


def _project_skills(env: Environment) -> SkillSource:
    return SkillSource("project skills", env.cwd / ".claude" / "skills")


def claude_skill_sources(env: Environment, *, project: bool = False) -> list[SkillSource]:
    """The folders skills are read from, highest precedence first: the project's only when
    ``project``."""
    from hermes_core._mcp.claude_import import user_home

    user = SkillSource("user skills", user_home(env) / ".claude" / "skills")
    return [_project_skills(env), user] if project else [user]


def left_out_project_skills(env: Environment) -> list[SkippedSkill]:
    """The project's skills, as skipped: imported only with ``--project``."""
    source = _project_skills(env)
    try:
        entries = sorted(source.path.iterdir(), key=lambda entry: entry.name)
    except OSError:
        return []
    reason = "a skill of the repository (.claude/skills): imported only with --project"
    return [
        SkippedSkill(entry.name, reason, source.describe())
        for entry in entries
        if not entry.name.startswith(".") and (entry / SKILL_FILE).is_file()
    ]


def _files(directory: Path) -> tuple[list[str], list[str]]:
    """The regular files under ``directory`` (relative POSIX paths, sorted) and the symbolic
    links left out."""
    files: list[str] = []
    links: list[str] = []
    for folder, dirnames, filenames in os.walk(directory, followlinks=False):
        base = Path(folder)
        for name in sorted(dirnames):
            if (base / name).is_symlink():
                links.append((base / name).relative_to(directory).as_posix())
        for name in filenames:
            path = base / name
            relative = path.relative_to(directory).as_posix()
            if path.is_symlink():
                links.append(relative)
            elif path.is_file():
                files.append(relative)
    return sorted(files), sorted(links)


def _linked(entry: Path) -> str | None:
    """Why the skill folder ``entry`` is not copied when it, or its ``SKILL.md``, is a
    symbolic link; ``None`` when neither is (a link to anything but a skill folder is passed
    over, as any other entry that is no skill folder)."""
    if entry.is_symlink():
        if not (entry / SKILL_FILE).is_file():
            return None
        link = entry
    elif (entry / SKILL_FILE).is_symlink():
        link = entry / SKILL_FILE
    else:
        return None
    return (
        f"{link}: a symbolic link (to {shown(os.readlink(link))}), and links are not copied; "
        "copy the folder there, or import it from where the link points"
    )


def read_claude_skills(
    sources: list[SkillSource],
) -> tuple[list[ClaudeSkill], list[SkippedSkill], list[str]]:
    """The skills of ``sources`` by name (the highest place wins), those skipped, and warnings
    (a skill shadowed by a higher place, links not copied)."""
    found: dict[str, ClaudeSkill] = {}
    skipped: list[SkippedSkill] = []
    warnings: list[str] = []
    for source in sources:
        try:
            entries = sorted(source.path.iterdir(), key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            warnings.append(f"{source.path}: cannot be read: {exc.strerror or exc}")
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            where = source.describe()
            link = _linked(entry)
            if link is not None:
                skipped.append(SkippedSkill(entry.name, link, where))
                continue
            if not entry.is_dir():
                continue
            if not (entry / SKILL_FILE).is_file():
                skipped.append(SkippedSkill(entry.name, f"no {SKILL_FILE} in {entry}", where))
                continue
            try:
                skill = read_skill(entry)
            except SkillError as exc:
                skipped.append(SkippedSkill(entry.name, str(exc), where))
                continue
            files, links = _files(entry)
            size = sum((entry / file).stat().st_size for file in files)
            if len(files) > MAX_FILES or size > MAX_BYTES:
                reason = (
                    f"{entry} holds {len(files)} files, {size} bytes: more than a skill "
                    f"({MAX_FILES} files, {MAX_BYTES} bytes)"
                )
                skipped.append(SkippedSkill(skill.name, reason, where))
                continue
            if skill.name in found:
                warnings.append(
                    f"skill {skill.name!r} of {where} is shadowed by the one of "
                    f"{found[skill.name].source.describe()}"
                )
                continue
            warnings.extend(f"{entry / link}: a symbolic link, not copied" for link in links)
            found[skill.name] = ClaudeSkill(skill.name, entry, source, tuple(files))
    return sorted(found.values(), key=lambda skill: skill.name), skipped, warnings


def _same(skill: ClaudeSkill, target: Path) -> bool:
    files, _ = _files(target)
    if tuple(files) != skill.files:
        return False
    return all(
        (skill.directory / file).read_bytes() == (target / file).read_bytes() for file in files
    )


def plan_skill_import(
    found: list[ClaudeSkill],
    skipped: list[SkippedSkill],
    target_root: Path,
    *,
    force: bool,
    warnings: list[str] | None = None,
) -> SkillImportPlan:
    """What importing ``found`` into ``target_root`` does, reading and writing nothing there
    but the existing skills' files (to compare them)."""
    plan = SkillImportPlan(skipped=list(skipped), warnings=list(warnings or []))
    categorized = [folder for folder in scan_skills(target_root) if folder.category is not None]
    categories = {folder.category for folder in categorized}
    held = {folder.skill.name: folder.directory for folder in categorized if folder.skill}
    for skill in found:
        target = target_root / skill.name
        where = skill.source.describe()
        if skill.name in categories:
            reason = f"{target} is a category folder of skills; not replaced: rename the skill"
            plan.skipped.append(SkippedSkill(skill.name, f"{reason} to import it", where))
            continue
        if skill.name in held:
            reason = f"already the skill in {held[skill.name]}; not imported: rename one of them"
            plan.skipped.append(SkippedSkill(skill.name, reason, where))
            continue
        action: Action
        if not target.exists():
            action = "add"
        elif target.is_dir() and _same(skill, target):
            action = "unchanged"
        else:
            action = "change" if force else "keep"
        plan.skills.append(PlannedSkill(skill, action, target))
    return plan


def _copy(skill: ClaudeSkill, destination: Path) -> None:
    destination.mkdir(parents=True)
    for file in skill.files:
        target = destination / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(skill.directory / file, target)


def apply_skill_import(plan: SkillImportPlan) -> None:
    """Copy the added and changed skills. Each is copied beside its target under a hidden name
    first, then renamed into place (a changed one replaces the old folder whole), so a failure
    never leaves half a skill where skills are read."""
    for planned in plan.to_copy():
        target = planned.target
        make_private_dir(target.parent)
        stamp = uuid.uuid4().hex[:8]
        fresh = target.with_name(f".{target.name}.importing-{stamp}")
        try:
            _copy(planned.skill, fresh)
            if planned.action == "change" and (target.exists() or target.is_symlink()):
                old = target.with_name(f".{target.name}.replaced-{stamp}")
                target.rename(old)
                fresh.rename(target)
                if old.is_dir() and not old.is_symlink():
                    shutil.rmtree(old)
                else:
                    old.unlink()
            else:
                fresh.rename(target)
        finally:
            if fresh.exists():
                shutil.rmtree(fresh)

"""Skills: ``$HERMES_HOME/skills/<name>/SKILL.md``, YAML front matter and a Markdown body, or
one level down in a category folder, ``skills/<category>/<name>/SKILL.md`` (Hermes Agent's
layout): a folder holding a ``SKILL.md`` is a skill (its subfolders are its files), and a
folder without one whose subfolders hold one is a category.

The front matter (between a first line ``---`` and the next ``---``), read within the limits of
:mod:`hermes_core._yaml_limits`:

- ``name``: 1-64 letters, digits, ``-``, ``_`` or ``.`` (default: the directory's name);
- ``description``: text, required (what the skill is for; the listing shows it);
- ``required_environment_variables``: the variables the skill's scripts need, as names or as
  mappings with a ``name`` (``[{name: GH_TOKEN, prompt: ...}]``);
- ``metadata``: a mapping, kept as given; other keys are kept in ``metadata`` too.

Files beside ``SKILL.md`` (scripts, references) are part of the skill and are read by their
path relative to its directory, never outside it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from hermes_core._shown import clipped, shown

if TYPE_CHECKING:
    from hermes_core._paths import Environment

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

SKILL_FILE: Final = "SKILL.md"
SETTLED_SECONDS: Final = 2.0
"""How long ago a ``SKILL.md`` must have changed for :func:`skills_state` to vouch for it: a
file written twice within a file system's timestamp step can keep its time and size."""
SKILL_MAX_BYTES: Final = 1024 * 1024
"""The largest ``SKILL.md`` (and the largest file beside it) that is read."""
FILES_LISTED: Final = 500
"""How many files beside ``SKILL.md`` a skill lists."""
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_VARIABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KNOWN: Final = frozenset({"name", "description", "required_environment_variables", "metadata"})


class SkillError(ValueError):
    """A skill that cannot be read; the message names the file (and the key)."""


@dataclass(frozen=True)
class Skill:
    """One skill: what its front matter says, its body and where it lives."""

    name: str
    description: str
    directory: Path
    body: str = ""
    required_environment_variables: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    category: str | None = None
    """The category folder the skill is in (``github`` for ``skills/github/<name>``), or
    ``None`` for one directly in the skills folder."""

    def files(self) -> list[str]:
        """The regular files beside ``SKILL.md``, by path relative to the skill's directory
        (``scripts/fetch.py``), sorted; hidden ones and symbolic links are left out."""
        found: list[str] = []
        _walk(self.directory, "", found)
        return found

    def read(self, relative: str) -> str:
        """The text of the file ``relative`` (a path relative to the skill's directory);
        :class:`SkillError` when it is outside the directory, not a regular text file, or
        larger than :data:`SKILL_MAX_BYTES`."""
        root = self.directory.resolve()
        target = (root / relative).resolve()
        if not target.exists() and "#" in relative:
            # A Markdown link of the instructions, passed on as written: file.md#section.
            target = (root / relative.partition("#")[0]).resolve()
        if not target.is_relative_to(root):
            raise SkillError(f"{relative}: not a file of skill {self.name!r}")
        if target.is_dir():
            raise SkillError(
                f"{relative}: a folder of skill {self.name!r}; skill_view(name) lists its files"
            )
        if not target.is_file():
            raise SkillError(f"{relative}: skill {self.name!r} has no such file")
        if target.stat().st_size > SKILL_MAX_BYTES:
            raise SkillError(f"{relative}: larger than {SKILL_MAX_BYTES} bytes")
        data = target.read_bytes()
        if b"\x00" in data[:8192]:
            raise SkillError(f"{relative}: a binary file")
        return data.decode("utf-8", "replace")


def _walk(directory: Path, prefix: str, found: list[str]) -> None:
    """The files of ``directory`` into ``found`` in sorted path order, up to
    :data:`FILES_LISTED`: hidden folders (``.git``) are not entered and the walk stops at the
    cap, so a large tree costs what is listed, not all it holds."""
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if len(found) >= FILES_LISTED:
            return
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), relative + "/", found)
        elif entry.is_file(follow_symlinks=False) and relative != SKILL_FILE:
            found.append(relative)


def _front_matter(text: str, where: Path) -> tuple[str, str]:
    # An editor may begin the file with a byte order mark, which it does not show.
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillError(f"{where}: no YAML front matter (a first line '---')")
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]).lstrip("\n")
    raise SkillError(f"{where}: the front matter has no closing '---'")


def _variables(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        example = value if isinstance(value, str) and _VARIABLE.fullmatch(value) else "GH_TOKEN"
        raise SkillError(
            f"{where}: required_environment_variables: must be a list of variable names, "
            f"e.g. [{example}]"
        )
    names = []
    for item in value:
        name = item.get("name") if isinstance(item, Mapping) else item
        if not isinstance(name, str) or not _VARIABLE.fullmatch(name):
            raise SkillError(
                f"{where}: required_environment_variables: {shown(name)} is not a variable name"
            )
        names.append(name)
    return tuple(dict.fromkeys(names))


def _quoting_hint(front: str, line: int | None) -> str:
    """For a plain value holding ``': '`` (``description: Use when: ...``), how to write it."""
    lines = front.split("\n")
    if line is None or not 0 <= line < len(lines):
        return ""
    key, _, value = lines[line].partition(": ")
    if not _NAME.fullmatch(key) or not value.strip() or value.lstrip()[0] in "\"'":
        return ""
    quoted = value.strip().replace("\\", "\\\\").replace('"', '\\"')
    return f"; a value holding ': ' must be quoted: {key}: \"{clipped(quoted, 200)}\""


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def read_skill(directory: Path) -> Skill:
    """The skill in ``directory`` (its ``SKILL.md``); :class:`SkillError` naming the file and
    the key when it cannot be read."""
    from hermes_core._yaml_limits import YamlFileError, read_limited

    path = directory / SKILL_FILE
    try:
        text = read_limited(path, SKILL_MAX_BYTES)
    except YamlFileError as exc:
        raise SkillError(f"{path}: {exc}") from None
    if text is None:
        raise SkillError(f"{path}: no such file")
    return _parsed_skill(directory, text)


PARSED_KEPT: Final = 128
"""Skills kept parsed, by folder and file text."""


# The file is read each time, its front matter parsed once per text: every new conversation
# names the skills in its system prompt, and the YAML parser takes milliseconds a skill.
@lru_cache(maxsize=PARSED_KEPT)
def _parsed_skill(directory: Path, text: str) -> Skill:
    from ruamel.yaml.error import YAMLError

    from hermes_core._yaml_limits import load_limited, manifest_yaml, yaml_problem

    path = directory / SKILL_FILE
    front, body = _front_matter(text, path)
    try:
        data = load_limited(manifest_yaml(), front) if front.strip() else {}
    except YAMLError as exc:
        line, problem = yaml_problem(exc)
        at = f":{line + 2}" if line is not None else ""  # the front matter starts on line 2
        hint = _quoting_hint(front, line) if "mapping values" in problem else ""
        raise SkillError(
            f"{path}{at}: the front matter is not valid YAML: {problem}{hint}"
        ) from None
    if not isinstance(data, Mapping):
        raise SkillError(f"{path}: the front matter must be a mapping of keys to values")
    where = str(path)
    name = data.get("name", directory.name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise SkillError(
            f"{where}: name: {shown(name)} is not a valid skill name: 1-64 letters, digits, "
            "'-', '_' or '.'"
        )
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise SkillError(
            f"{where}: description: must be text (what the skill is for), not {_kind(description)}"
        )
    if not description or not description.strip():
        raise SkillError(f"{where}: description: required (what the skill is for)")
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise SkillError(f"{where}: metadata: must be a mapping")
    extra = {str(key): value for key, value in data.items() if key not in _KNOWN}
    return Skill(
        name=name,
        description=description.strip(),
        directory=directory,
        body=body,
        required_environment_variables=_variables(
            data.get("required_environment_variables"), where
        ),
        metadata={**extra, **metadata},
    )


@dataclass(frozen=True)
class SkillFolder:
    """One folder of the skills directory: its skill when it loads, else why not
    (``status``: ``loaded``, ``error``, or ``gated``: the project's, the gate closed), and
    the category folder it is in, if any."""

    directory: Path
    status: Literal["loaded", "error", "gated"]
    skill: Skill | None = None
    problem: str | None = None
    category: str | None = None

    @property
    def name(self) -> str:
        """The skill's name, or the folder's for one that did not load."""
        return self.skill.name if self.skill is not None else self.directory.name


def _subfolders(folder: Path) -> list[Path]:
    """The folders in ``folder`` that may hold a skill, by name (not hidden, not ``_``)."""
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
    except OSError:
        return []
    return [e for e in entries if not e.name.startswith((".", "_")) and e.is_dir()]


def _misnamed(folder: Path) -> str | None:
    """Why ``folder`` holds no ``SKILL.md`` when it holds the file named otherwise
    (``skill.md``, on a case-sensitive file system); else ``None``."""
    try:
        children = sorted(folder.iterdir(), key=lambda child: child.name)
    except OSError:
        return None
    for child in children:
        if child.name.lower() == SKILL_FILE.lower() and child.is_file():
            return f"{child}: the file must be named {SKILL_FILE}: rename it"
    return None


def _misplaced(folder: Path, in_category: bool) -> str | None:
    """Why ``folder``, which has no ``SKILL.md`` (and, directly in the skills folder, no
    subfolder holding one), looks like a skill put wrong: its file named otherwise, or skills
    a level deeper than read; ``None`` for any other folder."""
    if (misnamed := _misnamed(folder)) is not None:
        return misnamed
    if in_category:
        deeper = [child for child in _subfolders(folder) if (child / SKILL_FILE).is_file()]
        target = folder.parent
    else:
        deeper = [
            grandchild
            for child in _subfolders(folder)
            for grandchild in _subfolders(child)
            if (grandchild / SKILL_FILE).is_file()
        ]
        target = folder
    if deeper:
        return (
            f"{folder}: no {SKILL_FILE}; skills are read at skills/<name>/{SKILL_FILE} or "
            f"skills/<category>/<name>/{SKILL_FILE}: move {deeper[0]} to "
            f"{target / deeper[0].name}"
        )
    if not in_category:  # a category whose one skill's file is named otherwise
        for child in _subfolders(folder):
            if (misnamed := _misnamed(child)) is not None:
                return misnamed
    return None


def _skill_folder(
    directory: Path, category: str | None, refusal: str | None, claimed: dict[str, Path]
) -> SkillFolder:
    """The skill in ``directory``, read unless ``refusal`` (the gate) says no; of two
    claiming one name, the first in ``claimed`` keeps it."""
    if refusal is not None:
        return SkillFolder(directory, "gated", problem=refusal, category=category)
    try:
        skill = read_skill(directory)
    except SkillError as exc:
        return SkillFolder(directory, "error", problem=str(exc), category=category)
    if category is not None:
        skill = replace(skill, category=category)
    if skill.name in claimed:
        problem = (
            f"{directory}: skill {skill.name!r} is also in {claimed[skill.name]}; "
            "this one is ignored"
        )
        return SkillFolder(directory, "error", skill, problem, category)
    claimed[skill.name] = directory
    return SkillFolder(directory, "loaded", skill, category=category)


def scan_skills(root: Path, env: Environment | None = None) -> list[SkillFolder]:
    """Every folder under ``root`` holding a ``SKILL.md``, and every one of a category folder
    (``root/<category>/<name>``), in path order; with ``env``, a folder that is the project's
    is ``gated``, unread, unless the project gate is open. Of two skills claiming one name,
    the first by path wins (the other is an ``error`` naming both)."""
    from hermes_core._project_trust import project_refusal

    try:
        entries = sorted(root.iterdir(), key=lambda entry: entry.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [
            SkillFolder(root, "error", problem=f"{root}: cannot be read: {exc.strerror or exc}")
        ]

    def refused(directory: Path) -> str | None:
        # A project's folder, the gate closed, is not read at all: not even its errors, which
        # would quote its words, reach the model.
        what = f"skill {directory.name!r}"
        return None if env is None else project_refusal(env, directory, what)

    claimed: dict[str, Path] = {}
    found: list[SkillFolder] = []
    for entry in entries:
        if entry.name.startswith((".", "_")) or not entry.is_dir():
            continue
        if (entry / SKILL_FILE).is_file():
            found.append(_skill_folder(entry, None, refused(entry), claimed))
            continue
        members = _subfolders(entry)
        skills = {member for member in members if (member / SKILL_FILE).is_file()}
        if not skills:
            if refused(entry) is None and (misplaced := _misplaced(entry, False)) is not None:
                found.append(SkillFolder(entry, "error", problem=misplaced))
            continue
        for member in members:
            if member in skills:
                found.append(_skill_folder(member, entry.name, refused(member), claimed))
            elif refused(member) is None and (misplaced := _misplaced(member, True)) is not None:
                found.append(SkillFolder(member, "error", problem=misplaced, category=entry.name))
    return found


def load_skills(root: Path, env: Environment | None = None) -> tuple[list[Skill], list[str]]:
    """Every skill under ``root`` (``<root>/<name>/SKILL.md``, ``<root>/<category>/<name>/
    SKILL.md``) by name, and a problem per directory that could not be read (the others still
    load). Of two skills claiming one name, the first directory by path wins. With ``env``, a
    skill that is the project's is left out, and named among the problems, unless the project
    gate is open."""
    folders = scan_skills(root, env)
    skills = [folder.skill for folder in folders if folder.skill and folder.status == "loaded"]
    problems = [folder.problem for folder in folders if folder.problem]
    return sorted(skills, key=lambda skill: skill.name), problems


SkillsState = tuple[tuple[str, bool, int, int, int, int, int], ...]
"""Each skill folder's path relative to the skills folder, whether it is gated, and its
``SKILL.md``'s device, inode, size, modification time and change time."""


def skills_state(root: Path, env: Environment | None = None) -> SkillsState | None:
    """What :func:`load_skills` of ``root`` would read, by the folders' names and their
    ``SKILL.md`` files' metadata, without reading one: equal while no skill is added, removed,
    edited or gated; ``None`` when it cannot vouch for that (a ``SKILL.md`` changed within
    :data:`SETTLED_SECONDS`, or ``root`` unreadable)."""
    from hermes_core._project_trust import project_refusal

    try:
        entries = sorted(root.iterdir(), key=lambda entry: entry.name)
    except FileNotFoundError:
        return ()
    except OSError:
        return None
    settled = time.time_ns() - int(SETTLED_SECONDS * 1e9)
    state = []
    for entry in entries:
        if entry.name.startswith((".", "_")) or not entry.is_dir():
            continue
        try:
            folders = [(entry.name, entry, (entry / SKILL_FILE).stat())]
        except OSError:
            folders = []
            for member in _subfolders(entry):  # a category's skills
                try:
                    member_file = (member / SKILL_FILE).stat()
                except OSError:
                    continue  # no skill (a misplaced one is not named either)
                folders.append((f"{entry.name}/{member.name}", member, member_file))
        for name, directory, found in folders:
            if found.st_mtime_ns >= settled:
                return None
            gated = env is not None and project_refusal(env, directory, "") is not None
            times = (found.st_mtime_ns, found.st_ctime_ns)  # ctime: its mode or owner changed
            state.append((name, gated, found.st_dev, found.st_ino, found.st_size, *times))
    return tuple(state)

"""``hermes import-agent claude-code`` brings Claude Code's skills (``~/.claude/skills/*/`` and the
project's ``.claude/skills/*/``) into ``$HERMES_HOME/skills/``: real skill folders in a fixture
home, through the real command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


def skill_md(name: str, description: str, body: str = "Do the thing.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def write_files(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its text (the whole state of a folder)."""
    if not root.exists():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def cli(tmp_path: Path) -> HermesCli:
    user_home = tmp_path / "home"
    made = InProcessCli(
        tmp_path, home=user_home / ".hermes", user_home=user_home, work=tmp_path / "project"
    )
    write_files(
        user_home / ".claude" / "skills",
        {
            "pdf-tools/SKILL.md": skill_md("pdf-tools", "Split and merge PDF files."),
            "pdf-tools/scripts/split.py": "print('split')\n",
            "shared/SKILL.md": skill_md("shared", "The user's copy."),
            "notes.txt": "not a skill folder\n",
        },
    )
    write_files(
        made.work / ".claude" / "skills",
        {
            "shared/SKILL.md": skill_md("shared", "The project's copy."),
            "broken/SKILL.md": "no front matter here\n",
        },
    )
    return made


def run(cli: HermesCli, *args: str) -> subprocess.CompletedProcess[str]:
    # The project's skills come only with --project (issue 27; tests/security covers without).
    return cli.run("import-agent", "claude-code", "--project", *args)


def test_import_brings_user_and_project_skills_the_project_winning(cli: HermesCli) -> None:
    done = run(cli)

    skills = cli.home / "skills"
    assert tree(skills) == {
        "pdf-tools/SKILL.md": skill_md("pdf-tools", "Split and merge PDF files."),
        "pdf-tools/scripts/split.py": "print('split')\n",
        "shared/SKILL.md": skill_md("shared", "The project's copy."),
    }
    claude = cli.user_home / ".claude" / "skills"
    assert f"added: skill pdf-tools from user skills ({claude})" in done.stdout
    project = cli.work / ".claude" / "skills"
    assert f"added: skill shared from project skills ({project})" in done.stdout
    assert f"skipped: skill broken from project skills ({project}): " in done.stdout
    assert "no YAML front matter" in done.stdout
    assert "skill 'shared' of user skills" in done.stderr
    assert "is shadowed by the one of project skills" in done.stderr
    assert f"Copied 2 skill(s) to {skills}." in done.stdout
    listed = cli.run("tools", "call", "skills_list").stdout
    assert "pdf-tools: Split and merge PDF files." in listed
    assert "shared: The project's copy." in listed


def test_an_existing_skill_is_kept_without_force_and_replaced_whole_with_it(
    cli: HermesCli,
) -> None:
    mine = {
        "pdf-tools/SKILL.md": skill_md("pdf-tools", "My own edited copy."),
        "pdf-tools/extra.md": "my notes\n",
    }
    write_files(cli.home / "skills", mine)
    run(cli)  # shared is added; pdf-tools differs and is kept

    again = run(cli)
    kept = tree(cli.home / "skills")
    forced = run(cli, "--force", "--json")

    assert "; it differs from " in again.stdout
    assert f"kept: skill pdf-tools from user skills ({cli.user_home / '.claude' / 'skills'})" in (
        again.stdout
    )
    assert "unchanged: skill shared from project skills" in again.stdout
    assert {path: kept[path] for path in mine} == mine
    actions = {item["name"]: item["action"] for item in json.loads(forced.stdout)["skills"]}
    assert actions == {"pdf-tools": "changed", "shared": "unchanged"}
    replaced = tree(cli.home / "skills" / "pdf-tools")
    assert replaced == {
        "SKILL.md": skill_md("pdf-tools", "Split and merge PDF files."),
        "scripts/split.py": "print('split')\n",
    }
    assert not [p for p in (cli.home / "skills").iterdir() if p.name.startswith(".")]


def test_dry_run_writes_no_skill(cli: HermesCli) -> None:
    write_files(cli.home / "skills", {"pdf-tools/SKILL.md": skill_md("pdf-tools", "Mine.")})
    before = tree(cli.home)

    done = run(cli, "--dry-run")
    report = json.loads(run(cli, "--dry-run", "--json").stdout)

    assert tree(cli.home) == before
    assert "would be added: skill shared from project skills" in done.stdout
    assert "would be kept: skill pdf-tools" in done.stdout
    assert f"Dry run: nothing was copied to {cli.home / 'skills'}." in done.stdout
    assert report["dry_run"] is True
    assert {item["name"]: item["action"] for item in report["skills"]} == {
        "pdf-tools": "kept",
        "shared": "added",
    }
    assert report["skills_skipped"][0]["name"] == "broken"


def test_symbolic_links_in_a_skill_are_not_copied(cli: HermesCli) -> None:
    secret = cli.root / "secret.txt"
    secret.write_text("hunter2", encoding="utf-8")
    (cli.user_home / ".claude" / "skills" / "pdf-tools" / "key.txt").symlink_to(secret)

    done = run(cli)

    copied = cli.home / "skills" / "pdf-tools"
    assert not (copied / "key.txt").exists()
    assert "key.txt: a symbolic link, not copied" in done.stderr
    assert "hunter2" not in json.dumps(tree(cli.home / "skills"))


def test_a_skill_folder_or_skill_md_that_is_a_link_is_skipped_by_name(cli: HermesCli) -> None:
    """A link is not copied, so a skill reached through one is not imported: it is listed as
    skipped with its path and why, never copied half (a folder with no SKILL.md is no skill),
    and the other skills are imported."""
    dotfiles = cli.root / "dotfiles"
    write_files(
        dotfiles,
        {
            "linked-md.md": skill_md("linked-md", "Its SKILL.md is a link."),
            "linked-folder/SKILL.md": skill_md("linked-folder", "The whole folder is a link."),
        },
    )
    claude = cli.user_home / ".claude" / "skills"
    write_files(claude, {"linked-md/scripts/run.py": "print('run')\n"})
    (claude / "linked-md" / "SKILL.md").symlink_to(dotfiles / "linked-md.md")
    (claude / "linked-folder").symlink_to(dotfiles / "linked-folder")

    done = run(cli)
    report = json.loads(run(cli, "--dry-run", "--json").stdout)

    skills = cli.home / "skills"
    assert sorted(path.name for path in skills.iterdir()) == ["pdf-tools", "shared"]
    skipped = {item["name"]: item["reason"] for item in report["skills_skipped"]}
    assert f"{claude / 'linked-md' / 'SKILL.md'}: a symbolic link" in skipped["linked-md"]
    assert f"{claude / 'linked-folder'}: a symbolic link" in skipped["linked-folder"]
    assert "skipped: skill linked-md from user skills" in done.stdout
    assert "skipped: skill linked-folder from user skills" in done.stdout


def test_force_never_replaces_a_category_folder_nor_doubles_a_skill_of_one(
    cli: HermesCli,
) -> None:
    # Hermes Agent keeps skills in categories (skills/<category>/<name>/SKILL.md): a Claude
    # Code skill named like a category replaced the whole folder with --force, every skill in
    # it lost, and one named like a category's skill was added beside it, both then claiming
    # one name.
    mine = {
        "pdf-tools/pdf-merge/SKILL.md": skill_md("pdf-merge", "My merge skill."),
        "team/shared/SKILL.md": skill_md("shared", "My team's copy."),
    }
    write_files(cli.home / "skills", mine)

    forced = run(cli, "--force")

    skills = cli.home / "skills"
    assert tree(skills) == mine
    claude = cli.user_home / ".claude" / "skills"
    assert (
        f"skipped: skill pdf-tools from user skills ({claude}): {skills / 'pdf-tools'} is a "
        "category folder of skills; not replaced: rename the skill to import it"
    ) in forced.stdout
    assert (
        f"skipped: skill shared from project skills ({cli.work / '.claude' / 'skills'}): "
        f"already the skill in {skills / 'team' / 'shared'}; not imported: rename one of them"
    ) in forced.stdout
    listed = cli.run("tools", "call", "skills_list").stdout
    assert "not loaded" not in listed

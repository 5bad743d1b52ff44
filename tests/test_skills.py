"""Skills: real skill folders in a temporary HERMES_HOME, the skills toolset, and the
environment variables a viewed skill lets through to that session's execute_code scripts."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import Harness, build_harness, make_env

from hermes_core._skills import Skill, SkillError, load_skills, read_skill


def write_skill(
    root: Path, directory: str, front: str, body: str = "# Steps\n", **files: str
) -> Path:
    folder = root / directory
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{textwrap.dedent(front)}---\n{body}")
    for relative, text in files.items():
        target = folder / relative.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


GITHUB_SKILL = """\
name: github-triage
description: Triage GitHub issues with the gh CLI.
required_environment_variables:
  - GH_TOKEN
  - name: GH_ENTERPRISE_TOKEN
    prompt: a token for the enterprise server
metadata:
  tags: [github]
"""


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(**variables: str) -> Harness:
        root = tmp_path / f"h{len(made)}"
        config: dict[str, Any] = {
            "approvals": {"allow": ["execute_code"]},
            # A skill releases only what the user allowed (issue 27).
            "skills": {"allowed_environment_variables": ["GH_TOKEN", "GH_ENTERPRISE_TOKEN"]},
        }
        harness = build_harness(root, config=config, env=make_env(root, **variables))
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


# Reading skills -------------------------------------------------------------------------------


def test_a_skill_is_read_from_its_front_matter_and_body(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "github-triage", GITHUB_SKILL, "Run `gh issue list`.\n")

    skill = read_skill(folder)

    assert skill == Skill(
        name="github-triage",
        description="Triage GitHub issues with the gh CLI.",
        directory=folder,
        body="Run `gh issue list`.\n",
        required_environment_variables=("GH_TOKEN", "GH_ENTERPRISE_TOKEN"),
        metadata={"tags": ["github"]},
    )


def test_a_skill_without_a_name_is_named_after_its_directory(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "notes", "description: Keep notes.\n")

    assert read_skill(folder).name == "notes"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param("# no front matter\n", "no YAML front matter", id="no-front-matter"),
        pytest.param("---\ndescription: x\n", "has no closing '---'", id="unclosed"),
        pytest.param("---\nname: x\n---\n", "description: required", id="no-description"),
        pytest.param(
            "---\ndescription: x\nrequired_environment_variables: GH_TOKEN\n---\n",
            "required_environment_variables: must be a list",
            id="variables-not-a-list",
        ),
        pytest.param(
            "---\ndescription: x\nrequired_environment_variables: [not a name]\n---\n",
            "'not a name' is not a variable name",
            id="bad-variable",
        ),
        pytest.param(
            "---\ndescription: [x\n---\n",
            "SKILL.md:2: the front matter is not valid YAML",
            id="yaml",
        ),
        pytest.param(
            "---\nname: ../up\ndescription: x\n---\n", "is not a valid skill name", id="name"
        ),
    ],
)
def test_a_broken_skill_is_an_error_naming_the_file_and_the_key(
    tmp_path: Path, text: str, error: str
) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text(text)

    with pytest.raises(SkillError) as caught:
        read_skill(folder)

    assert str(folder / "SKILL.md") in str(caught.value)
    assert error in str(caught.value)


def test_load_skills_reports_broken_ones_and_loads_the_others(tmp_path: Path) -> None:
    write_skill(tmp_path, "good", "description: Works.\n")
    broken = tmp_path / "bad"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no front matter\n")
    (tmp_path / "not-a-skill").mkdir()

    skills, problems = load_skills(tmp_path)

    assert [skill.name for skill in skills] == ["good"]
    assert len(problems) == 1
    assert str(broken / "SKILL.md") in problems[0]


def test_a_skill_edited_or_broken_since_it_was_read_is_read_anew(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "notes", "description: First words.\n")
    assert read_skill(folder).description == "First words."

    (folder / "SKILL.md").write_text("---\ndescription: Second words.\n---\n# Steps\n")
    assert [skill.description for skill in load_skills(tmp_path)[0]] == ["Second words."]

    (folder / "SKILL.md").write_text("---\ndescription: [unclosed\n---\n")
    with pytest.raises(SkillError, match="not valid YAML"):
        read_skill(folder)
    (folder / "SKILL.md").write_text("---\ndescription: First words.\n---\n# Steps\n")
    assert read_skill(folder) == read_skill(folder)
    assert read_skill(folder).description == "First words."


# The toolset ----------------------------------------------------------------------------------


@pytest.mark.subprocess
def test_skills_list_gives_names_and_descriptions(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    write_skill(harness.env.skills_dir, "github-triage", GITHUB_SKILL)
    write_skill(harness.env.skills_dir, "release", "description: Cut a release.\n")

    result = harness.call("skills_list", {})

    assert result.text_content == (
        "github-triage: Triage GitHub issues with the gh CLI.\nrelease: Cut a release."
    )
    assert result.structured["skills"] == [
        {"name": "github-triage", "description": "Triage GitHub issues with the gh CLI."},
        {"name": "release", "description": "Cut a release."},
    ]


@pytest.mark.subprocess
def test_skill_view_gives_the_body_and_the_files_beside_it(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    write_skill(
        harness.env.skills_dir,
        "release",
        "description: Cut a release.\n",
        "1. Run scripts/bump.py\n",
        **{"scripts__bump.py": "print('bumped')\n", "reference.md": "# Versions\n"},
    )

    viewed = harness.call("skill_view", {"name": "release"})
    script = harness.call("skill_view", {"name": "release", "path": "scripts/bump.py"})

    assert viewed.text_content.startswith("1. Run scripts/bump.py\n\nFiles of this skill")
    assert viewed.structured["files"] == ["reference.md", "scripts/bump.py"]
    assert script.text_content == "print('bumped')\n"


def test_a_skills_files_are_listed_in_path_order_without_hidden_folders_up_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core._skills import library

    folder = write_skill(
        tmp_path,
        "release",
        "description: Cut a release.\n",
        **{
            "a.txt": "",
            "a__b.md": "",
            "node_modules__x__index.js": "",
            ".git__objects__pack": "",
            "scripts__.cache__kept": "",
            "scripts__bump.py": "",
            "Z.md": "",
        },
    )
    (folder / "outside").symlink_to(tmp_path)
    skill = read_skill(folder)

    assert skill.files() == [
        "Z.md",
        "a/b.md",
        "a.txt",
        "node_modules/x/index.js",
        "scripts/bump.py",
    ]
    monkeypatch.setattr(library, "FILES_LISTED", 2)
    assert skill.files() == ["Z.md", "a/b.md"]


@pytest.mark.subprocess
def test_skill_view_never_reads_outside_the_skill(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    folder = write_skill(harness.env.skills_dir, "release", "description: Cut a release.\n")
    (harness.env.home / "secret.txt").write_text("hunter2")
    (folder / "link.txt").symlink_to(harness.env.home / "secret.txt")

    escaped = harness.call("skill_view", {"name": "release", "path": "../../secret.txt"})
    linked = harness.call("skill_view", {"name": "release", "path": "link.txt"})
    unknown = harness.call("skill_view", {"name": "releases"})

    assert escaped.error_code == linked.error_code == "TOOL_ERROR"
    assert "not a file of skill 'release'" in escaped.text_content
    assert "not a file of skill 'release'" in linked.text_content
    assert "hunter2" not in escaped.text_content + linked.text_content
    assert unknown.text_content == "skill_view: no skill 'releases' (skills: release)"


@pytest.mark.subprocess
def test_skill_view_of_a_skill_that_did_not_load_says_why(
    harnesses: Callable[..., Harness],
) -> None:
    # walk9's walk: skills_list named the broken skill and why, but skill_view of it answered
    # "no skill 'release' (skills: ...)", as for a name nobody wrote.
    harness = harnesses()
    root = harness.env.skills_dir
    write_skill(root, "notes", "description: Take notes.\n")
    broken = write_skill(root, "release", "name: release\n")
    huge = write_skill(root, "huge", "description: Big.\n", "x" * 1_100_000)

    missing = harness.call("skill_view", {"name": "release"})
    too_big = harness.call("skill_view", {"name": "huge"})
    unknown = harness.call("skill_view", {"name": "releases"})

    assert missing.error_code == too_big.error_code == "TOOL_ERROR"
    assert missing.text_content == (
        f"skill_view: skill 'release' is not loaded: {broken / 'SKILL.md'}: description: "
        "required (what the skill is for)"
    )
    assert too_big.text_content.startswith(
        f"skill_view: skill 'huge' is not loaded: {huge / 'SKILL.md'}: larger than 1048576 bytes"
    )
    assert unknown.text_content == "skill_view: no skill 'releases' (skills: notes)"


# Environment passthrough ----------------------------------------------------------------------

PRINT_ENVIRONMENT = "import json, os\nprint(json.dumps(sorted(os.environ)))\n"


def script_sees(harness: Harness, session: Any) -> set[str]:
    result = harness.call("execute_code", {"code": PRINT_ENVIRONMENT}, session)
    assert isinstance(result.structured, dict), result.text_content
    return set(json.loads(result.structured["output"]))


@pytest.mark.subprocess
def test_a_skills_variables_pass_only_after_skill_view_in_that_session_and_only_when_set(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(GH_TOKEN="ghp-1", FOO_API_KEY="k-2")
    write_skill(harness.env.skills_dir, "github-triage", GITHUB_SKILL)
    viewer, other = harness.session(), harness.session()

    before = script_sees(harness, viewer)
    viewed = harness.call("skill_view", {"name": "github-triage"}, viewer)
    after = script_sees(harness, viewer)
    elsewhere = script_sees(harness, other)

    assert "GH_TOKEN" not in before
    assert viewed.structured["variables_passed"] == ["GH_TOKEN"]
    assert viewed.structured["variables_missing"] == ["GH_ENTERPRISE_TOKEN"]
    assert "[execute_code scripts of this session now see: GH_TOKEN]" in viewed.text_content
    assert "GH_TOKEN" in after
    assert "GH_ENTERPRISE_TOKEN" not in after
    assert "FOO_API_KEY" not in after
    assert "GH_TOKEN" not in elsewhere


@pytest.mark.subprocess
def test_listing_skills_loads_none_of_them(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses(GH_TOKEN="ghp-1")
    write_skill(harness.env.skills_dir, "github-triage", GITHUB_SKILL)
    session = harness.session()

    harness.call("skills_list", {}, session)

    assert "GH_TOKEN" not in script_sees(harness, session)

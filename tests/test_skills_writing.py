"""Writing a skill from the docs alone: the mistakes a person makes in a first ``SKILL.md``
(a byte order mark an editor added, Windows line ends, a value of the wrong type, a folder
named otherwise than the skill) either load or say, in one line, which file and key and what to
write instead. Real skill folders in a temporary HERMES_HOME, the real skills toolset."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import Harness, build_harness, make_env

from hermes_core._skills import SkillError, load_skills, read_skill


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(
            b"\xef\xbb\xbf---\nname: notes\ndescription: Keep notes.\n---\nBody\n", id="bom"
        ),
        pytest.param(
            b"---\r\nname: notes\r\ndescription: Keep notes.\r\n---\r\nBody\r\n", id="crlf"
        ),
        pytest.param(
            b"\xef\xbb\xbf---\r\nname: notes\r\ndescription: Keep notes.\r\n---\r\nBody\r\n",
            id="bom-and-crlf",
        ),
    ],
)
def test_a_skill_md_saved_by_a_windows_editor_loads(tmp_path: Path, raw: bytes) -> None:
    # Notepad and some editors begin a UTF-8 file with a byte order mark, which no editor
    # shows; the skill was refused with "no YAML front matter (a first line '---')".
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(raw)

    skill = read_skill(folder)

    assert (skill.name, skill.description) == ("notes", "Keep notes.")
    assert skill.body.replace("\r\n", "\n") == "Body\n"


@pytest.mark.parametrize(
    ("front", "error"),
    [
        pytest.param(
            "description: [triage, github]\n",
            "description: must be text (what the skill is for), not a list",
            id="description-a-list",
        ),
        pytest.param(
            "description:\n  what: triage\n",
            "description: must be text (what the skill is for), not a mapping",
            id="description-a-mapping",
        ),
        pytest.param(
            "name: Release Notes\ndescription: x\n",
            "name: 'Release Notes' is not a valid skill name: 1-64 letters, digits, '-', "
            "'_' or '.'",
            id="name-with-a-space",
        ),
        pytest.param(
            "description: x\nrequired_environment_variables: GH_TOKEN\n",
            "required_environment_variables: must be a list of variable names, e.g. [GH_TOKEN]",
            id="variables-one-name",
        ),
    ],
)
def test_a_value_of_the_wrong_type_says_what_it_must_be(
    tmp_path: Path, front: str, error: str
) -> None:
    # A description written as a list was reported as missing ("description: required").
    folder = tmp_path / "triage"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{front}---\nBody\n", encoding="utf-8")

    with pytest.raises(SkillError) as caught:
        read_skill(folder)

    assert str(caught.value) == f"{folder / 'SKILL.md'}: {error}"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = build_harness(tmp_path, env=make_env(tmp_path))
    yield made
    made.close()


@pytest.mark.subprocess
def test_skill_view_by_the_folder_of_a_skill_named_otherwise_names_the_skill(
    harness: Harness,
) -> None:
    # The folder is triage/, its front matter says name: github-triage: skill_view("triage")
    # answered "no skill 'triage' (skills: github-triage)", not saying it was that one.
    folder = harness.env.skills_dir / "triage"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: github-triage\ndescription: Triage issues.\n---\nBody\n", encoding="utf-8"
    )

    result = harness.call("skill_view", {"name": "triage"})

    assert result.error_code == "TOOL_ERROR"
    assert result.text_content == (
        f"skill_view: no skill 'triage': the folder {folder} holds the skill 'github-triage' "
        "(the name in its SKILL.md); view it by that name"
    )


def test_a_value_holding_a_colon_says_to_quote_it(tmp_path: Path) -> None:
    # "Use when: ..." is how skill descriptions are written (Claude Code's own advice), and
    # unquoted it is not YAML: the error said "mapping values are not allowed here", not what
    # to write instead.
    folder = tmp_path / "triage"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: triage\ndescription: Sort issues. Use when: the user asks\n---\nBody\n",
        encoding="utf-8",
    )

    with pytest.raises(SkillError) as caught:
        read_skill(folder)

    assert str(caught.value) == (
        f"{folder / 'SKILL.md'}:3: the front matter is not valid YAML: mapping values are not "
        "allowed here; a value holding ': ' must be quoted: "
        'description: "Sort issues. Use when: the user asks"'
    )


def test_a_skill_file_named_otherwise_is_named_with_the_fix(tmp_path: Path) -> None:
    # A folder whose file is skill.md (a case-sensitive file system) was passed over in
    # silence: the skill was just not there, and nothing said why. (A category folder holding
    # skills, as hermes-agent keeps them, loads: tests/test_skills_categories.py.)
    root = tmp_path / "skills"
    lower = root / "notes"
    lower.mkdir(parents=True)
    (lower / "skill.md").write_text("---\ndescription: Keep notes.\n---\n", encoding="utf-8")
    (root / "scratch").mkdir()  # a folder holding no skill at all stays unnamed

    skills, problems = load_skills(root)

    assert skills == []
    assert problems == [f"{lower / 'skill.md'}: the file must be named SKILL.md: rename it"]


def test_a_link_of_the_instructions_reads_as_written(tmp_path: Path) -> None:
    # SKILL.md links its files as Markdown does: [the template](./templates/issue.md#fields).
    # The model passes the link on as the path: the anchor made it "no such file", and a
    # folder was "no such file" too, not what it is.
    folder = tmp_path / "triage"
    (folder / "templates").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\ndescription: Triage.\n---\nFill [the template](./templates/issue.md#fields).\n",
        encoding="utf-8",
    )
    (folder / "templates" / "issue.md").write_text("# Fields\n", encoding="utf-8")
    skill = read_skill(folder)

    assert skill.read("./templates/issue.md#fields") == "# Fields\n"
    with pytest.raises(SkillError) as caught:
        skill.read("templates")
    assert str(caught.value) == (
        "templates: a folder of skill 'triage'; skill_view(name) lists its files"
    )

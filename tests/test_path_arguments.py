"""A NUL character in a tool argument that names a file or directory: no path can hold one, so
each such argument of the bundled tools is refused as ``INVALID_ARGUMENTS`` naming it, through
the real ``hermes tools call`` (the whole pipeline, the real handlers and files), before the
tool does anything. ``delegate_task``'s ``cwd`` is in tests/agent/test_delegation.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing._cli_in_process import InProcessCli

NUL = "notes\x00.txt"

SKILL = "---\nname: demo\ndescription: A skill with one file.\n---\n# Steps\n"


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    made = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    media = {"tts_command": "true {output}", "stt_command": "true {input}"}
    made.config.write_text(json.dumps({"plugins": {"entries": {"media": media}}}))
    (hermes_home / "skills" / "demo").mkdir(parents=True)
    (hermes_home / "skills" / "demo" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (hermes_project / "notes").write_text("kept\n", encoding="utf-8")
    return made


@pytest.mark.parametrize(
    ("tool", "arguments", "argument"),
    [
        ("skill_view", {"name": "de\x00mo"}, "name"),
        ("skill_view", {"name": "demo", "path": NUL}, "path"),
        ("read_file", {"path": NUL}, "path"),
        ("write_file", {"path": NUL, "content": "lost\n"}, "path"),
        ("patch", {"path": NUL, "old_text": "kept", "new_text": "lost"}, "path"),
        ("search_files", {"pattern": "kept", "path": NUL}, "path"),
        ("vision_analyze", {"image": NUL}, "image"),
        ("image_generate", {"prompt": "a lighthouse at dusk", "path": "out\x00.png"}, "path"),
        ("text_to_speech", {"text": "Hello there.", "path": "out\x00.wav"}, "path"),
        ("speech_to_text", {"audio": "memo\x00.wav"}, "audio"),
    ],
)
def test_a_nul_in_a_path_argument_is_refused_naming_the_argument(
    cli: InProcessCli, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    done = cli.run("tools", "call", "--yes", tool, json.dumps(arguments), "--json", ok=False)

    result = json.loads(done.stdout)
    assert done.returncode == 1
    assert result["error_code"] == "INVALID_ARGUMENTS", result
    text = result["content"][0]["text"]
    assert f"at arguments.{argument}:" in text
    assert "NUL character" in text
    assert (cli.work / "notes").read_text(encoding="utf-8") == "kept\n"  # nothing was done

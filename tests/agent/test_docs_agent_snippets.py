"""docs/agent.md's examples run as they are written: "Testing tools in a loop", in a fresh
interpreter with a scratch ``HERMES_HOME``, and its tool answers (the fake model is scripted to
call it, then to answer); "From a shell", the fake model server's script started as a process
and each command of the console example printing what the example shows."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agent.md"


def _example(heading: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, f"no python example under '## {heading}' in {DOCS}"
    return found.group(1)


@pytest.mark.subprocess
def test_the_testing_tools_in_a_loop_example_runs_and_its_tool_answers(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example("Testing tools in a loop"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HERMES_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ToolFinished HI" in done.stdout
    assert done.stdout.rstrip().endswith("Finished Done.")


def _subsection(heading: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    return text.split(f"\n### {heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def _console(section: str) -> list[tuple[str, list[str]]]:
    """Each ``$ command`` of the section's console example with the lines it prints."""
    found = re.search(r"```console\n(.*?)```", section, re.S)
    assert found, f"no console example in {section[:60]!r}"
    steps: list[tuple[str, list[str]]] = []
    for line in found.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    # stdout and stderr in one list, in no order; the token counts are the server's estimate.
    shown = (done.stdout + done.stderr).splitlines()
    return sorted(re.sub(r"[\d,]+ tokens", "N tokens", line) for line in shown)


@pytest.mark.subprocess
def test_the_fake_model_server_runs_from_a_shell_and_hermes_talks_to_it(tmp_path: Path) -> None:
    section = _subsection("From a shell: `hermes run` against it")
    script = tmp_path / "fake_model.py"
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no python example under 'From a shell'"
    script.write_text(code.group(1), encoding="utf-8")
    cli = HermesCli(tmp_path)
    server = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=cli.work
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        home = doc_url = ""
        for command, shown in _console(section):
            if command.startswith("export HERMES_HOME="):
                home = command.split("=", 1)[1]
            elif command.startswith("python3 fake_model.py"):
                doc_url = shown[0]
            elif command.startswith("hermes ") or " | hermes " in command:
                typed, _, command = command.rpartition("| ")
                given = subprocess.run(typed, shell=True, capture_output=True, text=True).stdout
                args = shlex.split(command.replace(doc_url, url))[1:]
                done = cli.run(*args, input=given or None)
                expected = [line.replace(home, str(cli.home)) for line in shown]
                assert _lines(done) == sorted(
                    re.sub(r"[\d,]+ tokens", "N tokens", line.replace(doc_url, url))
                    for line in expected
                ), command
            else:
                subprocess.run(command, shell=True, cwd=cli.work, check=True)
        assert doc_url, "the console example does not start fake_model.py"
    finally:
        server.terminate()
        server.wait(timeout=30)
        assert server.stdout is not None
        server.stdout.close()

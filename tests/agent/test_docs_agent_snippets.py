"""docs/agent.md's examples run as they are written: "Testing tools in a loop", in a fresh
interpreter with a scratch ``HERMES_HOME``, and its tool answers (the fake model is scripted to
call it, then to answer); "Writing a model provider", its echo provider as a user plugin and
"From a shell", the fake model server's script started as a process, each command of their
console examples printing what the example shows; "The provider conformance suite", copied
into a plugin author's test file, passing for the example provider installed with pip; "Taking
a conversation up in code", its function sending the earlier messages again to a fake model
server."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Config, Environment, Host
from hermes_core.agent import Agent
from hermes_core.testing import (
    MODEL_PROVIDER_RULES,
    FakeModelServer,
    FakeTurn,
    HermesCli,
    write_distribution,
)

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "agent.md"


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


Step = tuple[str, list[str]]


def _console(section: str) -> list[Step]:
    """Each ``$ command`` of the section's console example with the lines it prints."""
    found = re.search(r"```console\n(.*?)```", section, re.S)
    assert found, f"no console example in {section[:60]!r}"
    steps: list[Step] = []
    for line in found.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _check_console(cli: HermesCli, steps: list[Step], replace: dict[str, str]) -> None:
    """Run each command of ``steps`` in ``cli``'s working directory (a ``hermes`` command as
    ``cli.run``, with what a ``printf ... |`` before it prints on its stdin; any other in a
    shell) and compare what a ``hermes`` command prints, stdout and stderr in one list in no
    order, with the lines the example shows, each of ``replace``'s texts replaced (the doc's
    paths and URLs by the test's). Token counts are the fake's estimates: not compared."""

    def real(line: str) -> str:
        for doc, actual in replace.items():
            line = line.replace(doc, actual)
        return re.sub(r"[\d,]+ tokens", "N tokens", line)

    for command, shown in steps:
        if not (command.startswith("hermes ") or " | hermes " in command):
            subprocess.run(command, shell=True, cwd=cli.work, check=True)
            continue
        typed, _, command = command.rpartition("| ")
        given = subprocess.run(typed, shell=True, capture_output=True, text=True).stdout
        done = cli.run(*shlex.split(real(command))[1:], input=given or None)
        printed = sorted(real(line) for line in (done.stdout + done.stderr).splitlines())
        assert printed == sorted(real(line) for line in shown), command


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
        (export, _), (start, (doc_url,)), *steps = _console(section)
        assert (export, start) == ("export HERMES_HOME=/tmp/try-hermes", "python3 fake_model.py &")
        _check_console(cli, steps, {doc_url: url, "/tmp/try-hermes": str(cli.home)})
    finally:
        server.terminate()
        server.wait(timeout=30)
        assert server.stdout is not None
        server.stdout.close()


@pytest.mark.subprocess
def test_the_echo_model_provider_example_answers_as_shown(tmp_path: Path) -> None:
    section = _subsection("Writing a model provider")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no python example under 'Writing a model provider'"
    cli = HermesCli(tmp_path)
    plugin = cli.home / "plugins" / "echo-model"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(code.group(1), encoding="utf-8")
    (plugin / "plugin.yaml").write_text("name: echo-model\n", encoding="utf-8")
    _check_console(cli, _console(section), {"/home/me/.hermes": str(cli.home)})


@pytest.mark.subprocess
def test_the_provider_conformance_snippet_passes_for_the_example_installed_with_pip(
    tmp_path: Path,
) -> None:
    section = _subsection("The provider conformance suite")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no python example under 'The provider conformance suite'"
    site = tmp_path / "site-packages"
    example = REPO / "examples" / "model_provider_plugin" / "__init__.py"
    write_distribution(
        site,
        "hermes-httpx-chat",
        entry_points={"httpx-chat": "httpx_chat"},
        files={"httpx_chat/__init__.py": example.read_text(encoding="utf-8")},
    )
    work = tmp_path / "author"
    work.mkdir()
    (work / "test_my_provider.py").write_text(code.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=work,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert f"{len(MODEL_PROVIDER_RULES)} passed" in output, output


def test_the_take_up_in_code_example_sends_the_earlier_messages_again(tmp_path: Path) -> None:
    section = _subsection("Taking a conversation up in code")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no python example under 'Taking a conversation up in code'"
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), "agent.md", "exec"), namespace)
    turns = [FakeTurn(text="Hello Ada."), FakeTurn(text="Your name is Ada.")]
    with FakeModelServer(turns) as server:
        (tmp_path / "project").mkdir()
        env = Environment(home=tmp_path / "home", cwd=tmp_path / "project", variables={})
        model = {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url}
        config = Config.model_validate({"model": model})

        async def main() -> str:
            async with Host(config, env) as host:
                agent = Agent.from_host(host)
                async with host.session() as session:
                    async for _ in agent.conversation(session).send("I am Ada."):
                        pass
                answer = await namespace["take_up"](host, agent, session.id, "What is my name?")
                await agent.aclose()
                return str(answer)

        assert anyio.run(main) == "Your name is Ada."
        sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "I am Ada."

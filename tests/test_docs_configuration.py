"""docs/configuration.md's examples work as printed: the console example of ``hermes config``,
run command by command in an empty home, prints what it shows, and every ``yaml`` block of the
docs that is a whole ``config.yaml`` passes ``hermes config validate`` (one that enables a
plugin the page writes itself, not bundled, passes ``load_config``: its plugin is not here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hermes_core._config import Config, load_config
from hermes_core._config.sections import section_keys
from hermes_core.testing._cli_in_process import InProcessCli

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
BUNDLED = {path.parent.name for path in (REPO / "plugins_builtin").glob("*/plugin.yaml")}
SHOWN_HOME = "/home/me/.hermes"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _console_example(heading: str) -> str:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```console\n(.*?)```", section, re.S)
    assert found, f"no console example under '## {heading}' in docs/configuration.md"
    return found.group(1)


def test_the_hermes_config_example_prints_what_it_shows(hermes_cli: InProcessCli) -> None:
    steps: list[tuple[str, list[str]]] = []
    for line in _console_example("`hermes config`").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert steps, "the example shows no command"
    for command, shown in steps:
        argv = shlex.split(command)
        assert argv[0] == "hermes", command
        result = hermes_cli.run(*argv[1:], ok=False)
        printed = (result.stdout + result.stderr).replace(str(hermes_cli.home), SHOWN_HOME)
        assert printed.splitlines() == shown, command


def _whole_configurations() -> list[tuple[str, str]]:
    """The ``yaml`` blocks of README.md and docs/*.md whose top-level keys are all sections
    of ``config.yaml`` (a block of a plugin's manifest or an indented fragment is not)."""
    sections = set(section_keys(Config))
    found = []
    for page in [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"^```yaml\n(.*?)^```", text, re.S | re.M):
            body = match.group(1)
            data = YAML(typ="safe").load(body)
            if isinstance(data, dict) and data and set(data) <= sections:
                line = text.count("\n", 0, match.start()) + 2
                found.append((f"{page.name}:{line}", body))
    return found


@pytest.mark.parametrize(("where", "body"), _whole_configurations())
def test_every_configuration_shown_in_the_docs_validates(
    hermes_cli: InProcessCli, where: str, body: str
) -> None:
    path = hermes_cli.home / "config.yaml"
    path.write_text(body, encoding="utf-8")
    plugins = YAML(typ="safe").load(body).get("plugins") or {}
    enabled = {name.replace("-", "_") for name in plugins.get("enabled") or []}
    if enabled - BUNDLED:
        load_config(path)
        return
    result = hermes_cli.run("config", "validate", ok=False)
    assert (result.returncode, result.stderr) == (0, ""), where

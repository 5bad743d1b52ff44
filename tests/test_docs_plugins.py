"""The plugin docs and tests stay in step with the code: every hook and every test fixture is
documented, every hook is exercised by a test, every variable the environment is read for is
in the table of docs/configuration.md, and the ``hermes_cli_commands``,
``hermes_doctor_checks`` and ``hermes_transcripts_deleted`` examples run as written."""

from __future__ import annotations

import functools
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core import _hookspecs as hookspecs
from hermes_core import _paths as paths
from hermes_core import testing
from hermes_core._plugins import discovery, loader
from hermes_core.search import SearchBackend
from hermes_core.testing import SEARCH_BACKEND_RULES

TESTS = Path(__file__).resolve().parent
DOCS = TESTS.parent / "docs" / "plugins.md"
CONFIGURATION_DOCS = TESTS.parent / "docs" / "configuration.md"


def hook_names() -> list[str]:
    return sorted(
        name
        for name, value in vars(hookspecs).items()
        if inspect.isfunction(value) and hookspecs.hookspec.project_name + "_spec" in vars(value)
    )


def test_hookspecs_are_found() -> None:
    assert "hermes_pre_tool_call" in hook_names()


@pytest.mark.parametrize("hook", hook_names())
def test_every_hook_has_a_section_in_the_plugin_guide(hook: str) -> None:
    headings = re.findall(r"^### `(\w+)`$", DOCS.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert hook in headings, f"docs/plugins.md needs a '### `{hook}`' section"


def test_every_documented_hook_exists() -> None:
    headings = re.findall(r"^### `(hermes_\w+)`$", DOCS.read_text(encoding="utf-8"), re.M)
    assert sorted(headings) == hook_names()


@pytest.mark.parametrize(
    "fixture",
    sorted(
        name
        for name in testing.__all__
        if name.startswith("hermes_")
        and type(getattr(testing, name)).__name__ == "FixtureFunctionDefinition"
    ),
)
def test_every_test_fixture_is_documented(fixture: str) -> None:
    assert f"| `{fixture}` |" in DOCS.read_text(encoding="utf-8")


@functools.cache
def other_test_files() -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8")
        for path in sorted(TESTS.rglob("*.py"))
        if path.resolve() != Path(__file__).resolve()
    }


@pytest.mark.parametrize("hook", hook_names())
def test_every_hook_is_named_in_a_test(hook: str) -> None:
    assert any(hook in text for text in other_test_files().values()), (
        f"no test under tests/ names {hook}"
    )


def environment_variables() -> list[str]:
    """Every variable hermes_core._paths reads, and the plugin host's flags."""
    names = set(re.findall(r'"(HERMES_[A-Z_]+)"', inspect.getsource(paths)))
    names |= {
        discovery.PROJECT_PLUGINS_FLAG,
        discovery.AUTOLOAD_OFF_FLAG,
        loader.STRICT_FLAG,
    }
    return sorted(names)


def test_the_environment_variables_are_found() -> None:
    assert {"HERMES_HOME", "HERMES_CONFIG", "HERMES_STRICT_PLUGINS"} <= set(environment_variables())


@pytest.mark.parametrize("variable", environment_variables())
def test_every_environment_variable_is_in_the_configuration_table(variable: str) -> None:
    assert f"| `{variable}` |" in CONFIGURATION_DOCS.read_text(encoding="utf-8"), (
        f"docs/configuration.md's environment-variable table needs a row for {variable}"
    )


def python_block_after(heading: str, *, containing: str = "") -> str:
    """The first ```python block of docs/plugins.md after ``heading`` (holding ``containing``)."""
    text = DOCS.read_text(encoding="utf-8")
    assert heading in text, f"docs/plugins.md has no {heading!r}"
    blocks = re.findall(r"^```python\n(.*?)^```", text.split(heading, 1)[1], re.M | re.S)
    return next(block for block in blocks if containing in block)


EXAMPLE_BACKEND = TESTS.parent / "examples" / "search_backend_plugin" / "__init__.py"


def run_the_conformance_snippet(tmp_path: Path, plugin_source: str) -> tuple[int, str]:
    """The conformance snippet of docs/plugins.md, copied verbatim into a test file and run by
    pytest in a subprocess, against the ``keyword`` backend of a distribution installed (as a
    ``*.dist-info`` with its entry point) in a site directory on the subprocess's path."""
    snippet = python_block_after("### The search backend conformance suite")
    site = tmp_path / "site-packages"
    testing.write_distribution(
        site,
        "hermes-keyword-search",
        "0.1.0",
        entry_points={"keyword-search": "keyword_search"},
        files={"keyword_search/__init__.py": plugin_source},
    )
    work = tmp_path / "author"
    work.mkdir()
    (work / "test_keyword_conformance.py").write_text(snippet, encoding="utf-8")
    environment = paths.Environment.from_process()
    variables = {
        "PATH": environment.get("PATH") or "",
        "HOME": str(tmp_path / "user-home"),
        "PYTHONPATH": str(site),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=work,
        env=variables,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.subprocess
def test_the_conformance_snippet_passes_for_an_installed_plugin(tmp_path: Path) -> None:
    code, output = run_the_conformance_snippet(tmp_path, EXAMPLE_BACKEND.read_text("utf-8"))

    assert code == 0, output
    assert f"{len(SEARCH_BACKEND_RULES)} passed" in output, output


@pytest.mark.subprocess
def test_the_conformance_snippet_fails_for_an_installed_plugin_that_breaks_a_rule(
    tmp_path: Path,
) -> None:
    broken = EXAMPLE_BACKEND.read_text("utf-8") + (
        "\n\nKeywordBackend.remove = lambda self, names: None  # forgets to remove\n"
    )

    code, output = run_the_conformance_snippet(tmp_path, broken)

    assert code == 1, output
    assert f"1 failed, {len(SEARCH_BACKEND_RULES) - 1} passed" in output, output
    assert "remove-drops-documents-and-ignores-unknown-names" in output, output


SIGNATURES_HEADING = "### The `SearchBackend` protocol"


def documented_protocol() -> dict[str, inspect.Signature]:
    """The methods of the ``SearchBackend`` class shown in docs/plugins.md, compiled as the real
    module is (annotations kept as text)."""
    block = python_block_after(SIGNATURES_HEADING, containing="class SearchBackend(Protocol):")
    namespace: dict[str, object] = {}
    exec(compile("from __future__ import annotations\n" + block, "plugins.md", "exec"), namespace)
    return methods(namespace["SearchBackend"])


def methods(protocol: object) -> dict[str, inspect.Signature]:
    """The signatures of the methods written in ``protocol``'s class body (not the ones
    ``typing.Protocol`` adds)."""
    return {
        name: inspect.signature(value)
        for name, value in vars(protocol).items()
        if inspect.isfunction(value) and value.__qualname__.startswith("SearchBackend.")
    }


def real_protocol() -> dict[str, inspect.Signature]:
    return methods(SearchBackend)


def test_the_plugin_guide_shows_the_search_backend_methods_as_the_protocol_has_them() -> None:
    documented, real = documented_protocol(), real_protocol()

    assert set(real) == {"build", "add", "remove", "search", "unmatched_words", "__len__"}
    assert set(documented) == set(real)
    for name, signature in real.items():
        assert str(documented[name]) == str(signature), f"SearchBackend.{name}"


def test_tool_search_md_links_to_the_signatures_instead_of_repeating_them() -> None:
    text = (TESTS.parent / "docs" / "tool-search.md").read_text(encoding="utf-8")

    assert "plugins.md#the-searchbackend-protocol" in text
    assert "def search(" not in text
    assert "`search(query, limit, admission, extra=())`" not in text


@pytest.mark.subprocess
def test_the_cli_commands_example_adds_its_command_as_written(tmp_path: Path) -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("\n### `hermes_cli_commands`\n", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "no python example under '### `hermes_cli_commands`'"
    cli = testing.HermesCli(tmp_path)
    plugin = cli.home / "plugins" / "forecast"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: forecast\n", encoding="utf-8")
    (plugin / "__init__.py").write_text(code.group(1), encoding="utf-8")
    cli.config.write_text("plugins:\n  enabled: [forecast]\n", encoding="utf-8")
    assert cli.run("forecast", "Paris").stdout == "sunny in Paris\n"


@pytest.mark.subprocess
def test_the_doctor_checks_and_transcripts_deleted_examples_work_as_written(
    tmp_path: Path,
) -> None:
    from hermes_core.agent._transcripts import Transcript

    cli = testing.HermesCli(tmp_path)
    for name, heading in [
        ("thing", "### `hermes_doctor_checks`"),
        ("backup", "### `hermes_transcripts_deleted`"),
    ]:
        plugin = cli.home / "plugins" / name
        plugin.mkdir(parents=True)
        (plugin / "plugin.yaml").write_text(f"name: {name}\n", encoding="utf-8")
        (plugin / "__init__.py").write_text(python_block_after(heading), encoding="utf-8")
    cli.config.write_text("plugins:\n  enabled: [thing, backup]\n", encoding="utf-8")

    done = cli.run("doctor", "--offline", "--json", ok=False)
    thing = {c["name"]: c for c in json.loads(done.stdout)["checks"] if c["group"] == "thing"}
    assert thing["token"]["status"] == "error"
    assert thing["token"]["message"].startswith("THING_TOKEN is not set: create one at")
    assert thing["service"]["status"] == "not checked"

    (cli.home / "sessions").mkdir()
    Transcript(cli.home / "sessions" / "aaa111.jsonl").start("aaa111", model="m", cwd=str(cli.work))
    (cli.home / "backup" / "aaa111").mkdir(parents=True)
    (cli.home / "backup" / "bbb222").mkdir()
    cli.run("sessions", "delete", "aaa111", "--yes")
    assert sorted(p.name for p in (cli.home / "backup").iterdir()) == ["bbb222"]

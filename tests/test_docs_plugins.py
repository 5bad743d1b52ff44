"""The plugin docs and tests stay in step with the code: every hook and every test fixture is
documented, every hook is exercised by a test, and every variable the environment is read for is
in the table of docs/configuration.md."""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path

import pytest

from hermes_core import hookspecs, paths, testing
from hermes_core.plugins import discovery, loader

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
        for name, value in vars(testing).items()
        if name.startswith("hermes_") and type(value).__name__ == "FixtureFunctionDefinition"
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
    """Every variable hermes_core.paths reads, and the plugin host's flags."""
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

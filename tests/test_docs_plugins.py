"""docs/plugins.md stays in step with the code: every hook and every test fixture is documented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from hermes_core import hookspecs, testing

DOCS = Path(__file__).resolve().parent.parent / "docs" / "plugins.md"


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

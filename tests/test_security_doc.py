"""docs/security.md names, for each boundary, the tests that hold it: every name must be a test
that exists, and every test module of tests/security/ must hold some boundary of the page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "security.md"
# A bundled plugin's own tests sit beside it (plugins_builtin/<name>/tests/...).
_REFERENCE = re.compile(r"`((?:plugins_builtin/\w+/)?tests/[\w/]+\.py)::(\w+)`")


def _test_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_test_the_page_names_exists() -> None:
    references = _REFERENCE.findall(PAGE.read_text(encoding="utf-8"))
    assert references, "docs/security.md names no test"
    # Each module parsed once: the page names some modules' tests dozens of times.
    names = {
        path: _test_names(REPO / path) if (REPO / path).is_file() else set()
        for path in {path for path, _ in references}
    }
    missing = [f"{path}::{name}" for path, name in references if name not in names[path]]
    assert missing == []


def test_every_security_test_module_is_on_the_page() -> None:
    named = {path for path, _ in _REFERENCE.findall(PAGE.read_text(encoding="utf-8"))}
    modules = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests" / "security").glob("test_*.py")
    }
    assert sorted(modules - named) == []

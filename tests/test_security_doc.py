"""docs/security.md names, for each boundary, the tests that hold it: every name must be a test
that exists, and every test module of tests/security/ must hold some boundary of the page."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "security.md"
# A bundled plugin's own tests sit beside it (plugins_builtin/<name>/tests/...).
_REFERENCE = re.compile(r"`((?:plugins_builtin/\w+/)?tests/[\w/]+\.py)::(\w+)`")


@functools.cache
def _test_names(module: Path) -> frozenset[str]:
    # The page names 170-odd tests in 50-odd modules: each module is parsed once, and only its
    # top level and its classes are read (where pytest finds tests), not every node.
    names: set[str] = set()
    bodies = [ast.parse(module.read_text(encoding="utf-8")).body]
    while bodies:
        for node in bodies.pop():
            if isinstance(node, ast.ClassDef):
                bodies.append(node.body)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return frozenset(name for name in names if name.startswith("test"))


def test_every_test_the_page_names_exists() -> None:
    references = _REFERENCE.findall(PAGE.read_text(encoding="utf-8"))
    assert references, "docs/security.md names no test"
    missing = [
        f"{path}::{name}"
        for path, name in references
        if not (REPO / path).is_file() or name not in _test_names(REPO / path)
    ]
    assert missing == []


def test_every_security_test_module_is_on_the_page() -> None:
    named = {path for path, _ in _REFERENCE.findall(PAGE.read_text(encoding="utf-8"))}
    modules = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests" / "security").glob("test_*.py")
    }
    assert sorted(modules - named) == []

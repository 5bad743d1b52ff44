"""The public API: ``hermes_core`` re-exports what plugin authors and embedders use, and the
docs, the example plugin and every bundled plugin import only from it (or from
``hermes_core.testing``, the test kit), as a third party would."""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import hermes_core

REPO = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = {"hermes_core", "hermes_core.testing"}
"""Where a plugin author or an embedder may import from."""

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_IMPORT_LINE = re.compile(
    r"^\s*(?:from\s+(hermes_core[\w.]*)\s+import|import\s+(hermes_core[\w.]*))"
)


@dataclass(frozen=True)
class Import:
    """One import of hermes-core: where it is, the module, and the names taken from it."""

    where: str
    module: str
    names: tuple[str, ...]


def _imports_in_code(code: str, where: str, first_line: int = 1) -> Iterator[Import]:
    try:
        tree = compile(
            code, where, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
    except SyntaxError:  # a fragment in the docs: its import lines still count
        for number, line in enumerate(code.splitlines(), first_line):
            match = _IMPORT_LINE.match(line)
            if match:
                yield Import(f"{where}:{number}", match[1] or match[2], ())
        return
    for node in ast.walk(tree):
        line = f"{where}:{first_line + getattr(node, 'lineno', 1) - 1}"
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "hermes_core":
                yield Import(line, node.module, tuple(alias.name for alias in node.names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hermes_core":
                    yield Import(line, alias.name, ())


def _python_files(*roots: str) -> Iterator[Path]:
    for root in roots:
        for path in sorted((REPO / root).rglob("*.py")):
            if "tests" not in path.relative_to(REPO).parts:
                yield path


def _imports_in_files(*roots: str) -> list[Import]:
    found: list[Import] = []
    for path in _python_files(*roots):
        where = str(path.relative_to(REPO))
        found.extend(_imports_in_code(path.read_text(encoding="utf-8"), where))
    return found


def _imports_in_docs() -> list[Import]:
    found: list[Import] = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in _PYTHON_BLOCK.finditer(text):
            first_line = text.count("\n", 0, block.start(1)) + 1
            where = str(path.relative_to(REPO))
            found.extend(_imports_in_code(block[1], where, first_line))
    return found


def _outside_the_api(imports: list[Import]) -> list[str]:
    problems = []
    for found in imports:
        if found.module not in PUBLIC_MODULES:
            problems.append(f"{found.where}: imports {found.module} (not a public module)")
        else:
            exported = importlib.import_module(found.module).__all__
            missing = [name for name in found.names if name not in exported]
            if missing:
                problems.append(f"{found.where}: {found.module} does not export {missing}")
    return problems


def test_all_is_sorted_and_every_name_in_it_can_be_imported() -> None:
    names = [name for name in hermes_core.__all__ if name != "__version__"]

    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    assert len(set(names)) == len(names)
    missing = [name for name in names if getattr(hermes_core, name, None) is None]
    assert missing == []


def test_the_package_is_marked_as_typed() -> None:
    assert (Path(hermes_core.__file__).parent / "py.typed").is_file()


def test_the_docs_import_only_the_public_api() -> None:
    imports = _imports_in_docs()

    assert len(imports) > 10  # the scan reads the code blocks
    assert _outside_the_api(imports) == []


def test_bundled_plugins_import_only_the_public_api() -> None:
    imports = _imports_in_files("plugins_builtin", "plugins")

    assert {found.where.split("/")[1] for found in imports} >= {
        "approvals",
        "bm25",
        "files",
        "terminal",
        "todo",
        "hermes-search-hybrid",
    }
    assert _outside_the_api(imports) == []


def test_the_example_plugin_imports_only_the_public_api() -> None:
    imports = _imports_in_files("examples")

    assert imports
    assert _outside_the_api(imports) == []


def test_an_import_of_an_internal_module_is_reported_with_its_place() -> None:
    code = "from hermes_core.search.backend import ToolDocument\nfrom hermes_core import Nope\n"

    problems = _outside_the_api(list(_imports_in_code(code, "plugin.py")))

    assert problems == [
        "plugin.py:1: imports hermes_core.search.backend (not a public module)",
        "plugin.py:2: hermes_core does not export ['Nope']",
    ]


def test_the_example_plugin_passes_mypy_strict_outside_the_repository(tmp_path: Path) -> None:
    if shutil.which("mypy") is None and not _has_module("mypy"):
        pytest.fail("mypy is not installed: pip install -e '.[test]' installs it")
    plugin = tmp_path / "search_backend_plugin"
    shutil.copytree(REPO / "examples" / "search_backend_plugin", plugin)

    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(plugin)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success" in checked.stdout


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_the_version_is_the_distributions() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    assert hermes_core.__version__ == project["version"]

"""The README's test command, ``nox``, runs every session on the Python the user has.

A session pinned to one version (``python="3.11"``) is skipped, and ``nox`` still exits 0,
on a machine without that version: a stock Debian 13 has Python 3.13 only, so the suite never
ran there and looked as if it had passed. Read from ``noxfile.py`` itself (nox is not a test
dependency: it runs the tests)."""

from __future__ import annotations

import ast
from pathlib import Path

NOXFILE = Path(__file__).resolve().parents[1] / "noxfile.py"


def _sessions(tree: ast.Module) -> dict[str, ast.Call | None]:
    """Each ``@nox.session`` function of ``tree`` by name, with its decorator's call (``None``
    for a bare ``@nox.session``)."""
    found: dict[str, ast.Call | None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if ast.unparse(target) == "nox.session":
                found[node.name] = decorator if isinstance(decorator, ast.Call) else None
    return found


def _constants(tree: ast.Module) -> dict[str, object]:
    """The module-level ``NAME = literal`` assignments of ``tree``."""
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    values[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return values


def _option(tree: ast.Module, name: str) -> object:
    """The value ``noxfile.py`` gives ``nox.options.<name>`` (``None`` when it sets none)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == f"nox.options.{name}":
            return ast.literal_eval(node.value)
    return None


def test_every_nox_session_runs_on_the_interpreter_nox_runs_with() -> None:
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    sessions = _sessions(tree)
    assert {"lint", "typecheck", "tests", "tests_hybrid"} <= sessions.keys()
    constants = _constants(tree)
    pinned = {}
    for name, call in sessions.items():
        keyword = next((k for k in (call.keywords if call else []) if k.arg == "python"), None)
        if keyword is None:
            continue
        value = (
            constants.get(keyword.value.id)
            if isinstance(keyword.value, ast.Name)
            else ast.literal_eval(keyword.value)
        )
        if value is not None:
            pinned[name] = value
    assert not pinned, (
        f"noxfile.py pins sessions to a Python version ({pinned}): on a machine without it "
        "(a stock Debian 13 has 3.13 only) nox skips them; leave python= unset so each session "
        "runs on the Python nox runs with (requires-python in pyproject.toml says which)"
    )


def test_nox_fails_rather_than_skips_a_session_whose_python_is_missing() -> None:
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    assert _option(tree, "error_on_missing_interpreters") is True, (
        "noxfile.py must set nox.options.error_on_missing_interpreters = True: otherwise a "
        "session whose interpreter is missing is skipped and nox exits 0 as if it had passed"
    )


def test_the_slow_tests_the_default_sessions_leave_out_still_run_in_ci() -> None:
    source = NOXFILE.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert "tests_slow" in _sessions(tree)
    assert '"-m", "not slow"' in source  # the default ``tests`` session
    assert '"-m",\n        "slow",' in source  # ``tests_slow``
    ci = (NOXFILE.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "python3 -m nox" in ci
    assert "python3 -m nox -s tests_slow" in ci, (
        ".ci/run must run `nox -s tests_slow`: the default sessions leave the slow tests out"
    )

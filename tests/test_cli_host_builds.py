"""Every ``hermes`` command builds its host through one helper, ``cli_host``
(``hermes_core/_cli/host_runs.py``), which gives the configuration file's path (a file inside
the project cannot open the project-plugin gate) and sends what plugin code prints to standard
error: no other module of ``hermes_core/_cli/`` builds a ``Host`` itself, so a new command
cannot forget either rule. Read from the source with :mod:`ast`."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core._cli as cli_package

CLI = Path(cli_package.__file__).parent
HELPER = CLI / "host_runs.py"


def _host_builds(path: Path) -> list[ast.Call]:
    """The calls in ``path`` that build a host: ``Host(...)``, ``_host.Host(...)`` or one of
    its constructors, ``Host.from_environment(...)``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        named_host = (isinstance(func, ast.Name) and func.id == "Host") or (
            isinstance(func, ast.Attribute) and func.attr == "Host"
        )
        host_constructor = isinstance(func, ast.Attribute) and (
            isinstance(func.value, ast.Name) and func.value.id == "Host"
        )
        if named_host or host_constructor:
            found.append(node)
    return found


def test_no_cli_module_but_the_helpers_builds_a_host() -> None:
    modules = sorted(CLI.glob("*.py"))
    assert HELPER in modules
    builders = {
        f"{path.name}:{call.lineno}"
        for path in modules
        if path != HELPER
        for call in _host_builds(path)
    }
    assert not builders, (
        f"these build a Host themselves: {sorted(builders)}; "
        "use hermes_core._cli.host_runs.cli_host instead"
    )


def test_the_helper_builds_its_host_with_the_config_path() -> None:
    (call,) = _host_builds(HELPER)
    assert "config_path" in {keyword.arg for keyword in call.keywords}

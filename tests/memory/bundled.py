"""Bundled plugin packages imported by their directory, as the plugin host does, for tests of
their parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).resolve().parents[2] / "plugins_builtin"


def import_plugin(directory: Path) -> Any:
    """The plugin package in ``directory`` (its modules importable relatively), imported once
    under a name of its own."""
    name = f"plugin_under_test_{directory.parent.name}_{directory.name}".replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def bundled(name: str) -> Any:
    """The bundled plugin ``name``."""
    return import_plugin(BUNDLED / name)

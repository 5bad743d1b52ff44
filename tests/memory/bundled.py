"""Bundled plugin packages imported by their directory, as the plugin host does, for tests of
their parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from hermes_core.agent import Message, TranscriptStore

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


def conversation(home: Path, session: str, *texts: str) -> None:
    """A transcript ``session`` under ``home`` holding ``texts`` as the person's messages."""
    transcript = TranscriptStore(home / "sessions").open(session)
    transcript.start(session, model="fake-1")
    for text in texts:
        transcript.add(Message("user", text))


def search(home: Path, query: str) -> list[Any]:
    """The bundled ``session_search`` index of ``home``'s transcripts, brought up to date, asked
    ``query``: its top five hits."""
    index = importlib.import_module(f"{bundled('session_search').__name__}.index")
    found = index.SessionIndex(home / "session_search.db", home / "sessions")
    try:
        found.update()
        return list(found.search(query, 5))
    finally:
        found.close()

"""Memory providers, a plugin kind selected by ``memory.provider``: the bundled ``file``
provider and the example third-party one pass the conformance suite; the example is installed
and selected by name as a user would."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_core import PluginError
from hermes_core.agent import MemoryProvider
from hermes_core.agent._memory import selected_memory
from hermes_core.plugin import MemoryProviderSpec, hookimpl
from hermes_core.testing import forget_modules_under, memory_provider_conformance
from tests.memory.bundled import bundled, import_plugin

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "memory_provider_plugin"


def _file_provider(store: Path) -> MemoryProvider:
    module: Any = bundled("memory")
    provider: MemoryProvider = module.FileMemoryProvider(store)
    return provider


def _example_provider(store: Path) -> MemoryProvider:
    module: Any = import_plugin(EXAMPLE)
    provider: MemoryProvider = module.SqliteMemoryProvider(store / "memory.db")
    return provider


@pytest.mark.parametrize("check", memory_provider_conformance(_file_provider))
def test_the_bundled_file_provider_follows_the_protocol(check: Any) -> None:
    check()


@pytest.mark.parametrize("check", memory_provider_conformance(_example_provider))
def test_the_example_sqlite_provider_follows_the_protocol(check: Any) -> None:
    check()


def test_the_installed_example_is_selected_by_name(make_memory_host: Any, tmp_path: Path) -> None:
    plugins = Path(make_memory_host().env.home) / "plugins"
    shutil.copytree(EXAMPLE, plugins / "sqlite-memory")
    try:
        host = make_memory_host(
            {"plugins": {"enabled": ["sqlite-memory"]}, "memory": {"provider": "sqlite"}}
        )
        memory = selected_memory(host)
        assert memory is not None
        assert type(memory.provider).__name__ == "SqliteMemoryProvider"
        assert not memory.apply("add", "user", "Prefers metric units").is_error
        assert (host.env.home / "memory.db").exists()
        assert not (host.env.home / "memories").exists()  # the file provider is not used
    finally:
        forget_modules_under(plugins)


class NoSave:
    """A plugin whose memory provider cannot save (its factory returns an object without it)."""

    @hookimpl
    def hermes_memory_providers(self) -> list[MemoryProviderSpec]:
        return [MemoryProviderSpec("halfway", factory=lambda context: object())]


def test_a_provider_that_breaks_the_protocol_is_an_error_naming_its_plugin_and_hook(
    make_memory_host: Any,
) -> None:
    host = make_memory_host({"memory": {"provider": "halfway"}}, nosave=NoSave())
    with pytest.raises(PluginError) as caught:
        selected_memory(host)
    message = str(caught.value)
    assert "memory provider 'halfway' (from hermes_memory_providers) could not be built" in message
    assert "which has no load, save" in message
    assert "nosave" in message

"""The bundled ``bm25`` plugin, loaded by the real plugin loader from a real directory."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from hermes_core._config import Config
from hermes_core._paths import Environment
from hermes_core._plugins.loader import load_plugins
from hermes_core._specs import PluginContext, SearchBackendSpec
from hermes_core.search._backend import SearchBackend, ToolDocument

PLUGIN = Path(__file__).resolve().parents[1]


def test_bundled_bm25_plugin_registers_a_working_backend(tmp_path: Path) -> None:
    bundled = tmp_path / "bundled"
    shutil.copytree(PLUGIN, bundled / "bm25", ignore=shutil.ignore_patterns("tests", "__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    env = Environment(
        home=home,
        cwd=tmp_path,
        variables={
            "HERMES_HOME": str(home),
            "HERMES_BUNDLED_PLUGINS": str(bundled),
            "HERMES_DISABLE_PLUGIN_AUTOLOAD": "1",
            "HERMES_STRICT_PLUGINS": "1",
        },
    )
    config = Config()
    plugins = load_plugins(config, env)
    record = plugins.get("bm25")
    assert record is not None
    # A bundled backend plugin loads without being listed in plugins.enabled.
    assert record.status == "enabled (default)", record.message
    assert record.hooks == ["hermes_search_backends"]

    specs = [spec for group in plugins.pm.hook.hermes_search_backends() for spec in group]
    assert [spec.name for spec in specs] == ["bm25"]
    (spec,) = specs
    assert isinstance(spec, SearchBackendSpec)

    backend = spec.factory(PluginContext(config=config, env=env))
    assert isinstance(backend, SearchBackend)
    backend.build(
        [
            ToolDocument("mcp__github__create_issue", "Create an issue", "github", ("title",)),
            ToolDocument("mcp__github__get_file", "Read a file", "github", ("path",)),
        ]
    )
    assert len(backend) == 2
    assert [hit.name for hit in backend.search("issues", 5, "strict")] == [
        "mcp__github__create_issue"
    ]


def test_the_bundled_plugins_folder_is_not_left_on_the_import_path() -> None:
    # It would shadow the openai and anthropic SDKs for every later test of this process.
    assert str(PLUGIN.parent) not in sys.path
    import openai

    assert hasattr(openai, "AsyncOpenAI"), openai.__file__

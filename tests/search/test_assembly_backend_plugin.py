"""The example search backend plugin of docs/tool-search.md works as documented."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest
from bridge_fixtures import make_env, mcp_tool, registry_of, session, tool_search

from hermes_core._config import Config
from hermes_core._plugins.manifest import load_manifest
from hermes_core._specs import PluginContext
from hermes_core.search._backend import SearchBackend

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "search_backend_plugin"


@pytest.fixture(scope="module")
def plugin() -> ModuleType:
    name = "hermes_example_keyword_search"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE / "__init__.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_example_manifest_is_valid() -> None:
    manifest = load_manifest(EXAMPLE / "plugin.yaml")
    assert manifest.name == "keyword-search"
    assert manifest.warnings == ()
    assert manifest.provides_hooks == ("hermes_search_backends",)


def test_example_registers_the_keyword_backend(plugin: ModuleType, tmp_path: Path) -> None:
    (spec,) = plugin.hermes_search_backends()
    assert spec.name == "keyword"
    context = PluginContext(Config(), make_env(tmp_path), {"min_word_length": 3})
    backend = spec.factory(context)
    assert isinstance(backend, SearchBackend)
    assert backend.min_word_length == 3


def test_example_backend_serves_tool_search(plugin: ModuleType, tmp_path: Path) -> None:
    backend = plugin.make_backend(PluginContext(Config(), make_env(tmp_path)))
    registry = registry_of(
        [
            mcp_tool("github", "createIssue", "Create an issue."),
            mcp_tool("github", "list_issues", "List the issues."),
            mcp_tool("slack", "post_message", "Post a message."),
        ]
    )
    search = tool_search(registry, backend=backend)
    answer = anyio.run(search.search, ["create issue", "message"], None, session())
    assert answer["results"][0]["matches"] == ["mcp__github__createIssue"]
    assert answer["results"][1]["matches"] == ["mcp__slack__post_message"]
    registry.unregister("mcp__slack__post_message")
    answer = anyio.run(search.search, ["message"], None, session())
    assert answer["results"][0]["matches"] == []


def test_example_rejects_a_bad_setting_by_its_key(plugin: ModuleType, tmp_path: Path) -> None:
    context = PluginContext(Config(), make_env(tmp_path), {"min_word_length": "three"})
    with pytest.raises(ValueError, match=r"keyword-search\.min_word_length"):
        plugin.make_backend(context)

"""A search backend builds another registered backend by name through its ``PluginContext``,
as the hybrid plugin builds ``bm25``, without importing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core._config import Config
from hermes_core._errors import PluginError, RegistrationError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._specs import PluginContext
from hermes_core.testing import forget_modules_under, write_dir_plugin

# A backend that delegates to the backend named by its setting ``inner`` and remembers the
# settings each factory was given.
WRAPPER = """
from hermes_core._hookspecs import hookimpl
from hermes_core._specs import SearchBackendSpec


class Wrapper:
    def __init__(self, context):
        self.settings = dict(context.settings)
        self.inner = context.search_backend(context.settings.get("inner", "bm25"))

    def build(self, documents):
        self.inner.build(documents)

    def add(self, documents):
        self.inner.add(documents)

    def remove(self, names):
        self.inner.remove(names)

    def search(self, query, limit, admission, extra=()):
        return self.inner.search(query, limit, admission, extra)

    def unmatched_words(self, query, hits, extra=()):
        return self.inner.unmatched_words(query, hits, extra)

    def __len__(self):
        return len(self.inner)


class Plain(Wrapper):
    def __init__(self, context):
        self.settings = dict(context.settings)
        self.inner = None


@hookimpl
def hermes_search_backends():
    return [
        SearchBackendSpec("wrapper", factory=Wrapper),
        SearchBackendSpec("plain", factory=Plain),
    ]
"""

FAILING = """
from hermes_core._hookspecs import hookimpl
from hermes_core._specs import SearchBackendSpec


def broken(context):
    raise ValueError("plugins.entries.failing.size must be a number")


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("broken", factory=broken)]
"""


@pytest.fixture
def env(tmp_path: Path) -> Any:
    (tmp_path / "work").mkdir()
    yield Environment(
        home=tmp_path / "home",
        cwd=tmp_path / "work",
        variables={"HERMES_LOG_DIR": str(tmp_path / "logs"), "HERMES_STRICT_PLUGINS": "1"},
    )
    forget_modules_under(tmp_path)


def config(backend: str, **entries: dict[str, Any]) -> Config:
    return Config.model_validate(
        {
            "plugins": {"enabled": ["wrapping", "failing"], "entries": entries},
            "tools": {"tool_search": {"backend": backend}},
        }
    )


def search(env: Environment, settings: Config, query: str) -> tuple[Any, dict[str, Any]]:
    async def main() -> tuple[Any, dict[str, Any]]:
        async with Host(settings, env) as host:
            answer = await host.dispatch("tool_search", {"queries": [query]}, host.new_session())
            assert answer.structured is not None
            return host.tool_search.backend, answer.structured

    return anyio.run(main)


def build(env: Environment, settings: Config) -> Any:
    async def main() -> Any:
        async with Host(settings, env) as host:
            return host.tool_search.backend

    return anyio.run(main)


def test_backend_factory_builds_another_backend_by_name(env: Environment) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)

    backend, answer = search(env, config("wrapper"), "todo list")

    assert type(backend.inner).__name__ == "BM25Index"
    assert answer["results"][0]["matches"][0] == "todo_list"


def test_backend_built_for_another_gets_its_own_plugin_settings(env: Environment) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)
    settings = config("wrapper", wrapping={"inner": "plain"}, failing={"size": 1})

    backend = build(env, settings)

    assert backend.settings == {"inner": "plain"}
    assert backend.inner.settings == {"inner": "plain"}  # "plain" is a backend of "wrapping"


def test_unknown_backend_asked_for_by_a_backend_lists_the_valid_names(env: Environment) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)

    with pytest.raises(RegistrationError) as caught:
        build(env, config("wrapper", wrapping={"inner": "bm26"}))

    message = str(caught.value)
    assert "unknown search backend 'bm26' (asked for by search backend 'wrapper')" in message
    assert "valid names: bm25, broken, plain, wrapper" in message


def test_backend_asking_for_itself_is_an_error(env: Environment) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)

    with pytest.raises(RegistrationError, match=r"'wrapper' cannot be built from itself"):
        build(env, config("wrapper", wrapping={"inner": "wrapper"}))


def test_failing_backend_factory_is_an_error_naming_its_plugin_and_backend(
    env: Environment,
) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)

    with pytest.raises(PluginError) as caught:
        build(env, config("wrapper", wrapping={"inner": "broken"}))

    assert caught.value.plugin == "failing"
    assert str(caught.value).startswith(
        "plugin 'failing': search backend 'broken' (from hermes_search_backends) could not be "
        "built: its factory raised ValueError: plugins.entries.failing.size must be a number"
    )


def test_context_not_given_by_a_host_cannot_build_backends(env: Environment) -> None:
    context = PluginContext(Config(), env)

    with pytest.raises(RegistrationError, match=r"cannot build search backend 'bm25'"):
        context.search_backend("bm25")


def test_listing_plugins_builds_a_backend_that_asks_for_another(env: Environment) -> None:
    write_dir_plugin(env.user_plugins_dir, "wrapping", WRAPPER)
    write_dir_plugin(env.user_plugins_dir, "failing", FAILING)
    host = Host(config("wrapper"), env, strict=False)
    host.load_plugins()
    try:
        problems = host.check_plugins()
        statuses = {record.name: record.status for record in host.plugins}
    finally:
        host.close()

    assert problems == []
    assert statuses["wrapping"] == "enabled"

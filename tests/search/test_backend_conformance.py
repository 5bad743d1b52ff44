"""The search backend conformance rules, run as their authors would run them against the
bundled ``bm25`` backend and the example plugin's ``keyword`` backend (installed as a user
plugin and enabled)."""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core import Config, Environment
from hermes_core.search import SearchBackend
from hermes_core.testing import make_search_backend, search_backend_conformance

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "search_backend_plugin"


@functools.cache
def example_installed() -> Environment:
    """A temporary home (removed at exit) holding the example plugin as a user plugin."""
    root = Path(tempfile.mkdtemp(prefix="hermes-conformance-"))
    shutil.copytree(EXAMPLE, root / "home" / "plugins" / "keyword-search")
    (root / "work").mkdir()
    return Environment(home=root / "home", cwd=root / "work", variables={})


def keyword_backend() -> SearchBackend:
    config = Config.model_validate({"plugins": {"enabled": ["keyword-search"]}})
    return make_search_backend("keyword", config=config, env=example_installed())


@pytest.fixture(scope="module", autouse=True)
def _remove_the_example_home() -> object:
    yield None
    if example_installed.cache_info().currsize:
        shutil.rmtree(example_installed().home.parent, ignore_errors=True)


@pytest.mark.parametrize("check", search_backend_conformance(lambda: make_search_backend("bm25")))
def test_bm25_follows_the_search_backend_protocol(check: Callable[[], None]) -> None:
    check()


@pytest.mark.parametrize("check", search_backend_conformance(keyword_backend))
def test_the_example_keyword_backend_follows_the_search_backend_protocol(
    check: Callable[[], None],
) -> None:
    check()

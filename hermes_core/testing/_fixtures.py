"""The pytest fixtures of the test kit (all build real files in ``tmp_path``); the package
``hermes_core.testing`` is registered as a pytest plugin (entry point ``pytest11``), so a
plugin's tests get them without a ``conftest.py``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hermes_core._paths import Environment
from hermes_core.testing._cli import HermesCli
from hermes_core.testing._files import (
    FakeNixStore,
    InstalledDistribution,
    forget_modules_under,
    make_nix_store,
    write_dir_plugin,
    write_distribution,
)
from hermes_core.testing._hosts import make_host

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._host import Host

__all__ = [
    "hermes_cli",
    "hermes_dir_plugin",
    "hermes_distribution",
    "hermes_env",
    "hermes_home",
    "hermes_host",
    "hermes_nix_store",
    "hermes_project",
]


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    """A temporary, empty ``HERMES_HOME``."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    return home


@pytest.fixture
def hermes_project(tmp_path: Path) -> Path:
    """A temporary working directory standing for the user's project."""
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def hermes_env(tmp_path: Path, hermes_home: Path, hermes_project: Path) -> Iterator[Environment]:
    """An environment with a temporary home and project, an empty temporary bundled-plugins
    directory (``HERMES_BUNDLED_PLUGINS``), ``HERMES_STRICT_PLUGINS=1``, a temporary cache
    directory (``HERMES_CACHE_DIR``, ``tmp_path/cache``), and a temporary
    ``user_home`` (``tmp_path/user-home``, the user's ``~``; not created).

    Change it with :func:`dataclasses.replace`. Plugin modules imported from ``tmp_path`` are
    dropped from ``sys.modules`` afterwards.
    """
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    variables = {
        "HERMES_BUNDLED_PLUGINS": str(bundled),
        "HERMES_STRICT_PLUGINS": "1",
        # Tool manifests and search indexes of the test's hosts never touch the user's cache.
        "HERMES_CACHE_DIR": str(tmp_path / "cache"),
    }
    yield Environment(
        home=hermes_home, cwd=hermes_project, variables=variables, user_home=tmp_path / "user-home"
    )
    forget_modules_under(tmp_path)


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> HermesCli:
    """A :class:`HermesCli` over ``hermes_home`` and ``hermes_project``: ``.run(*args, ok=True,
    input=None, env=None)`` runs the real ``hermes`` in them, ``.json(*args)`` parses its
    output, ``.variables(**extra)`` is its environment (``HOME`` is ``tmp_path/user-home``, logs
    and cache under ``tmp_path``, strict plugin loading)."""
    return HermesCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.fixture
def hermes_host(hermes_env: Environment) -> Iterator[Callable[..., Host]]:
    """``make(plugins={name: object}, config=None, *, bundled=True) -> Host``: a started host in
    ``hermes_env`` with the plugin objects given to :meth:`~hermes_core._host.Host.register`,
    and the real bundled plugins unless ``bundled=False`` (then the empty bundled directory of
    ``hermes_env``). Closed after the test; for MCP servers, use ``async with Host(...)``."""
    made: list[Host] = []

    def make(
        plugins: Mapping[str, object] | Iterable[tuple[str, object]] = (),
        config: Config | None = None,
        *,
        bundled: bool = True,
    ) -> Host:
        env = hermes_env
        if bundled:
            variables = dict(hermes_env.variables)
            variables.pop("HERMES_BUNDLED_PLUGINS", None)
            env = replace(hermes_env, variables=variables)
        host = make_host(config, env, plugins=plugins)
        made.append(host)
        return host

    yield make
    for host in made:
        host.close()


@pytest.fixture
def hermes_dir_plugin() -> Callable[..., Path]:
    """``make(root, name, source=..., dirname=None, manifest=None, files=None) -> Path``:
    a directory plugin (see :func:`write_dir_plugin`)."""
    return write_dir_plugin


@pytest.fixture
def hermes_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., InstalledDistribution]]:
    """``make(name, version="1.0", entry_points=..., files=...) -> InstalledDistribution``:
    an installed distribution in ``tmp_path/site-packages``, which is on ``sys.path`` for the
    test (pass ``site_dir`` in ``PYTHONPATH`` to a subprocess)."""
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir(exist_ok=True)
    monkeypatch.syspath_prepend(str(site_dir))

    def make(name: str, version: str = "1.0", **options: Any) -> InstalledDistribution:
        return write_distribution(site_dir, name, version, **options)

    yield make
    forget_modules_under(site_dir)


@pytest.fixture
def hermes_nix_store(tmp_path: Path) -> Iterator[Callable[..., FakeNixStore]]:
    """``make(label="hermes-plugins") -> FakeNixStore``: a store path under ``tmp_path/nix``
    (put ``store.path`` in ``HERMES_NIX_PLUGINS``). Its site dir leaves ``sys.path`` after
    the test."""
    root = tmp_path / "nix" / "store"
    stores: list[FakeNixStore] = []

    def make(label: str = "hermes-plugins") -> FakeNixStore:
        store = make_nix_store(root, label)
        stores.append(store)
        return store

    yield make
    for store in stores:
        while str(store.site_dir) in sys.path:
            sys.path.remove(str(store.site_dir))
        forget_modules_under(store.path)

"""Test helpers for plugin authors, registered as a pytest plugin (entry point ``pytest11``).

Fixtures (all build real files in ``tmp_path``):

- ``hermes_home``: a temporary, empty ``HERMES_HOME``;
- ``hermes_project``: a temporary working directory (the project);
- ``hermes_env``: an :class:`~hermes_core.paths.Environment` over those two, with an empty
  temporary bundled-plugins directory and strict plugin loading;
- ``hermes_dir_plugin``: writes a directory plugin (``plugin.yaml`` and ``__init__.py``);
- ``hermes_distribution``: writes an installed distribution (a real ``*.dist-info``) into a
  temporary ``site-packages`` that is put on ``sys.path``;
- ``hermes_nix_store``: writes a :class:`FakeNixStore`, a store path laid out like Nix's;
- ``hermes_cli``: a :class:`HermesCli` that runs the real ``hermes`` command as a subprocess in
  that home and project;
- ``hermes_host``: starts a :class:`~hermes_core.host.Host` in that environment with plugin
  objects given to :meth:`~hermes_core.host.Host.register` (see :func:`make_host`).

:func:`search_backend_conformance` turns the rules of :mod:`hermes_core.conformance` into one
test per rule for a search backend plugin. The plain functions (:func:`write_dir_plugin`,
:func:`write_distribution`, :func:`make_host`, :func:`make_search_backend`) work outside pytest
too, e.g. in a benchmark.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hermes_core.paths import Environment, home_tag

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.host import Host
    from hermes_core.search.backend import SearchBackend

__all__ = [
    "PLUGIN_SOURCE",
    "FakeNixStore",
    "HermesCli",
    "InstalledDistribution",
    "forget_modules_under",
    "hermes_cli",
    "hermes_dir_plugin",
    "hermes_distribution",
    "hermes_env",
    "hermes_home",
    "hermes_host",
    "hermes_nix_store",
    "hermes_project",
    "make_host",
    "make_nix_store",
    "make_search_backend",
    "search_backend_conformance",
    "search_backend_module",
    "write_dir_plugin",
    "write_distribution",
]

PLUGIN_SOURCE = '''"""A test plugin."""
'''


def _yaml_text(data: Mapping[str, Any]) -> str:
    import io

    from ruamel.yaml import YAML

    stream = io.StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump(dict(data), stream)
    return stream.getvalue()


def write_dir_plugin(
    root: Path,
    name: str,
    source: str = PLUGIN_SOURCE,
    *,
    dirname: str | None = None,
    manifest: Mapping[str, Any] | str | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write ``<root>/<dirname>/plugin.yaml`` and ``__init__.py`` (holding ``source``).

    ``manifest`` is either extra keys merged over ``{"name": name, "version": "1.0"}`` or the
    exact text of ``plugin.yaml`` (to write a broken one). ``dirname`` defaults to ``name``.
    ``files`` adds more files, by path relative to the plugin directory. Returns the directory.
    """
    directory = root / (dirname or name)
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(manifest, str):
        text = manifest
    else:
        text = _yaml_text({"name": name, "version": "1.0", **(manifest or {})})
    (directory / "plugin.yaml").write_text(text, encoding="utf-8")
    (directory / "__init__.py").write_text(source, encoding="utf-8")
    for relative, content in (files or {}).items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return directory


@dataclass(frozen=True)
class InstalledDistribution:
    """A distribution written by :func:`write_distribution`: its ``site_dir`` (put it on
    ``sys.path`` or ``PYTHONPATH``) and its ``dist_info`` folder."""

    name: str
    version: str
    site_dir: Path
    dist_info: Path


def write_distribution(
    site_dir: Path,
    name: str,
    version: str = "1.0",
    *,
    entry_points: Mapping[str, str] | None = None,
    files: Mapping[str, str] | None = None,
    summary: str = "",
    group: str = "hermes_core.plugins",
) -> InstalledDistribution:
    """Install a distribution the way pip leaves it: files under ``site_dir`` plus
    ``<name>-<version>.dist-info`` with ``METADATA``, ``entry_points.txt`` and ``RECORD``.

    ``entry_points`` maps plugin names to ``module`` or ``module:attr`` in ``group``;
    ``files`` maps paths relative to ``site_dir`` (``demo_pkg/__init__.py``) to their text.
    """
    site_dir.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for relative, content in (files or {}).items():
        target = site_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        written.append(relative)
    folder = name.replace("-", "_")
    dist_info = site_dir / f"{folder}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if summary:
        metadata += f"Summary: {summary}\n"
    (dist_info / "METADATA").write_text(metadata, encoding="utf-8")
    if entry_points:
        lines = [f"[{group}]", *(f"{key} = {value}" for key, value in entry_points.items())]
        (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    records = [*written, f"{dist_info.name}/METADATA", f"{dist_info.name}/RECORD"]
    (dist_info / "RECORD").write_text("".join(f"{r},,\n" for r in records), encoding="utf-8")
    importlib.invalidate_caches()
    return InstalledDistribution(name, version, site_dir, dist_info)


@dataclass(frozen=True)
class FakeNixStore:
    """A directory laid out like a Nix store path holding hermes plugins: directory plugins
    under ``share/hermes/plugins/`` and distributions under ``lib/pythonX.Y/site-packages/``.
    Put :attr:`path` in ``HERMES_NIX_PLUGINS``."""

    path: Path
    python_version: tuple[int, int] = (sys.version_info.major, sys.version_info.minor)

    @property
    def plugins_dir(self) -> Path:
        """``<store>/share/hermes/plugins``."""
        return self.path / "share" / "hermes" / "plugins"

    @property
    def site_dir(self) -> Path:
        """``<store>/lib/pythonX.Y/site-packages``."""
        major, minor = self.python_version
        return self.path / "lib" / f"python{major}.{minor}" / "site-packages"

    def add_dir_plugin(self, name: str, source: str = PLUGIN_SOURCE, **options: Any) -> Path:
        """A directory plugin in this store (options as for :func:`write_dir_plugin`)."""
        return write_dir_plugin(self.plugins_dir, name, source, **options)

    def add_distribution(
        self, name: str, version: str = "1.0", **options: Any
    ) -> InstalledDistribution:
        """A distribution in this store's site dir (options as for :func:`write_distribution`)."""
        return write_distribution(self.site_dir, name, version, **options)


def make_nix_store(root: Path, label: str = "hermes-plugins") -> FakeNixStore:
    """A new :class:`FakeNixStore` under ``root``, named like ``<hash>-<label>``."""
    digest = hashlib.sha256(f"{root}/{label}".encode()).hexdigest()[:32]
    store = FakeNixStore(root / f"{digest}-{label}")
    store.plugins_dir.mkdir(parents=True, exist_ok=True)
    store.site_dir.mkdir(parents=True, exist_ok=True)
    return store


class HermesCli:
    """The real ``hermes`` command (``python -m hermes_core``) run as a subprocess in temporary
    places under ``root``: ``home`` (``HERMES_HOME``), ``work`` (the working directory),
    ``user_home`` (``HOME``), and ``root/logs`` and ``root/cache`` (``HERMES_LOG_DIR``,
    ``HERMES_CACHE_DIR``; the logs go to this home's folder in ``root/logs``, :attr:`log_dir`).
    ``home`` and ``work`` are created; ``user_home`` is not.

    With ``config_file`` every command starts with ``--config FILE``; without it hermes reads
    ``home/config.yaml``. Either way :attr:`config` is the file it reads.
    """

    def __init__(
        self,
        root: Path,
        *,
        home: Path | None = None,
        work: Path | None = None,
        user_home: Path | None = None,
        config_file: Path | None = None,
    ) -> None:
        self.root = root
        self.home = home or root / "hermes-home"
        self.work = work or root / "project"
        self.user_home = user_home or root / "user-home"
        self.config_file = config_file
        self.home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"HermesCli(root={self.root!r})"

    @property
    def config(self) -> Path:
        """The configuration file the command reads: ``config_file`` or ``home/config.yaml``."""
        return self.config_file or self.home / "config.yaml"

    @property
    def log_dir(self) -> Path:
        """Where the command writes its logs (``activity.jsonl``, ``mcp-NAME.log``): this
        home's folder in ``HERMES_LOG_DIR`` (``root/logs``), as
        :attr:`~hermes_core.paths.Environment.log_dir` names it."""
        return self.root / "logs" / home_tag(self.home)

    @property
    def cache_dir(self) -> Path:
        """``HERMES_CACHE_DIR``: ``root/cache``."""
        return self.root / "cache"

    def variables(self, **extra: str) -> dict[str, str]:
        """The whole environment of the subprocess: ``PATH`` of this process, ``HOME``, the
        temporary ``HERMES_*`` locations and ``HERMES_STRICT_PLUGINS=1``, then ``extra`` (which
        may replace any of them). Nothing else leaks in from this process."""
        return {
            "PATH": Environment.from_process().get("PATH") or os.defpath,
            "HOME": str(self.user_home),
            "HERMES_HOME": str(self.home),
            "HERMES_LOG_DIR": str(self.root / "logs"),
            "HERMES_CACHE_DIR": str(self.cache_dir),
            "HERMES_STRICT_PLUGINS": "1",
            **extra,
        }

    def command(self, *args: str) -> list[str]:
        """``[python, "-m", "hermes_core", ("--config", FILE,) *args]``, e.g. to start with
        :class:`subprocess.Popen` or hand to an MCP client."""
        config = ["--config", str(self.config_file)] if self.config_file is not None else []
        return [sys.executable, "-m", "hermes_core", *config, *args]

    def run(
        self,
        *args: str,
        ok: bool = True,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``hermes *args`` in :attr:`work` with ``env`` (default :meth:`variables`) and
        ``input`` on stdin (else an empty stdin, never a terminal), capturing stdout and stderr
        as text. With ``ok`` a non-zero exit fails the test, showing the command, its status
        and its stderr. ``timeout`` (seconds) only guards against a hung command."""
        __tracebackhide__ = True  # a failure points at the test's line, not at this helper
        done = subprocess.run(
            self.command(*args),
            cwd=self.work,
            env=dict(env) if env is not None else self.variables(),
            input=input,
            # Never the terminal pytest runs in: hermes must see no TTY unless a test gives one.
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if ok and done.returncode != 0:
            pytest.fail(
                f"hermes {' '.join(args)} exited with {done.returncode}; stderr:\n{done.stderr}"
            )
        return done

    def json(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> Any:
        """Run ``hermes *args`` (which must succeed) and parse its stdout as JSON."""
        __tracebackhide__ = True
        return json.loads(self.run(*args, input=input, env=env).stdout)


def _installed_only() -> Environment:
    """An environment that reads the plugins installed with the running Python: the bundled
    ones and the distributions pip installed (entry points on ``sys.path``), so the plugin a
    test's author installed is found as a user's ``hermes`` finds it. It reads nothing of the
    user's (no ``HERMES_HOME``, configuration, directory plugins, project or Nix store) and has
    its own home, logs and cache (a backend that persists its index never writes the user's)."""
    root = Path(tempfile.gettempdir()) / "hermes-make-search-backend"
    return Environment(home=root / "home", cwd=root, variables={})


def make_host(
    config: Config | None = None,
    env: Environment | None = None,
    *,
    plugins: Mapping[str, object] | Iterable[tuple[str, object]] = (),
) -> Host:
    """A started :class:`~hermes_core.host.Host` over ``config`` (default: ``Config()``) and
    ``env`` (default: the bundled plugins and those pip installed in the running environment,
    nothing of the user's is read), with ``plugins``
    (name -> plugin object, a module or an object whose methods carry ``@hookimpl``) given to
    :meth:`~hermes_core.host.Host.register` first. Close it with ``host.close()``::

        host = make_host(plugins={"shouty": ShoutyPlugin()})
        result = anyio.run(host.dispatch, "shout", {"text": "hi"}, host.new_session())
        host.close()
    """
    from hermes_core.config import Config
    from hermes_core.host import Host

    host = Host(config or Config(), env or _installed_only())
    pairs = plugins.items() if isinstance(plugins, Mapping) else plugins
    for name, plugin in pairs:
        host.register(plugin, name=name)
    host.start()
    return host


def make_search_backend(
    name: str = "bm25", *, config: Config | None = None, env: Environment | None = None
) -> SearchBackend:
    """A new, empty instance of the search backend registered as ``name``, made as the host
    makes it (the selection step: factory guarded, protocol checked), from the plugins that
    ``config`` enables among those ``env`` finds (by default the bundled plugins and those pip
    installed in the running environment, nothing of the user's). For unit tests, conformance
    checks and benchmarks of a backend without a host::

        backend = make_search_backend("bm25")
        backend.build([ToolDocument("create_issue", "Create an issue", "github")])
    """
    host = make_host(config, env)
    try:
        return host.create_search_backend(name)
    finally:
        host.close()


def search_backend_conformance(make: Callable[[], SearchBackend]) -> list[Any]:
    """One ``pytest.param`` per rule of :mod:`hermes_core.conformance` (its id is the rule's
    name): a function of no arguments checking that rule against backends from ``make``, which
    returns a new, empty backend each time it is called::

        @pytest.mark.parametrize(
            "check", search_backend_conformance(lambda: make_search_backend("keyword", ...))
        )
        def test_keyword_backend_follows_the_protocol(check):
            check()
    """
    import functools

    from hermes_core.conformance import SEARCH_BACKEND_RULES

    return [
        pytest.param(functools.partial(rule, make), id=rule.__name__.replace("_", "-"))
        for rule in SEARCH_BACKEND_RULES
    ]


def search_backend_module(name: str = "bm25", submodule: str = "") -> types.ModuleType:
    """The module of the plugin that registers the search backend ``name`` (its ``submodule``,
    e.g. ``"index"``, when given), imported as the host imports it (a bundled plugin lives
    under a private module name): for tests and benchmarks of the engine itself."""
    package = type(make_search_backend(name)).__module__.rpartition(".")[0]
    return importlib.import_module(f"{package}.{submodule}" if submodule else package)


def forget_modules_under(directory: Path) -> None:
    """Drop from ``sys.modules`` every module whose file lies under ``directory``, so the next
    test imports its own copy of a same-named plugin."""
    root = directory.resolve()
    for name, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None)
        if location and Path(location).resolve().is_relative_to(root):
            del sys.modules[name]


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
    ``hermes_env`` with the plugin objects given to :meth:`~hermes_core.host.Host.register`,
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

"""Builders of real plugin places on disk, for tests: a directory plugin, an installed
distribution (a real ``*.dist-info``), a Nix store path; and forgetting the modules a test
imported from them."""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "PLUGIN_SOURCE",
    "FakeNixStore",
    "InstalledDistribution",
    "forget_modules_under",
    "make_nix_store",
    "write_dir_plugin",
    "write_distribution",
]

PLUGIN_SOURCE = '''"""A test plugin."""
'''
"""The source of a plugin that does nothing: the default ``__init__.py`` of
:func:`write_dir_plugin`."""


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


def forget_modules_under(directory: Path) -> None:
    """Drop from ``sys.modules`` every module whose file lies under ``directory``, so the next
    test imports its own copy of a same-named plugin."""
    root = os.path.join(os.path.realpath(directory), "")
    for name, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None)
        if isinstance(location, str) and _real_path(location).startswith(root):
            del sys.modules[name]


def _real_path(location: str) -> str:
    # Resolving every module's file on each call cost a second or more per test (thousands of
    # modules, a lstat per path component); a module's absolute path resolves the same way all
    # session long, so it is resolved once. A relative one depends on the working directory.
    if os.path.isabs(location):
        return _real_absolute_path(location)
    return os.path.realpath(location)


@functools.cache
def _real_absolute_path(location: str) -> str:
    return os.path.realpath(location)

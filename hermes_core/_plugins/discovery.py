"""Find plugins in the five sources, reading only directories, manifests and metadata.

Nothing here imports plugin code: a candidate is what a plugin says about itself, and the gate
decides from that whether its code may run. Directory plugins are read here; distributions
(pip, Nix) in :mod:`hermes_core._plugins.distributions`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core._plugins.candidates import Candidate, Discovery, Source
from hermes_core._plugins.distributions import resolved, scan_nix_site, scan_pip
from hermes_core._plugins.manifest import (
    MANIFEST_FILE,
    ManifestError,
    load_manifest,
    normalize_name,
)
from hermes_core._plugins.manifest_cache import manifest_cache
from hermes_core._project_trust import (
    PROJECT_GATE_FLAG,
    gate_is_open,
    project_owns,
    project_root,
)

if TYPE_CHECKING:
    from ruamel.yaml import YAML

    from hermes_core._paths import Environment

PROJECT_PLUGINS_FLAG = PROJECT_GATE_FLAG
AUTOLOAD_OFF_FLAG = "HERMES_DISABLE_PLUGIN_AUTOLOAD"


def discover(env: Environment) -> Discovery:
    """Find every plugin ``env`` can see, in precedence order (bundled first, Nix last).

    ``HERMES_DISABLE_PLUGIN_AUTOLOAD`` keeps only the bundled source. Project plugins are found
    even when ``HERMES_ENABLE_PROJECT_PLUGINS`` is off, so they can be listed as gated.
    """
    with manifest_cache(env.cache_dir):
        return _discover(env)


def _discover(env: Environment) -> Discovery:
    from hermes_core._yaml_limits import manifest_yaml

    found = Discovery(project_enabled=gate_is_open(env))
    yaml = manifest_yaml()  # one per call: a ruamel YAML must not be shared between threads
    _scan_directory(env.bundled_plugins_dir, "bundled", found, yaml)
    if env.flag(AUTOLOAD_OFF_FLAG):
        return found
    seen: set[Path] = set()
    # Outside a project (/, ~ and above) ./.hermes/plugins is no project's: not read.
    has_project = project_root(env) is not None
    for root in (env.user_plugins_dir, *([env.project_plugins_dir] if has_project else [])):
        _scan_directory(root, "user", found, yaml, env=env, seen=seen)
    nix_sites = [_nix_site_dir(store, env) for store in env.nix_store_paths]
    inside, editable = scan_pip(
        found, yaml, exclude={resolved(site) for site in nix_sites}, env=env
    )
    if inside:  # importlib_metadata's PathDistribution: imported only when needed
        from hermes_core._plugins.project_distributions import scan_project_distributions

        scan_project_distributions(inside, found, yaml, editable)
    for store, site in zip(env.nix_store_paths, nix_sites, strict=True):
        _scan_directory(store / "share" / "hermes" / "plugins", "nix", found, yaml)
        scan_nix_site(site, found, yaml)
    return found


def _nix_site_dir(store: Path, env: Environment) -> Path:
    major, minor = env.python_version
    return store / "lib" / f"python{major}.{minor}" / "site-packages"


def _scan_directory(
    root: Path,
    source: Source,
    found: Discovery,
    yaml: YAML,
    *,
    env: Environment | None = None,
    seen: set[Path] | None = None,
) -> None:
    """Directory plugins: ``<root>/<dir>/plugin.yaml`` plus ``<root>/<dir>/__init__.py``.

    With ``env`` (the user's and the project's directories), each plugin is ``project`` or
    ``user`` by :func:`~hermes_core._project_trust.project_owns`, whichever of the two folders
    it was found in; a folder already scanned under another path (``seen``, real paths) is
    not scanned twice."""
    try:
        entries = sorted(root.iterdir(), key=lambda entry: entry.name)
    except FileNotFoundError:
        return
    except OSError as exc:
        found.warnings.append(f"{source} plugins: cannot read {root}: {exc.strerror or exc}")
        return
    for entry in entries:
        if entry.name.startswith(("_", ".")):
            continue
        try:
            if not entry.is_dir():
                continue
            manifest_path = entry / MANIFEST_FILE
            # Anything named plugin.yaml (a FIFO, a dangling link) is the plugin's: the
            # manifest reader refuses what is not a regular file, naming it.
            if not (manifest_path.exists() or manifest_path.is_symlink()):
                continue
            has_init = (entry / "__init__.py").is_file()
        except OSError as exc:
            found.warnings.append(f"{source} plugins: cannot read {entry}: {exc.strerror or exc}")
            continue
        label = source
        if env is not None:
            if seen is not None:
                real = resolved(entry)
                if real in seen:
                    continue
                seen.add(real)
            label = "project" if project_owns(env, entry) else "user"
        found.candidates.append(_directory_candidate(entry, label, yaml, has_init=has_init))


def _directory_candidate(
    directory: Path, source: Source, yaml: YAML, *, has_init: bool
) -> Candidate:
    try:
        manifest = load_manifest(directory / MANIFEST_FILE, yaml=yaml)
    except ManifestError as exc:
        return Candidate(
            source=source,
            name=normalize_name(directory.name),
            path=directory,
            directory=directory,
            error=f"broken manifest: {exc}",
        )
    error = None if has_init else f"{directory}: no __init__.py beside {MANIFEST_FILE}"
    return Candidate(
        source=source,
        name=manifest.name,
        path=directory,
        manifest=manifest,
        directory=directory,
        error=error,
    )

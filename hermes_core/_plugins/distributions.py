"""Plugins of installed distributions: entry points of the group :data:`ENTRY_POINT_GROUP`
found through ``sys.path`` (``pip``, or ``project`` when only the project supplies them) and in
a Nix store's ``site-packages`` (``nix``), read from their metadata without importing them."""

from __future__ import annotations

import functools
import json
import sys
import urllib.parse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core._plugins.candidates import Candidate, Discovery, Source
from hermes_core._plugins.manifest import (
    MANIFEST_FILE,
    Manifest,
    ManifestError,
    load_manifest,
    manifest_from_mapping,
    normalize_name,
)
from hermes_core._project_trust import project_owns, project_root
from hermes_core._shown import clipped, shown

if TYPE_CHECKING:
    from importlib_metadata import EntryPoint, IDistribution
    from ruamel.yaml import YAML

    from hermes_core._paths import Environment

ENTRY_POINT_GROUP = "hermes_core.plugins"


def resolved(path: Path) -> Path:
    """``path`` with its links resolved, or as it is when it cannot be."""
    try:
        return path.resolve()
    except OSError:
        return path


def scan_pip(
    found: Discovery, yaml: YAML, *, exclude: set[Path], env: Environment
) -> tuple[list[Path], dict[str, Path]]:
    """Entry points of group ``hermes_core.plugins`` of every distribution found through a
    ``sys.path`` entry outside the project; returns the entries inside it, for
    :func:`~hermes_core._plugins.project_distributions.scan_project_distributions`, and the
    editable installs found (normalized name -> the folder installed from).

    Where a plugin's code lies does not decide its source; how it got there does. A
    distribution whose metadata is found through a ``sys.path`` entry outside the project was
    installed by the user, so it is a ``pip`` plugin, its module inside the project included
    when pip recorded an editable install of the folder holding it (``direct_url.json``:
    ``pip install -e plugins/x`` in a checkout). What only the project supplies is the
    project's: a distribution found through a ``sys.path`` entry inside the project (the
    working directory that ``python -m`` puts there, ``PYTHONPATH=.`` or ``src``), and a module
    inside the project that is not its distribution's own (a module of that name earlier on
    ``sys.path``): a ``project`` plugin, gated as one, that never hides an installed
    distribution of the same name. The running interpreter's own directories (site-packages,
    the standard library) are the user's even inside the project (a ``.venv`` there): whatever
    is installed into them runs when the interpreter starts anyway.
    """
    from importlib_metadata import distributions

    project = project_root(env)
    interpreter = _interpreter_directories() if project is not None else ()
    outside: list[str] = []
    inside: list[Path] = []
    for entry in sys.path:
        where = resolved(Path(entry))
        if project is not None and _is_project_file(where, env, interpreter):
            inside.append(where)
        else:
            outside.append(entry)
    entry_points: list[EntryPoint] = []
    seen: set[str] = set()
    editable: dict[str, Path] = {}
    for dist in distributions(path=outside):
        # As importlib's entry_points(): the first distribution of a name on sys.path wins.
        key = _distribution_key(dist)
        if key in seen:
            continue
        seen.add(key)
        found_here = _plugin_entry_points(dist, found)
        if found_here and exclude and resolved(Path(str(dist.locate_file("")))) in exclude:
            continue  # a Nix site dir already on sys.path: reported as nix, not twice
        entry_points.extend(found_here)
        source = editable_source(dist) if found_here and project is not None else None
        if source is not None:
            editable[key] = source
    for entry_point in sorted(entry_points, key=lambda ep: ep.name):
        candidate = _entry_point_candidate(entry_point, entry_point.dist, "pip", None, yaml)
        if project is not None and _is_project_file(candidate.path, env, interpreter):
            installed = (
                editable.get(_distribution_key(entry_point.dist)) if entry_point.dist else None
            )
            if not _lies_in(candidate.path, installed):
                candidate = replace(candidate, source="project")
        found.candidates.append(candidate)
    return inside, editable


def editable_source(dist: IDistribution) -> Path | None:
    """The folder pip installed ``dist`` from in editable mode (``pip install -e FOLDER``), as
    its ``direct_url.json`` records it (PEP 610), resolved; ``None`` for any other install or a
    record that does not say so plainly."""
    try:
        text = dist.read_text("direct_url.json")
        record = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    info = record.get("dir_info")
    url = record.get("url")
    if not (isinstance(info, dict) and info.get("editable") is True and isinstance(url, str)):
        return None
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    # urllib.request brings http.client, email and ssl: a fifth of `hermes --help`'s start.
    from urllib.request import url2pathname

    return resolved(Path(url2pathname(parsed.path)))


def _lies_in(path: Path | None, folder: Path | None) -> bool:
    return path is not None and folder is not None and resolved(path).is_relative_to(folder)


def _plugin_entry_points(
    dist: IDistribution, found: Discovery, kind: str = "installed distribution"
) -> list[EntryPoint]:
    """``dist``'s entry points of the plugin group. A malformed ``entry_points.txt`` is a
    warning naming the distribution (a ``kind`` one) and gives none: one broken distribution,
    whoever installed it, never stops discovery. A file that does not mention the group is not
    parsed (most of an environment's distributions: parsing them all cost about as much as the
    rest of the scan)."""
    try:
        text = dist.read_text("entry_points.txt")
        if not text or ENTRY_POINT_GROUP not in text:
            return []
        return list(dist.entry_points.select(group=ENTRY_POINT_GROUP))
    except (ValueError, TypeError) as exc:  # importlib's parser on a malformed file
        found.warnings.append(
            f"{kind} {_folder(dist)}: entry_points.txt cannot be read "
            f"({_parse_problem(dist, exc)}): ignored"
        )
        return []


def _folder(dist: IDistribution) -> str:
    folder = getattr(dist, "_path", None)  # a PathDistribution's metadata folder
    return str(folder) if folder is not None else clipped(str(dist.metadata.get("Name") or "?"))


def _parse_problem(dist: IDistribution, error: Exception) -> str:
    """The first line of ``dist``'s ``entry_points.txt`` that is not ``name = value``, a
    ``[group]``, a comment or blank (the parser's own message names no line), else its
    message."""
    try:
        text = dist.read_text("entry_points.txt") or ""
    except ValueError:  # not UTF-8
        text = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", ";", "[")) and "=" not in stripped:
            return f"line {number} is not name = value: {shown(stripped)}"
    return clipped(str(error))


def malformed_distribution(error: BaseException) -> str | None:
    """What to tell the user when ``error`` was raised by Python's metadata parser: which
    installed distribution has a malformed ``entry_points.txt``, and what to do; ``None`` when
    ``error`` came from elsewhere, or no distribution is malformed. In an exception group, the
    first of its exceptions (nested groups included) that was raised by the parser counts.

    Discovery skips such a distribution with a warning, but pydantic (the MCP SDK's messages
    are its models) reads every distribution's entry points when it builds its first model, and
    stops on the first that does not parse, with no word of which one it was.
    """
    if isinstance(error, BaseExceptionGroup):
        return next(
            (found for inner in error.exceptions if (found := malformed_distribution(inner))),
            None,
        )
    frame = error.__traceback__
    while frame is not None:
        where = frame.tb_frame.f_code.co_filename.replace("\\", "/")
        if "/importlib/metadata/" in where or "/importlib_metadata/" in where:
            break
        frame = frame.tb_next
    else:
        return None
    from importlib_metadata import distributions

    for dist in distributions():
        try:
            dist.entry_points  # noqa: B018 (parsed to see whether it can be)
        except (TypeError, ValueError) as exc:
            return (
                f"the installed distribution {_folder(dist)} has a malformed entry_points.txt "
                f"({_parse_problem(dist, exc)}), which stops every program that reads the "
                "installed entry points; reinstall or uninstall it"
            )
    return None


def _distribution_key(dist: IDistribution) -> str:
    """The normalized name importlib_metadata itself tells distributions apart by, read from
    the metadata folder's name where it can (no need to open ``METADATA``)."""
    key = getattr(dist, "_normalized_name", None)
    return key if isinstance(key, str) else normalize_name(dist.metadata.get("Name") or "")


@functools.cache
def _interpreter_directories() -> tuple[Path, ...]:
    """The running interpreter's own directories: its site-packages and standard library."""
    import site
    import sysconfig

    names = list(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        names.append(site.getusersitepackages())
    names += [sysconfig.get_path(kind) for kind in ("stdlib", "platstdlib", "purelib", "platlib")]
    return tuple(sorted({resolved(Path(name)) for name in names if name}))


def _is_project_file(path: Path | None, env: Environment, interpreter: tuple[Path, ...]) -> bool:
    if path is None or not project_owns(env, path):
        return False
    where = resolved(path)
    return not any(where.is_relative_to(directory) for directory in interpreter)


def scan_nix_site(site: Path, found: Discovery, yaml: YAML) -> None:
    """Entry points of the plugin group of every distribution in the Nix ``site``."""
    if not site.is_dir():
        return
    from importlib_metadata import distributions

    found_dists: list[IDistribution] = list(distributions(path=[str(site)]))
    for dist in sorted(found_dists, key=lambda d: d.metadata.get("Name") or ""):
        found_here = _plugin_entry_points(dist, found)
        for entry_point in sorted(found_here, key=lambda ep: ep.name):
            found.candidates.append(_entry_point_candidate(entry_point, dist, "nix", site, yaml))


def _entry_point_candidate(
    entry_point: EntryPoint,
    dist: IDistribution | None,
    source: Source,
    site_dir: Path | None,
    yaml: YAML,
) -> Candidate:
    """A pip or Nix plugin: its metadata, plus ``plugin.yaml`` beside its module when present."""
    name = normalize_name(entry_point.name)
    where = f"entry point {shown(entry_point.name)} = {shown(entry_point.value)}"
    metadata = {}
    if dist is not None:
        meta = dist.metadata  # parsed anew at each read of .metadata or .version: read once
        version = meta.get("Version") or ""  # a METADATA without it: no version to report
        where += f" of {clipped(str(meta.get('Name') or '?'))} {clipped(str(version))}"
        metadata = {
            "version": version,
            "description": meta.get("Summary") or "",
            "author": meta.get("Author") or meta.get("Author-email") or "",
            "homepage": meta.get("Home-page") or "",
            "license": meta.get("License") or "",
        }
    try:
        module_path = _module_location(entry_point, dist)
    except ValueError:  # the value is not ``module`` or ``module:attribute``
        return Candidate(
            source=source,
            name=name,
            path=None,
            entry_point=entry_point,
            site_dir=site_dir,
            error=f"{where}: not a module or module:attribute reference",
        )
    try:
        data: dict[str, object] = {key: value for key, value in metadata.items() if value}
        resource = module_path / MANIFEST_FILE if module_path and module_path.is_dir() else None
        if resource is not None and resource.is_file():
            extra = load_manifest(resource, default_name=entry_point.name, yaml=yaml)
            manifest = _merge(extra, data, name)
        else:
            manifest = manifest_from_mapping(data, where=where, default_name=entry_point.name)
    except ManifestError as exc:
        return Candidate(
            source=source,
            name=name,
            path=module_path,
            entry_point=entry_point,
            site_dir=site_dir,
            error=f"broken manifest: {exc}",
        )
    if manifest.name != name:
        manifest = _merge(manifest, {}, name)
    return Candidate(
        source=source,
        name=name,
        path=module_path,
        manifest=manifest,
        entry_point=entry_point,
        site_dir=site_dir,
    )


def _merge(manifest: Manifest, metadata: dict[str, object], name: str) -> Manifest:
    """The package's ``plugin.yaml`` with its distribution metadata, which wins where it says
    something: the version is the one pip installed (and ``pip show`` prints), whatever the
    file says. The entry-point name is the plugin name."""
    from dataclasses import replace

    return replace(
        manifest,
        name=name,
        version=_text(metadata.get("version")) or manifest.version,
        description=_text(metadata.get("description")) or manifest.description or "",
        author=_text(metadata.get("author")) or manifest.author or "",
        homepage=_text(metadata.get("homepage")) or manifest.homepage or "",
        license=_text(metadata.get("license")) or manifest.license or "",
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _module_location(entry_point: EntryPoint, dist: IDistribution | None) -> Path | None:
    """Where the entry point's top-level module lives, found without importing it."""
    if dist is None:
        return None
    top = entry_point.module.split(".")[0]
    base = Path(str(dist.locate_file("")))
    package = base / top
    if package.is_dir():
        return package
    module = base / f"{top}.py"
    if module.is_file():
        return module
    # Not beside its metadata (an editable install): where importing it would find it.
    return _importable_location(top) or base


def _importable_location(top: str) -> Path | None:
    """Where ``import top`` would find the top-level module, without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin is not None and spec.has_location:
        return Path(spec.origin)
    return None

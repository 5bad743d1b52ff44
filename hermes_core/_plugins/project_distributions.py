"""Distributions only the project supplies: ``*.dist-info`` and ``*.egg-info`` folders in the
``sys.path`` entries inside the project, read as ``project`` plugins within fixed limits (only
the ones declaring the plugin group past their ``entry_points.txt``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from importlib_metadata import PathDistribution

from hermes_core._plugins.distributions import (
    ENTRY_POINT_GROUP,
    _distribution_key,
    _entry_point_candidate,
    _lies_in,
    _plugin_entry_points,
)

if TYPE_CHECKING:
    from importlib_metadata import EntryPoint
    from ruamel.yaml import YAML

    from hermes_core._plugins.candidates import Discovery


def scan_project_distributions(
    entries: list[Path], found: Discovery, yaml: YAML, editable: dict[str, Path]
) -> None:
    """Distributions (``*.dist-info``, ``*.egg-info`` folders) in ``sys.path`` entries inside
    the project, as ``project`` plugins. Only their ``entry_points.txt`` is read at first: a
    distribution that does not declare the plugin group is none of hermes' business (a venv's
    site-packages the project puts on ``sys.path`` holds hundreds), whatever its ``METADATA``.
    The metadata an editable install leaves in its own source folder (setuptools'
    ``*.egg-info`` beside the package) is that installed distribution's (``editable``:
    normalized name -> source folder), not a second, project copy."""
    entry_points: list[EntryPoint] = []
    for entry in dict.fromkeys(entries):
        try:
            folders = sorted(
                child
                for child in entry.iterdir()
                if child.suffix in (".dist-info", ".egg-info") and child.is_dir()
            )
        except OSError:
            continue  # not a directory (a zip file) or unreadable: nothing is read from it
        for folder in folders:
            try:
                dist = _ProjectDistribution.read(folder)
            except _MetadataFileError as exc:
                found.warnings.append(f"project distribution {folder}: {exc}: ignored")
                continue
            if dist is None or _lies_in(folder, editable.get(_distribution_key(dist))):
                continue
            entry_points += _plugin_entry_points(dist, found, "project distribution")
    for entry_point in sorted(entry_points, key=lambda ep: ep.name):
        found.candidates.append(
            _entry_point_candidate(entry_point, entry_point.dist, "project", None, yaml)
        )


class _MetadataFileError(Exception):
    """A metadata file of a project distribution that is not read; the message names it."""


class _ProjectDistribution(PathDistribution):
    """A project distribution whose metadata files were each read once, within the manifest
    limit and only when a regular file (a FIFO would block every command), so nothing the
    project swaps in afterwards is read."""

    def __init__(self, folder: Path, texts: dict[str, str]) -> None:
        super().__init__(folder)
        self._texts = texts

    @classmethod
    def read(cls, folder: Path) -> _ProjectDistribution | None:
        """The distribution in ``folder`` when it declares the plugin group, else ``None``,
        its ``METADATA`` then unread. Raises :class:`_MetadataFileError` for a file that is
        not read."""
        entry_points = _read_metadata_file(folder, "entry_points.txt")
        if entry_points is None or ENTRY_POINT_GROUP not in entry_points:
            return None
        texts = {"entry_points.txt": entry_points}
        for name in ("METADATA", "PKG-INFO"):  # importlib's order: the first one there
            text = _read_metadata_file(folder, name)
            if text is not None:
                texts[name] = text
                break
        return cls(folder, texts)

    def read_text(self, filename: str | os.PathLike[str]) -> str | None:
        return self._texts.get(str(filename))


def _read_metadata_file(folder: Path, name: str) -> str | None:
    from hermes_core._yaml_limits import MANIFEST_MAX_BYTES, YamlFileError, read_limited

    try:
        return read_limited(folder / name, MANIFEST_MAX_BYTES)
    except YamlFileError as exc:
        problem = str(exc).removesuffix(", so it is not read")
        verb = "" if problem.startswith("cannot") else "is "
        raise _MetadataFileError(f"{name} {verb}{problem}") from None

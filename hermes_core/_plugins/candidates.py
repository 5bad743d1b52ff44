"""What plugin discovery finds: :class:`Candidate`, one copy of a plugin in one of the
:data:`SOURCES`, and :class:`Discovery`, every candidate with the warnings found on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hermes_core._plugins.manifest import Manifest

if TYPE_CHECKING:
    from importlib_metadata import EntryPoint

Source = Literal["bundled", "user", "project", "pip", "nix", "direct"]
SOURCES: tuple[Source, ...] = ("bundled", "user", "project", "pip", "nix", "direct")
"""The sources in precedence order: for one name, a later source wins. The first five are
discovered; ``direct`` holds the plugin objects a program registers in code
(:meth:`hermes_core._host.Host.register`), which are never discovered."""


@dataclass(frozen=True)
class Candidate:
    """One discovered copy of a plugin.

    A directory plugin has ``directory`` (its folder) and ``path`` (the same folder); a pip or
    Nix distribution plugin has ``entry_point`` and ``path`` (where its module lives). ``error``
    is set when the copy cannot be used at all (a broken manifest); ``manifest`` is then
    ``None``. ``site_dir`` is the Nix ``site-packages`` that must join ``sys.path`` to import it.
    """

    source: Source
    name: str
    path: Path | None
    manifest: Manifest | None = None
    entry_point: EntryPoint | None = None
    directory: Path | None = None
    site_dir: Path | None = None
    error: str | None = None

    @property
    def version(self) -> str | None:
        """The manifest's version, if any; a pip or Nix plugin left without a manifest (an
        entry point naming no module, a ``plugin.yaml`` that does not parse) has its
        distribution's, which its manifest would have held."""
        if self.manifest is not None:
            return self.manifest.version
        dist = self.entry_point.dist if self.entry_point is not None else None
        return (dist.metadata.get("Version") or None) if dist is not None else None

    @property
    def label(self) -> str:
        """``source:name``, how messages refer to this copy."""
        return f"{self.source}:{self.name}"

    @property
    def distribution(self) -> str | None:
        """``<name> <version> (<where its module lives>)`` of a pip or Nix plugin's
        distribution, how messages name it; ``None`` for a directory plugin."""
        dist = self.entry_point.dist if self.entry_point is not None else None
        if dist is None:
            return None
        meta = dist.metadata
        return f"{meta.get('Name') or '?'} {meta.get('Version') or '?'} ({self.path})"


@dataclass
class Discovery:
    """Every candidate in source order, and the warnings found on the way."""

    candidates: list[Candidate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    project_enabled: bool = False

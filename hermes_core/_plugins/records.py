"""``PluginRecord``: one row of ``hermes plugins list``, and what the host knows of a plugin."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core._errors import PluginSettingsError
from hermes_core._plugins.candidates import Candidate, Source

PluginStatus = Literal[
    "enabled", "enabled (default)", "not enabled", "disabled", "gated", "shadowed", "error"
]
LOADABLE: frozenset[str] = frozenset({"enabled", "enabled (default)"})


@dataclass
class PluginRecord:
    """One discovered plugin copy and what became of it.

    ``status`` says whether it loaded; ``message`` explains a status that is not ``enabled``
    (the hint to enable it, the gate, the error). ``shadows`` lists the sources of copies this
    one beat, ``shadowed_by`` the source of the copy that beat this one. ``hooks`` is filled
    once the plugin is registered. ``plugin`` is the registered module or object.
    """

    candidate: Candidate
    status: PluginStatus
    message: str | None = None
    shadows: list[Source] = field(default_factory=list)
    shadowed_by: Source | None = None
    hooks: list[str] = field(default_factory=list)
    traceback: str | None = None
    plugin: object | None = field(default=None, repr=False)
    winner: bool = True
    """Whether this is the copy of its name that takes part (not shadowed, not a gated project
    copy that shadows nothing)."""
    settings_error: str | None = None
    """The problems of its settings (``plugins.entries.<name>``) when they are why it failed:
    a mistake of the configuration, which ``hermes config validate`` reports."""

    @property
    def name(self) -> str:
        """The normalized plugin name."""
        return self.candidate.name

    @property
    def source(self) -> Source:
        """Where this copy was found."""
        return self.candidate.source

    @property
    def version(self) -> str | None:
        """The version from the manifest or the distribution."""
        return self.candidate.version

    @property
    def path(self) -> Path | None:
        """The plugin's directory, or where its module lives."""
        return self.candidate.path

    @property
    def error(self) -> str | None:
        """The error message when ``status`` is ``error``."""
        return self.message if self.status == "error" else None

    @property
    def loadable(self) -> bool:
        """Whether the gate lets this plugin's code run."""
        return self.status in LOADABLE

    def fail(
        self,
        message: str,
        traceback: str | None = None,
        *,
        unload: bool = True,
        cause: BaseException | None = None,
    ) -> None:
        """Mark this plugin as failed with ``message`` (``cause``: the exception, when it is
        a :class:`~hermes_core._errors.PluginSettingsError` kept as :attr:`settings_error`).

        ``unload=False`` is for a failure found after the plugin was registered (a factory
        that raised when the host built its backend): the plugin stays registered, its other
        hooks and tools keep working, and it is listed as ``error`` with ``message``.
        """
        self.status = "error"
        self.message = message
        self.traceback = traceback
        if isinstance(cause, PluginSettingsError):
            self.settings_error = str(cause)
        if unload:
            self.plugin = None
            self.hooks = []

    def to_json(self) -> dict[str, Any]:
        """The object printed by ``hermes plugins list --json``."""
        return {
            "name": self.name,
            "version": self.version,
            "source": self.source,
            "status": self.status,
            "path": str(self.path) if self.path is not None else None,
            "hooks": list(self.hooks),
            "shadows": list(self.shadows),
            "shadowed_by": self.shadowed_by,
            "error": self.error,
        }

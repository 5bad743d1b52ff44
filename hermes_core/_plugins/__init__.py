"""The plugin host's parts: discovery (five sources), resolution, the gate, loading (and
importing), registration, and the selection step that builds backends, gateways and policies.

Read ``docs/plugins.md`` for the plugin author's guide. In short: a plugin is a directory with a
``plugin.yaml`` and an ``__init__.py``, or a distribution with an entry point in the group
``hermes_core.plugins``; it implements hooks of :mod:`hermes_core._hookspecs` with ``@hookimpl``;
it stays disabled until ``hermes plugins enable <name>`` (bundled backends and toolsets
excepted).
"""

from __future__ import annotations

from hermes_core._plugins.candidates import SOURCES, Candidate, Discovery, Source
from hermes_core._plugins.discovery import discover
from hermes_core._plugins.distributions import ENTRY_POINT_GROUP
from hermes_core._plugins.gate import gate
from hermes_core._plugins.importing import import_plugin
from hermes_core._plugins.loader import (
    PluginSet,
    config_trusted_for_project,
    load_plugins,
    new_plugin_manager,
    plan_plugins,
)
from hermes_core._plugins.manifest import (
    MANIFEST_FILE,
    Manifest,
    ManifestError,
    PluginKind,
    load_manifest,
    normalize_name,
)
from hermes_core._plugins.records import PluginRecord, PluginStatus
from hermes_core._plugins.registrations import (
    Registered,
    RegistrationKind,
    Registrations,
    collect_registrations,
)
from hermes_core._plugins.resolution import Resolution, resolve
from hermes_core._plugins.selection import SelectableKind, build_selected

__all__ = [
    "ENTRY_POINT_GROUP",
    "MANIFEST_FILE",
    "SOURCES",
    "Candidate",
    "Discovery",
    "Manifest",
    "ManifestError",
    "PluginKind",
    "PluginRecord",
    "PluginSet",
    "PluginStatus",
    "Registered",
    "RegistrationKind",
    "Registrations",
    "Resolution",
    "SelectableKind",
    "Source",
    "build_selected",
    "collect_registrations",
    "config_trusted_for_project",
    "discover",
    "gate",
    "import_plugin",
    "load_manifest",
    "load_plugins",
    "new_plugin_manager",
    "normalize_name",
    "plan_plugins",
    "resolve",
]

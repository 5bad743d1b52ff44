"""The curated catalog of MCP servers shipped with hermes-core (``catalog.json`` beside this file).

An entry is data only: nothing in the catalog runs until ``hermes mcp catalog install NAME``
copies it into ``mcp_servers``, and that happens only after the server answered a probe. The
command ``{python}`` stands for the interpreter hermes runs on (``sys.executable``), resolved at
install time: the Python servers are installed with pip into the environment hermes runs from,
so ``python -m mcp_server_time`` finds them whatever ``python3`` on ``PATH`` happens to be.
Required environment variables are written to the entry as ``${NAME}`` templates; their values
go to ``$HERMES_HOME/.env``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hermes_core._errors import ConfigError
from hermes_core._paths import Environment

__all__ = [
    "CATALOG_RESOURCE",
    "CATALOG_VARIABLE",
    "PYTHON_PLACEHOLDER",
    "CatalogServer",
    "load_catalog",
    "parse_catalog",
]

CATALOG_RESOURCE = "catalog.json"
CATALOG_VARIABLE = "HERMES_MCP_CATALOG"
"""An environment variable naming a catalog file to use instead of the shipped one."""
PYTHON_PLACEHOLDER = "{python}"
"""The command of an entry run by the interpreter hermes runs on."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIELDS = frozenset({"description", "install", "command", "args", "required_env"})


@dataclass(frozen=True)
class CatalogServer:
    """One curated server: how to start it and what it needs."""

    name: str
    description: str
    command: str
    args: tuple[str, ...]
    required_env: tuple[str, ...]
    install: str
    """How to make the command available (``pip install ...``, Node.js for ``npx``)."""

    def server_entry(self, python: str | None = None) -> dict[str, Any]:
        """The ``mcp_servers`` entry for this server, with ``{python}`` resolved to ``python``
        (``sys.executable`` by default) and each required variable as a ``${NAME}`` template."""
        command = self.command
        if command == PYTHON_PLACEHOLDER:
            command = python or sys.executable
        entry: dict[str, Any] = {"command": command, "args": list(self.args)}
        if self.required_env:
            entry["env"] = {name: f"${{{name}}}" for name in self.required_env}
        return entry

    def to_json(self) -> dict[str, Any]:
        """The entry as ``hermes mcp catalog --json`` prints it."""
        return {
            "name": self.name,
            "description": self.description,
            "command": self.command,
            "args": list(self.args),
            "required_env": list(self.required_env),
            "install": self.install,
        }


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError("expected a list of strings", key=where)
    return tuple(value)


def _server(name: str, data: Any) -> CatalogServer:
    where = f"catalog.{name}"
    if not isinstance(data, Mapping):
        raise ConfigError("expected a mapping", key=where)
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ConfigError(f"unknown keys {unknown}", key=where)
    texts: dict[str, str] = {}
    for key in ("description", "command", "install"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise ConfigError("expected non-empty text", key=f"{where}.{key}")
        texts[key] = value
    required = _strings(data.get("required_env", []), f"{where}.required_env")
    for variable in required:
        if not _ENV_NAME.fullmatch(variable):
            raise ConfigError(f"not a variable name: {variable!r}", key=f"{where}.required_env")
    return CatalogServer(
        name=name,
        description=texts["description"],
        command=texts["command"],
        args=_strings(data.get("args", []), f"{where}.args"),
        required_env=required,
        install=texts["install"],
    )


def parse_catalog(text: str) -> dict[str, CatalogServer]:
    """The servers of a catalog document (JSON text), by name; a malformed entry is a
    :class:`~hermes_core._errors.ConfigError` naming it."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the MCP catalog is not valid JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError("the MCP catalog must be a mapping of server name to entry")
    return {name: _server(name, entry) for name, entry in data.items()}


def load_catalog(env: Environment | None = None) -> dict[str, CatalogServer]:
    """The catalog, by server name: the file named by ``HERMES_MCP_CATALOG`` in ``env`` (an
    organization's own curated list), else the one shipped in the package."""
    override = env.get(CATALOG_VARIABLE) if env is not None else None
    if not override:
        text = resources.files("hermes_core._mcp").joinpath(CATALOG_RESOURCE).read_text("utf-8")
        return parse_catalog(text)
    path = Path(override).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"the MCP catalog named by {CATALOG_VARIABLE} cannot be read: {exc.strerror or exc}",
            path=path,
        ) from None
    try:
        return parse_catalog(text)
    except ConfigError as exc:
        raise ConfigError(exc.detail, path=path, key=exc.key) from None

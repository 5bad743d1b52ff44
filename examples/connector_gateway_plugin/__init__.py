"""An example connector gateway plugin: ``memory``, serving the apps of its settings.

Copy this folder into your plugins first, from the repository::

    cp -r examples/connector_gateway_plugin ~/.hermes/plugins/memory-gateway

then enable it, describe the apps it serves, and select it in ``config.yaml``::

    plugins:
      enabled: [memory-gateway]
      entries:
        memory-gateway:
          apps:
            weather:
              WEATHER_FORECAST:
                description: The weather forecast for a city
                input_schema: {type: object, properties: {city: {type: string}}}
                result: {forecast: sunny}
    tools:
      connectors:
        url: memory://local      # connectors need a URL; this gateway ignores it
        gateway: memory

A gateway is any object with the coroutines ``search``, ``schemas``, ``execute``, ``connect``,
``list_connectors`` and ``aclose`` (the ``hermes_core.connectors.ConnectorGateway`` protocol),
speaking gateway slugs; hermes-core names the tools (``connectors__weather__FORECAST``), ranks
them with the local ones, batches, hooks and approves their calls. A method answers a failure with
``failure=GatewayFailure(...)``, never by raising.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.connectors import (
    ConnectionLink,
    ConnectorSchema,
    ConnectorState,
    ExecuteCall,
    ExecuteError,
    ExecuteResult,
    GatewayConnections,
    GatewayContext,
    GatewayExecution,
    GatewayListing,
    GatewaySchemas,
    GatewaySearch,
)
from hermes_core.plugin import ConnectorGatewaySpec, hookimpl

_WORDS = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    """The lowercased words of ``text`` (``_`` separates words)."""
    return set(_WORDS.findall(text.lower()))


class MemoryGateway:
    """Serves ``apps`` (app -> tool slug -> ``{description, input_schema, result}``); every app
    is connected, and a call answers its tool's ``result`` with the arguments it got."""

    def __init__(self, apps: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
        self.apps = {str(app): dict(tools) for app, tools in apps.items()}
        self.schemas_by_slug = {
            slug: ConnectorSchema(
                slug=slug,
                connector=app,
                description=str(tool.get("description", "")),
                input_schema=dict(tool.get("input_schema", {"type": "object"})),
            )
            for app, tools in self.apps.items()
            for slug, tool in tools.items()
        }

    async def search(self, use_cases: Sequence[str]) -> GatewaySearch:
        """The tools sharing a word with each use case (hermes-core ranks them)."""
        results = [
            [
                slug
                for slug, schema in self.schemas_by_slug.items()
                if words(use_case) & words(f"{schema.connector} {slug} {schema.description}")
            ]
            for use_case in use_cases
        ]
        connected = {app: True for app in self.apps}
        return GatewaySearch(results, self.schemas_by_slug, connected)

    async def schemas(self, slugs: Sequence[str]) -> GatewaySchemas:
        """The schemas of ``slugs`` this gateway serves; the others are not found."""
        found = {slug: self.schemas_by_slug[slug] for slug in slugs if slug in self.schemas_by_slug}
        return GatewaySchemas(found, [slug for slug in slugs if slug not in found])

    async def execute(self, calls: Sequence[ExecuteCall]) -> GatewayExecution:
        """One result per call, in order."""
        results = []
        for call in calls:
            tool = self.apps.get(call.connector, {}).get(call.tool)
            if tool is None:
                missing = ExecuteError("TOOL_NOT_FOUND", f"no tool {call.tool}")
                results.append(ExecuteResult(call.connector, call.tool, error=missing))
            else:
                data = {"result": tool.get("result"), "arguments": dict(call.arguments)}
                results.append(ExecuteResult(call.connector, call.tool, data=data))
        return GatewayExecution(results)

    async def connect(self, connectors: Sequence[str], reinitiate: bool) -> GatewayConnections:
        """Every app of the settings is connected already."""
        return GatewayConnections(
            [ConnectionLink(app, "active" if app in self.apps else "failed") for app in connectors]
        )

    async def list_connectors(self) -> GatewayListing:
        """The apps of the settings, all connected."""
        return GatewayListing([ConnectorState(app, True, "active") for app in self.apps])

    async def aclose(self) -> None:
        """Nothing to release."""


def create_gateway(context: GatewayContext) -> MemoryGateway:
    """The gateway of the plugin's settings (``plugins.entries.memory-gateway.apps``)."""
    return MemoryGateway(context.settings.get("apps", {}))


@hookimpl
def hermes_connector_gateways() -> Sequence[ConnectorGatewaySpec]:
    """Register the ``memory`` gateway."""
    return [ConnectorGatewaySpec("memory", create_gateway, "the apps of its settings, in memory")]

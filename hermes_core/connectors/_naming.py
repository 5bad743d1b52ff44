"""Connector tool names: what the model sees, and which gateway slugs a name stands for.

A gateway slug looks like ``GMAIL_SEND_EMAIL``. The model sees ``connectors__<connector>__<tool>``:
the connector lowercased, the slug verbatim minus a leading ``<CONNECTOR>_`` prefix
(``GMAIL_SEND_EMAIL`` of ``gmail`` is ``connectors__gmail__SEND_EMAIL``). A call sends the
prefixed slug first and, only when the gateway answers ``TOOL_NOT_FOUND``, the literal one.
Two slugs of one connector that compose to the same name (``GMAIL_X`` and ``X``) are twins: the
prefixed one is kept. How a name splits, and the connectors toolset, are read below the
connectors (by availability and the bridge): they live in :mod:`hermes_core._connector_names`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hermes_core._connector_names import (
    CONNECTOR_PREFIX,
    CONNECTORS_TOOLSET,
    is_connector_name,
    split_connector_name,
)
from hermes_core._tools import TOOL_NAME_PATTERN

__all__ = [
    "CONNECTORS_TOOLSET",
    "CONNECTOR_PREFIX",
    "GatewaySlugs",
    "Twin",
    "gateway_slugs",
    "is_connector_name",
    "resolve_twins",
    "split_connector_name",
    "tool_name",
]


def _prefix(connector: str) -> str:
    return connector.upper() + "_"


def tool_name(connector: str, slug: str) -> str | None:
    """The model-facing name of the gateway tool ``slug`` of ``connector``, or ``None`` when no
    valid tool name stands for it (a connector slug holding ``__``, characters a model provider
    refuses, more than 64 characters): such a tool cannot be offered."""
    prefix = _prefix(connector)
    tool = slug[len(prefix) :] if slug.startswith(prefix) and len(slug) > len(prefix) else slug
    name = f"{CONNECTOR_PREFIX}{connector.lower()}__{tool}"
    if not TOOL_NAME_PATTERN.fullmatch(name):
        return None
    if split_connector_name(name) != (connector.lower(), tool):
        return None  # it would not parse back to this connector and tool
    return name


@dataclass(frozen=True)
class GatewaySlugs:
    """What a connector tool name stands for on the gateway: the connector, the prefixed slug
    (sent first) and the literal one (sent only after ``TOOL_NOT_FOUND``)."""

    connector: str
    prefixed: str
    literal: str


def gateway_slugs(name: str) -> GatewaySlugs | None:
    """The slugs a connector tool name stands for, or ``None`` when it is not one."""
    parts = split_connector_name(name)
    if parts is None:
        return None
    connector, tool = parts
    return GatewaySlugs(connector, _prefix(connector) + tool, tool)


@dataclass(frozen=True)
class Twin:
    """Two slugs of one connector composing to the same ``name``: ``kept`` (the prefixed one)
    and ``dropped``."""

    name: str
    kept: str
    dropped: str


def resolve_twins(
    connector_slugs: Iterable[tuple[str, str]],
) -> tuple[dict[str, tuple[str, str]], list[Twin]]:
    """``name -> (connector, slug)`` for gateway tools given as ``(connector, slug)``, in the
    order given, and the twins it dropped. Of two slugs composing to one name the prefixed one
    is kept; slugs that compose to no valid name are left out."""
    named: dict[str, tuple[str, str]] = {}
    twins: list[Twin] = []
    for connector, slug in connector_slugs:
        name = tool_name(connector, slug)
        if name is None:
            continue
        held = named.get(name)
        if held is None:
            named[name] = (connector, slug)
            continue
        if held[1] == slug:
            continue
        if slug.startswith(_prefix(connector)):
            named[name] = (connector, slug)
            twins.append(Twin(name, slug, held[1]))
        else:
            twins.append(Twin(name, held[1], slug))
    return named, twins

"""The connector tool name rule, ``connectors__<connector>__<tool>``, and the connectors toolset:
what availability and the bridge read of connectors without importing them (the rest of the
naming, gateway slugs and twins, is :mod:`hermes_core.connectors._naming`)."""

from __future__ import annotations

from hermes_core._tools import TOOL_NAME_PATTERN

__all__ = ["CONNECTORS_TOOLSET", "CONNECTOR_PREFIX", "is_connector_name", "split_connector_name"]

CONNECTOR_PREFIX = "connectors__"
CONNECTORS_TOOLSET = "connectors"
"""The toolset a session's grant must hold for connector tools to be visible."""


def split_connector_name(name: str) -> tuple[str, str] | None:
    """``(connector, tool)`` of ``connectors__<connector>__<tool>``, or ``None`` when ``name``
    does not parse into three non-empty parts (the tool part may itself contain ``__``) or is
    no name a connector tool is offered under: one breaking the tool name rule
    (:data:`~hermes_core._tools.TOOL_NAME_PATTERN`) or with an upper-case connector. Such a
    name is an unknown tool, never sent to the gateway."""
    if not name.startswith(CONNECTOR_PREFIX) or not TOOL_NAME_PATTERN.fullmatch(name):
        return None
    connector, separator, tool = name[len(CONNECTOR_PREFIX) :].partition("__")
    if not separator or not connector or not tool or connector != connector.lower():
        return None
    return connector, tool


def is_connector_name(name: str) -> bool:
    """Whether ``name`` is a well-formed connector tool name (see :func:`split_connector_name`)."""
    return split_connector_name(name) is not None

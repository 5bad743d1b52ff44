"""The connector tool name rule, ``connectors__<connector>__<tool>``, and the connectors toolset:
what availability and the bridge read of connectors without importing them (the rest of the
naming, gateway slugs and twins, is :mod:`hermes_core.connectors._naming`)."""

from __future__ import annotations

__all__ = ["CONNECTORS_TOOLSET", "CONNECTOR_PREFIX", "is_connector_name", "split_connector_name"]

CONNECTOR_PREFIX = "connectors__"
CONNECTORS_TOOLSET = "connectors"
"""The toolset a session's grant must hold for connector tools to be visible."""


def split_connector_name(name: str) -> tuple[str, str] | None:
    """``(connector, tool)`` of ``connectors__<connector>__<tool>``, or ``None`` when ``name``
    does not parse into three non-empty parts (the tool part may itself contain ``__``)."""
    if not name.startswith(CONNECTOR_PREFIX):
        return None
    connector, separator, tool = name[len(CONNECTOR_PREFIX) :].partition("__")
    if not separator or not connector or not tool:
        return None
    return connector, tool


def is_connector_name(name: str) -> bool:
    """Whether ``name`` is a well-formed connector tool name."""
    return split_connector_name(name) is not None

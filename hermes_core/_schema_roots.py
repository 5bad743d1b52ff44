"""A tool's schema as a model's API takes it: one object at the top level.

MCP servers list tools whose ``inputSchema`` chooses at its top level (``anyOf``: give
``title`` or ``page_url``; ``allOf`` of shared parts). Anthropic's API refuses such a tool
(``input_schema does not support oneOf, allOf, or anyOf at the top level``), and with it the
whole request, so one such tool sent as itself would end every conversation at its first
request. :func:`sendable` folds the top-level choice into one object: every branch's
properties, the properties every ``allOf`` part requires required, and the choice said in
words at the end of the description. A schema that does not say ``"type"`` (a plugin's
``{"properties": ...}``, valid JSON Schema), or whose ``type`` is a list holding ``"object"``
(``["object", "null"]``: a plugin's ``Model | None``), is sent with ``"type": "object"``: both
APIs refuse the request otherwise, and an MCP client skips the tool. Any other schema is sent
as it is. The tool still checks its real schema when called, so a call that breaks the choice
gets the tool's own error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["sendable"]

_CHOICES = {"anyOf": "at least one of", "oneOf": "exactly one of"}


def sendable(description: str, parameters: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(description, parameters)`` of a tool as a model's request carries them: unchanged
    unless the schema has ``anyOf``, ``oneOf`` or ``allOf`` at its top level (see the
    module), or no ``type`` (then ``"type": "object"``, which both APIs require, and empty
    ``properties`` if it has none), or a list of types holding ``"object"`` (then
    ``"object"``)."""
    if not any(key in parameters for key in ("allOf", *_CHOICES)):
        kind = parameters.get("type")
        if isinstance(kind, list) and "object" in kind:
            return description, {**parameters, "type": "object"}
        if "type" in parameters:
            return description, dict(parameters)
        return description, {"type": "object", "properties": {}, **parameters}
    schema = {k: v for k, v in parameters.items() if k not in ("allOf", *_CHOICES)}
    schema["type"] = "object"
    properties = dict(_mapping(schema.get("properties")))
    required = _names(schema.get("required"))
    for part in _branches(parameters.get("allOf")):
        _add(properties, part)
        required += [name for name in _names(part.get("required")) if name not in required]
    said = []
    for key, words in _CHOICES.items():
        options = []
        for branch in _branches(parameters.get(key)):
            _add(properties, branch)
            names = [name for name in _names(branch.get("required")) if name not in required]
            if names:
                options.append(" and ".join(f"`{name}`" for name in names))
        if options:
            said.append(f"Give {words}: {'; '.join(options)}.")
    schema["properties"] = properties
    if required:
        schema["required"] = required
    if said:
        description = f"{description}\n\n{' '.join(said)}" if description else " ".join(said)
    return description, schema


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> list[str]:
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def _branches(value: Any) -> list[Mapping[str, Any]]:
    return (
        [branch for branch in value if isinstance(branch, Mapping)]
        if isinstance(value, list)
        else []
    )


def _add(properties: dict[str, Any], branch: Mapping[str, Any]) -> None:
    """``branch``'s properties added to ``properties`` (the first one said of a name stays)."""
    for name, schema in _mapping(branch.get("properties")).items():
        properties.setdefault(name, schema)

"""A tool's schema as a model's API takes it: one object at the top level.

MCP servers list tools whose ``inputSchema`` chooses at its top level (``anyOf``: give
``title`` or ``page_url``; ``allOf`` of shared parts). Anthropic's API refuses such a tool
(``input_schema does not support oneOf, allOf, or anyOf at the top level``), and with it the
whole request, so one such tool sent as itself would end every conversation at its first
request. :func:`sendable` folds the top-level choice into one object: every branch's
properties (a branch given as a ``$ref`` into the schema, as a union model's are, or as an
``allOf`` of parts, read where it leads; a choice inside an ``allOf`` part too), the properties
every ``allOf`` part requires required, and the choice said in words at the end of the
description. A schema that does not say ``"type"`` (a plugin's ``{"properties": ...}``, valid
JSON Schema), or whose ``type`` is a list holding ``"object"`` (``["object", "null"]``: a
plugin's ``Model | None``), is sent with ``"type": "object"``: both APIs refuse the request
otherwise, and an MCP client skips the tool. Any other schema is sent as it is. The tool still
checks its real schema when called, so a call that breaks the choice gets the tool's own
error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["sendable"]

_CHOICES = {"anyOf": "at least one of", "oneOf": "exactly one of"}

_DEEPEST = 8
"""The most references followed, and ``allOf`` levels looked into, for one branch."""


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
    choosing = [parameters]  # the schemas whose choices are folded: it and its allOf parts
    for part in _branches(parameters.get("allOf")):
        _add(properties, part, parameters)
        required += [name for name in _required(part, parameters) if name not in required]
        choosing += _parts(part, parameters)
    said = []
    for node, (key, words) in ((n, choice) for n in choosing for choice in _CHOICES.items()):
        options = []
        for branch in _branches(node.get(key)):
            _add(properties, branch, parameters)
            names = [name for name in _required(branch, parameters) if name not in required]
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


def _add(properties: dict[str, Any], branch: Mapping[str, Any], root: Mapping[str, Any]) -> None:
    """``branch``'s properties added to ``properties`` (the first one said of a name stays)."""
    for part in _parts(branch, root):
        for name, schema in _mapping(part.get("properties")).items():
            properties.setdefault(name, schema)


def _required(branch: Mapping[str, Any], root: Mapping[str, Any]) -> list[str]:
    """The names ``branch`` requires, its parts' included."""
    names: list[str] = []
    for part in _parts(branch, root):
        names += [name for name in _names(part.get("required")) if name not in names]
    return names


def _parts(branch: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> list[Any]:
    """``branch`` with its ``$ref`` followed within ``root``, then its ``allOf`` parts, each
    so (a union model's branches are references, a generated schema's parts too)."""
    node = _followed(branch, root)
    found: list[Any] = [node]
    if depth < _DEEPEST:
        for part in _branches(node.get("allOf")):
            found += _parts(part, root, depth + 1)
    return found


def _followed(branch: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``branch``, its local ``$ref`` (``#/$defs/NAME``) replaced by what it names; as it is
    when the reference leads out of ``root`` or nowhere."""
    for _ in range(_DEEPEST):
        ref = branch.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return branch
        target: Any = root
        for step in ref[2:].split("/"):
            step = step.replace("~1", "/").replace("~0", "~")
            target = target.get(step) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return branch
        branch = {**target, **{k: v for k, v in branch.items() if k != "$ref"}}
    return branch

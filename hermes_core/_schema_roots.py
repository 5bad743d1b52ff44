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
otherwise, and an MCP client skips the tool. A ``not`` at the top level (or in an ``allOf``
part: "not both of these"), which OpenAI refuses there ("schema must have type 'object' and
not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), is folded the same way: left
out, and said in words. ``if``/``then``/``else`` stay, as both APIs take them at the top (those
of an ``allOf`` part, folded with it, are said in words). Any other schema is sent as it is.
The tool still checks its real schema when called, so a call that breaks the choice gets the
tool's own error."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["sendable"]

_CHOICES = {"anyOf": "at least one of", "oneOf": "exactly one of"}
_FOLDED = ("allOf", "not", *_CHOICES)
"""The keywords folded out of a schema's top level (see the module)."""

_DEEPEST = 8
"""The most references followed, and ``allOf`` levels looked into, for one branch."""


def sendable(description: str, parameters: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(description, parameters)`` of a tool as a model's request carries them: unchanged
    unless the schema has ``anyOf``, ``oneOf``, ``allOf`` or ``not`` at its top level (see
    the module), or no ``type`` (then ``"type": "object"``, which both APIs require, and empty
    ``properties`` if it has none), or a list of types holding ``"object"`` (then
    ``"object"``)."""
    if not any(key in parameters for key in _FOLDED):
        kind = parameters.get("type")
        if isinstance(kind, list) and "object" in kind:
            return description, {**parameters, "type": "object"}
        if "type" in parameters:
            return description, dict(parameters)
        return description, {"type": "object", "properties": {}, **parameters}
    schema = {k: v for k, v in parameters.items() if k not in _FOLDED}
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
    said += [
        _excluded(_followed(node["not"], parameters))
        for node in choosing
        if isinstance(node.get("not"), Mapping)
    ]
    said += [_conditional(node) for node in choosing[1:] if isinstance(node.get("if"), Mapping)]
    schema["properties"] = properties
    if required:
        schema["required"] = required
    if said:
        description = f"{description}\n\n{' '.join(said)}" if description else " ".join(said)
    return description, schema


def _excluded(schema: Mapping[str, Any]) -> str:
    """A ``not`` said in words: the names not to give together, or none of; else the schema
    itself (a value ruled out is no name left out)."""
    names = _names(schema.get("required"))
    if _names_only(schema):
        together = " together" if len(names) > 1 else ""
        return f"Do not give {' and '.join(f'`{name}`' for name in names)}{together}."
    branches = _branches(schema.get("anyOf"))
    if set(schema) == {"anyOf"} and branches and all(_names_only(b) for b in branches):
        options = [" and ".join(f"`{name}`" for name in _names(b["required"])) for b in branches]
        return f"Give none of: {'; '.join(options)}."
    return f"The arguments must not match the JSON schema {_json(schema)}."


def _conditional(part: Mapping[str, Any]) -> str:
    """An ``allOf`` part's ``if``/``then``/``else`` said in words (the top level's own stays
    in the schema: both APIs take it there)."""
    said = f"If the arguments match the JSON schema {_json(part['if'])}"
    said += f", they must match {_json(part.get('then', {}))}"
    if "else" in part:
        said += f"; else {_json(part['else'])}"
    return said + "."


def _json(schema: Any) -> str:
    return json.dumps(schema, default=str)


def _names_only(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` only requires names (``{"required": ["a", "b"]}``)."""
    return set(schema) == {"required"} and bool(_names(schema["required"]))


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

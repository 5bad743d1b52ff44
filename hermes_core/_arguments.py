"""Reading a call's arguments object, as the model sent it: the one place it is parsed.

A model (or an MCP client, a script) may send the arguments of a call as an object, as a JSON
string holding one, or as nothing. :func:`read_arguments` turns any of these into a dict or says
what is wrong with it; each caller words the problem for its own answer (the dispatcher for a
direct call, the bridge for a ``tool_call`` entry), and the arguments are never parsed twice:
what the bridge read, it hands on as a dict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ArgumentsProblem", "read_arguments"]


@dataclass(frozen=True)
class ArgumentsProblem:
    """Why arguments are not an object: ``not_json`` (a string that does not parse),
    ``too_deep`` (a JSON string nested deeper than can be read), ``not_object`` (some other
    value, of type ``type_name``)."""

    kind: Literal["not_json", "too_deep", "not_object"]
    type_name: str = ""


def read_arguments(value: Any) -> dict[str, Any] | ArgumentsProblem:
    """``value`` as an arguments dict: an object as it is, a JSON string parsed, and nothing
    (``None``, a blank string, ``null``, an empty list) as ``{}``."""
    if type(value) is dict:  # what almost every call sends: no ABC check on the hot path
        return dict(value)
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except ValueError:
            return ArgumentsProblem("not_json")
        except RecursionError:
            return ArgumentsProblem("too_deep")
        if value is None:
            return {}
    if isinstance(value, list | tuple) and not value:
        return {}
    if not isinstance(value, Mapping):
        return ArgumentsProblem("not_object", type(value).__name__)
    return dict(value)

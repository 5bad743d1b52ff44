"""What text a tool is indexed under, field by field (:func:`document_fields`, one document at a
time; :mod:`.build` indexes many at once by the same rule).

Per tool, five fields, each with its own weight in the ranking (BM25F: a token's frequency in a
document is the weighted sum of its frequencies in the fields, and so is the document's length):

- ``name``: the words of its name without the ``mcp__<server>__`` prefix;
- ``group``: the group (server) name, when its words are not already among the name's words
  (never the placeholder group ``other``);
- ``description``;
- ``parameter_names``: the top-level parameter names;
- ``parameter_descriptions``: the top-level parameters' descriptions and enum values.

The weights (:data:`FIELD_WEIGHTS`) were chosen by measurement on the dev sets; see
docs/tool-search.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from hermes_core.search import ToolDocument

from .tokenize import tokenize

__all__ = [
    "FIELDS",
    "FIELD_WEIGHTS",
    "document_fields",
    "document_tokens",
    "extra_document_fields",
]

FIELDS: Final = ("name", "group", "description", "parameter_names", "parameter_descriptions")

FIELD_WEIGHTS: Final[Mapping[str, float]] = {
    "name": 3.0,
    "group": 1.0,
    "description": 1.0,
    "parameter_names": 1.0,
    "parameter_descriptions": 0.5,
}
"""How much one occurrence of a token in each field counts."""


def document_fields(document: ToolDocument) -> tuple[tuple[str, ...], ...]:
    """The tokens of each field of :data:`FIELDS`, in that order, repeats kept."""
    name_tokens = tuple(tokenize(document.bare_name))
    group_tokens: tuple[str, ...] = ()
    if document.group and document.group != ToolDocument.OTHER_GROUP:
        group_tokens = tuple(tokenize(document.group))
        if set(group_tokens) <= set(name_tokens):
            group_tokens = ()
    parameters: list[str] = []
    for parameter in document.parameter_names:
        parameters.extend(tokenize(parameter))
    described: list[str] = []
    for text in document.parameter_descriptions:
        described.extend(tokenize(text))
    return (
        name_tokens,
        group_tokens,
        tuple(tokenize(document.description)),
        tuple(parameters),
        tuple(described),
    )


@lru_cache(maxsize=4096)
def extra_document_fields(document: ToolDocument) -> tuple[tuple[str, ...], ...]:
    """:func:`document_fields` of an extra candidate (a connector hit): the same ones come
    back search after search, and each search reads them more than once."""
    return document_fields(document)


def document_tokens(document: ToolDocument) -> list[str]:
    """Every token of ``document``, field after field, repeats kept (unweighted)."""
    return [token for field in document_fields(document) for token in field]

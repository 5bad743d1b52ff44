"""A JSON array read one item at a time: a catalog of 330,000 tools is never held parsed whole."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["parsed_entries"]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def parsed_entries(text: str) -> Iterator[Any] | Any:
    """The entries of the catalog ``text``: when it is a JSON array, an iterator that parses
    them one at a time, so that only the entry being read is held parsed (330,000 tools with
    real input schemas took 2 GB parsed whole); anything else parsed whole, for the caller to
    refuse. Raises :class:`json.JSONDecodeError` where :func:`json.loads` would (the
    iterator, when it comes to the error)."""
    at = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("[", at):
        return json.loads(text)
    return _array_items(text, at + 1)


def _array_items(text: str, at: int) -> Iterator[Any]:
    skip = _WHITESPACE.match
    at = skip(text, at).end()  # type: ignore[union-attr]
    if text.startswith("]", at):
        end = at + 1
    else:
        while True:
            item, at = _DECODER.raw_decode(text, at)
            yield item
            at = skip(text, at).end()  # type: ignore[union-attr]
            if text.startswith(",", at):
                at = skip(text, at + 1).end()  # type: ignore[union-attr]
                continue
            if text.startswith("]", at):
                end = at + 1
                break
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
    end = skip(text, end).end()  # type: ignore[union-attr]
    if end != len(text):  # where json.loads says the extra data begins
        raise json.JSONDecodeError("Extra data", text, end)

"""The plugin's settings, ``plugins.entries.hybrid`` in ``config.yaml``: typed, checked by the
host (``PluginContext.settings_as``), which names the key, its line and what was expected."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Interval

__all__ = ["SETTINGS_KEY", "HybridSettings"]

SETTINGS_KEY = "plugins.entries.hybrid"


def _name(value: Any) -> Any:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"expected a non-empty name, got {value!r}")


def _folder(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return str(Path(value).expanduser())
    raise ValueError(f"expected a folder, got {value!r}")


Weight = Annotated[float, Interval(ge=0, le=1)]
Cosine = Annotated[float, Interval(ge=-1, le=1)]


@dataclass(frozen=True)
class HybridSettings:
    """What ``plugins.entries.hybrid`` may set; the defaults are the measured choices."""

    lexical_backend: Annotated[str, _name] = "bm25"
    """The search backend whose ranking is fused with the dense one."""
    dense_weight: Weight = 0.4
    """The weight of the dense side in the blend, 0..1 (0: lexical only, 1: dense only)."""
    dense_weight_unmatched: Weight = 0.6
    """The dense side's weight instead for a query with a word that no tool holds (the lexical
    side has nothing to match it with, so the model decides more); equal to ``dense_weight``
    to weigh every query alike."""
    keyword_max_words: Annotated[int, Interval(ge=0, le=1000)] = 10
    """A query of at most this many words is a keyword query: it is matched against each
    tool's summary (its name and the first sentence of its description, as
    :func:`~hermes_search_hybrid.text.summary_text` cuts it) instead of its whole
    text, and weighs the dense side ``dense_weight_keyword``; 0 treats every query as a
    request."""
    dense_weight_keyword: Weight = 0.5
    """The dense side's weight for a keyword query (see ``keyword_max_words``), whether or not
    its words are in the tools."""
    candidates: Annotated[int, Interval(ge=1, le=1000)] = 50
    """How many of the lexical side's best hits, and of the most similar tools, are fused."""
    no_match_below: Cosine = 0.25
    """When no tool is at least this similar (cosine, -1..1) to a keyword query (see
    ``keyword_max_words``), the query gets no match, whatever the lexical side found; an exact
    tool-name query is exempt."""
    no_match_below_request: Cosine = 0.2
    """``no_match_below`` for a request (a query of more than ``keyword_max_words`` words, or a
    shorter one written as a sentence, with two English function words such as ``the``, ``my``,
    ``what``: :func:`~hermes_search_hybrid.text.reads_as_sentence`): a request's argument words
    (names, places, values) are in no tool's text, so it is less similar to its tool than a
    keyword query naming the same action."""
    min_similarity: Cosine = 0.1
    """A tool less similar than this (cosine, -1..1) to the query is not returned (the others
    are); an exact tool-name query is exempt."""
    absent_service_no_match: bool = True
    """No match for a query of two to eight words that reads ``<service> <action> <object>``
    for a service that no tool has (``hubspot add contact`` over a catalog without HubSpot;
    see :mod:`hermes_search_hybrid.absent`)."""
    model_dir: Annotated[str | None, _folder] = None
    """A folder holding the model's ``model.safetensors`` and ``tokenizer.json`` (default: the
    plugin's own ``model`` folder), ``~`` expanded; both must still be the upstream files."""

    @property
    def model_path(self) -> Path | None:
        """:attr:`model_dir` as a path."""
        return Path(self.model_dir) if self.model_dir is not None else None

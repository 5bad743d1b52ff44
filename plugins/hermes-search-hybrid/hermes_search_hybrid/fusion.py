"""Fusing the lexical ranking with the dense one: min-max normalized score blending.

Over one query's candidates (the lexical backend's best hits and the model's most similar
tools), each side's scores are scaled to 0..1 (best candidate 1, worst 0; a candidate the
lexical side did not return scores 0 there), and the fused score is

    dense_weight * similarity' + (1 - dense_weight) * lexical'

Measured against reciprocal rank fusion and against blending raw cosine similarities
(docs/tool-search.md): min-max blending was the best on both eval sets at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["blend", "scaled"]

Scores = npt.NDArray[np.float64]


def scaled(values: Scores) -> Scores:
    """``values`` scaled to 0..1 (min -> 0, max -> 1), ignoring NaN (which becomes 0); all
    equal values become 1."""
    result = np.zeros(values.shape, dtype=np.float64)
    present = ~np.isnan(values)
    if not present.any():
        return result
    low = float(np.min(values[present]))
    span = float(np.max(values[present])) - low
    result[present] = (values[present] - low) / span if span > 0 else 1.0
    return result


def blend(lexical: Scores, similarity: Scores, dense_weight: float) -> Scores:
    """The fused scores of candidates whose lexical scores are ``lexical`` (NaN: not returned
    by the lexical side) and whose cosine similarities to the query are ``similarity``."""
    return dense_weight * scaled(similarity) + (1.0 - dense_weight) * scaled(lexical)

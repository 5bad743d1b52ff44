"""The default Tool Search backend, ``bm25``, selected by ``tools.tool_search.backend``.

BM25F over an in-memory numpy inverted index (:mod:`.index`): five fields of each tool with
their own weights (:mod:`.fields`), Snowball-stemmed tokens and identifier splitting
(:mod:`.tokenize`), compounds, splits, a lexical equivalence table and unmatched words
(:mod:`.analysis`, :mod:`.equivalents`), the ``strict`` / ``lenient`` / ``off`` admission rules
and the exact-name bypass (:mod:`.admission`). The index is updated one server at a time as
tools come and go. It uses only the public ``hermes_core`` API, as any backend plugin would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core import PluginContext, SearchBackendSpec, hookimpl

if TYPE_CHECKING:
    from .index import BM25Index


def create_backend(context: PluginContext) -> BM25Index:
    """A new, empty BM25 index; the host builds it from the deferred catalog."""
    # Imported here so that loading the plugin (every `hermes` command) does not import numpy.
    from .index import BM25Index

    return BM25Index()


@hookimpl
def hermes_search_backends() -> Sequence[SearchBackendSpec]:
    """Register the ``bm25`` backend."""
    return [
        SearchBackendSpec(
            name="bm25",
            factory=create_backend,
            description="BM25F over a numpy index (fields, stemming, equivalents).",
        )
    ]

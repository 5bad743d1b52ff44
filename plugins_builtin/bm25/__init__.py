"""The default Tool Search backend, ``bm25``, selected by ``tools.tool_search.backend``.

BM25F over an in-memory numpy inverted index (:mod:`.index`): five fields of each tool with
their own weights (:mod:`.fields`), Snowball-stemmed tokens and identifier splitting
(:mod:`.tokenize`), compounds, splits, a lexical equivalence table and unmatched words
(:mod:`.analysis`, :mod:`.equivalents`), the ``strict`` / ``lenient`` / ``off`` admission rules
and the exact-name bypass (:mod:`.admission`). A query is ranked in one call of a C kernel
(:mod:`.kernel`, compiled at install time, with a numpy reference of the same rule). The index is
updated one server at a time as tools come and go, and saved in the cache directory, where the
next start finds it (:mod:`.store`). It uses only the public ``hermes_core`` API, as any
backend plugin would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import PluginContext, SearchBackendSpec, hookimpl

if TYPE_CHECKING:
    from .index import BM25Index

CACHE_FOLDER = "bm25-index"
"""The folder of the cache directory the index files are kept in."""


def create_backend(context: PluginContext) -> BM25Index:
    """A new, empty BM25 index; the host builds it from the deferred catalog, from the index
    saved in the cache directory (``context.env.cache_dir``) when it holds this catalog's."""
    # Imported here so that loading the plugin (every `hermes` command) does not import numpy.
    from .index import BM25Index

    return BM25Index(cache_dir=context.env.cache_dir / CACHE_FOLDER)


@hookimpl(trylast=True)
def hermes_search_backends() -> Sequence[SearchBackendSpec]:
    """Register the ``bm25`` backend."""
    return [
        SearchBackendSpec(
            name="bm25",
            factory=create_backend,
            description="BM25F over a numpy index (fields, stemming, equivalents).",
        )
    ]

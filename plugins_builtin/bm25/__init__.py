"""The default Tool Search backend, ``bm25``, selected by ``tools.tool_search.backend``.

Okapi BM25 (k1 1.5, b 0.75) over an in-memory numpy inverted index: Snowball-stemmed tokens,
identifiers split at ``_ - . :``, camelCase and letter/digit boundaries, the ``strict`` /
``lenient`` / ``off`` admission rules and the exact-name bypass. The index is updated one server
at a time as tools come and go. It uses only the public ``hermes_core`` API, as any backend
plugin would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.hookspecs import hookimpl
from hermes_core.specs import PluginContext, SearchBackendSpec

if TYPE_CHECKING:
    from hermes_core.search.bm25 import BM25Index


def create_backend(context: PluginContext) -> BM25Index:
    """A new, empty BM25 index; the host builds it from the deferred catalog."""
    # Imported here so that loading the plugin (every `hermes` command) does not import numpy.
    from hermes_core.search.bm25 import BM25Index

    return BM25Index()


@hookimpl
def hermes_search_backends() -> Sequence[SearchBackendSpec]:
    """Register the ``bm25`` backend."""
    return [
        SearchBackendSpec(
            name="bm25",
            factory=create_backend,
            description="Okapi BM25 over a numpy index (stemming, identifier splitting).",
        )
    ]

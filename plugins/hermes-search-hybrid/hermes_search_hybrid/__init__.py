"""hermes-search-hybrid: the ``hybrid`` Tool Search backend for hermes-core.

It fuses the ranking of another search backend (``bm25`` by default) with a dense ranking by
the sentence-embedding model all-MiniLM-L6-v2, run by onnxruntime (no torch); the model's
upstream files ship inside this plugin's wheel: nothing is downloaded at run time. Enable and
select it::

    plugins:
      enabled: [hybrid]
      entries:
        hybrid:
          no_match_below: 0.25   # optional; see README.md for every setting
    tools:
      tool_search:
        backend: hybrid

Importing this package is cheap (``hermes plugins list`` imports enabled plugins), and so is
the factory (``hermes plugins list`` runs it when ``hybrid`` is selected, to show a failure as
the plugin's error): onnxruntime and the model are loaded on the backend's first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.plugin import PluginContext, SearchBackendSpec, hookimpl

if TYPE_CHECKING:
    from hermes_search_hybrid.backend import HybridBackend
    from hermes_search_hybrid.deferred import DeferredBackend

__all__ = ["BACKEND_NAME", "create_backend", "hermes_search_backends"]
__version__ = "0.1.0"

BACKEND_NAME = "hybrid"
CACHE_FOLDER = "hybrid"


def create_backend(context: PluginContext) -> DeferredBackend:
    """A new, empty hybrid backend. Checked now: the settings, the lexical backend (built by
    the host) and the model's weights and tokenizer against the upstream sha256; made on first
    use: onnxruntime, the model and the embedding cache under the hermes cache directory."""
    from hermes_search_hybrid.deferred import DeferredBackend
    from hermes_search_hybrid.settings import HybridSettings
    from hermes_search_hybrid.weights import checked_model_dir

    settings = context.settings_as(HybridSettings)
    cache = context.env.cache_dir / CACHE_FOLDER
    record = cache / "verified.json"
    lexical = context.search_backend(settings.lexical_backend)
    model_dir = checked_model_dir(settings.model_path, record)

    def make() -> HybridBackend:
        from hermes_search_hybrid.backend import HybridBackend
        from hermes_search_hybrid.model import load_encoder
        from hermes_search_hybrid.store import EmbeddingStore

        encoder = load_encoder(model_dir, record)
        store = EmbeddingStore(cache / f"embeddings-{encoder.key}.npz", encoder.dimension)
        return HybridBackend(lexical, encoder, store, settings)

    return DeferredBackend(make)


@hookimpl
def hermes_search_backends() -> Sequence[SearchBackendSpec]:
    """Register the ``hybrid`` backend."""
    return [
        SearchBackendSpec(
            name=BACKEND_NAME,
            factory=create_backend,
            description="bm25 fused with all-MiniLM-L6-v2 sentence embeddings (offline).",
        )
    ]

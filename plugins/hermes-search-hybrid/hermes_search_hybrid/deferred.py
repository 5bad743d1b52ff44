"""``DeferredBackend``: the hybrid backend made on first use.

The factory runs whenever the host builds the selected backend, ``hermes plugins list``
included (so a broken setting or a bad model file is listed as the plugin's error); loading
onnxruntime and the model, and reading the embedding cache, wait for the first build or
search.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.search import Admission, SearchHit, ToolDocument

if TYPE_CHECKING:
    from hermes_search_hybrid.backend import HybridBackend

__all__ = ["DeferredBackend"]


class DeferredBackend:
    """A :class:`~hermes_core.search.SearchBackend` that makes its :class:`HybridBackend` with
    ``make`` the first time it is used; other attributes (``lexical``, ``encoder``, the
    counters) are the made backend's."""

    def __init__(self, make: Callable[[], HybridBackend]) -> None:
        self._make = make
        self._made: HybridBackend | None = None

    @property
    def made(self) -> HybridBackend:
        """The hybrid backend, made now if it was not yet."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the whole index."""
        self.made.build(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Index more documents."""
        self.made.add(documents)

    def remove(self, names: Collection[str]) -> None:
        """Drop documents by name."""
        self.made.remove(names)

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        """The hybrid backend's hits."""
        return self.made.search(query, limit, admission, extra)

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """The hybrid backend's unmatched words."""
        return self.made.unmatched_words(query, hits, extra)

    def __len__(self) -> int:
        return 0 if self._made is None else len(self._made)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made, name)

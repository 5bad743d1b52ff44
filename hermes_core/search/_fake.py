"""An in-memory search backend for tests: case-insensitive substring match, no ranking model.

It is the template for testing code that needs a :class:`~hermes_core.search._backend.SearchBackend`
without the BM25 index::

    backend = FakeSearchBackend()
    backend.build([ToolDocument("mcp__github__create_issue", "Create an issue", "github")])
    assert backend.search("issue", 5, "strict")[0].name == "mcp__github__create_issue"
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hermes_core.search._backend import Admission, SearchHit, ToolDocument

__all__ = ["FakeSearchBackend"]


class FakeSearchBackend:
    """Ranks documents by how many query words appear as substrings of their name, group,
    description and parameter names; ties keep insertion order. ``admission`` is recorded in
    :attr:`admissions` but otherwise ignored."""

    def __init__(self) -> None:
        self._documents: dict[str, ToolDocument] = {}
        self.admissions: list[Admission] = []

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Replace the index."""
        self._documents = {}
        self.add(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Append documents; a known name is replaced and moves to the end."""
        for document in documents:
            self._documents.pop(document.name, None)
            self._documents[document.name] = document

    def remove(self, names: Collection[str]) -> None:
        """Drop documents by name."""
        for name in names:
            self._documents.pop(name, None)

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        """Documents containing at least one query word, most words first."""
        self.admissions.append(admission)
        words = [word for word in query.lower().split() if word]
        scored: list[tuple[int, int, SearchHit]] = []
        candidates = [*self._documents.values(), *extra]
        for position, document in enumerate(candidates):
            text = self._text(document)
            matched = tuple(word for word in words if word in text)
            if matched:
                hit = SearchHit(document.name, float(len(matched)), matched)
                scored.append((-len(matched), position, hit))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in scored[: max(limit, 0)]]

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """Query words that no hit matched; with no hits, that are a substring of no
        document."""
        words = dict.fromkeys(word for word in query.lower().split() if word)
        if hits:
            return [word for word in words if not any(word in hit.matched_tokens for hit in hits)]
        texts = [self._text(document) for document in [*self._documents.values(), *extra]]
        return [word for word in words if not any(word in text for text in texts)]

    @staticmethod
    def _text(document: ToolDocument) -> str:
        return " ".join(
            [document.name, document.group, document.description, *document.parameter_names]
        ).lower()

    def __len__(self) -> int:
        return len(self._documents)

"""An example search backend plugin: ``keyword``, ranking tools by shared words.

Copy this folder into your plugins first, from the repository::

    cp -r examples/search_backend_plugin ~/.hermes/plugins/keyword-search

then enable it and select it in ``config.yaml``::

    plugins:
      enabled: [keyword-search]
      entries:
        keyword-search:
          min_word_length: 3
    tools:
      tool_search:
        backend: keyword

A backend is any object with ``build``, ``add``, ``remove``, ``search``, ``unmatched_words`` and
``__len__`` (the ``hermes_core.search.SearchBackend`` protocol). The host indexes deferred
tools into it group by group and asks it for at most ``limit`` hits per query, and for the query
words no tool contains.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from hermes_core.plugin import PluginContext, SearchBackendSpec, hookimpl
from hermes_core.search import Admission, SearchHit, ToolDocument

_WORDS = re.compile(r"[a-z0-9]+")


def ordered_words(text: str, min_length: int = 1) -> list[str]:
    """The lowercased words of ``text`` in order, each once (``_``, ``-`` and camelCase humps
    separate words)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).lower()
    return list(dict.fromkeys(w for w in _WORDS.findall(spaced) if len(w) >= min_length))


def words(text: str, min_length: int = 1) -> set[str]:
    """The lowercased words of ``text``, as a set."""
    return set(ordered_words(text, min_length))


class KeywordBackend:
    """Scores a tool by the number of distinct query words among its name, group, description
    and parameter names. ``strict`` admission requires every query word; ties keep the order in
    which tools were added."""

    def __init__(self, min_word_length: int = 1) -> None:
        self.min_word_length = min_word_length
        self._words: dict[str, frozenset[str]] = {}

    def _index(self, document: ToolDocument) -> frozenset[str]:
        text = " ".join(
            [document.name, document.group, document.description, *document.parameter_names]
        )
        return frozenset(words(text, self.min_word_length))

    def build(self, documents: Sequence[ToolDocument]) -> None:
        self._words = {}
        self.add(documents)

    def add(self, documents: Sequence[ToolDocument]) -> None:
        for document in documents:
            self._words.pop(document.name, None)
            self._words[document.name] = self._index(document)

    def remove(self, names: Collection[str]) -> None:
        for name in names:
            self._words.pop(name, None)

    def search(
        self,
        query: str,
        limit: int,
        admission: Admission,
        extra: Sequence[ToolDocument] = (),
    ) -> list[SearchHit]:
        wanted = words(query, self.min_word_length)
        if not wanted or limit <= 0:
            return []
        candidates = [*self._words.items()]
        candidates += [(document.name, self._index(document)) for document in extra]
        scored: list[tuple[int, int, SearchHit]] = []
        for position, (name, indexed) in enumerate(candidates):
            shared = wanted & indexed
            if not shared or (admission == "strict" and shared != wanted):
                continue
            hit = SearchHit(name, float(len(shared)), tuple(sorted(shared)))
            scored.append((-len(shared), position, hit))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in scored[:limit]]

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        wanted = ordered_words(query, self.min_word_length)
        if hits:
            found = set().union(*(hit.matched_tokens for hit in hits))
        else:
            found = set().union(*self._words.values(), *(self._index(d) for d in extra))
        return [word for word in wanted if word not in found]

    def __len__(self) -> int:
        return len(self._words)


def make_backend(context: PluginContext) -> KeywordBackend:
    """The factory the host calls with the configuration and this plugin's settings."""
    min_length = context.settings.get("min_word_length", 1)
    if not isinstance(min_length, int) or isinstance(min_length, bool) or min_length < 1:
        raise ValueError(
            "plugins.entries.keyword-search.min_word_length must be a positive integer, "
            f"not {min_length!r}"
        )
    return KeywordBackend(min_length)


@hookimpl
def hermes_search_backends() -> list[SearchBackendSpec]:
    """Register the ``keyword`` backend."""
    return [
        SearchBackendSpec(
            name="keyword",
            factory=make_backend,
            description="Ranks tools by how many query words they contain.",
        )
    ]

"""The rules every search backend follows, as checks a backend author runs against a plugin.

Each rule is a function named after it that takes ``make`` (a function returning a new, empty
backend) and raises :class:`AssertionError` saying what the backend did instead. They check
what the :class:`~hermes_core.search._backend.SearchBackend` protocol promises the host (and what
Tool Search relies on), with plain English tool documents any word-based backend can rank:

- ``build`` replaces the whole index, ``add`` indexes more, ``remove`` drops (unknown names are
  ignored), ``len`` counts the documents;
- names are unique: a re-added name replaces its document;
- ``search`` returns at most ``limit`` hits, best first, for every admission mode; ``extra``
  candidates are ranked in the same pass (``limit`` caps both) and are not kept;
- ties keep the order in which documents were added;
- ``unmatched_words`` are the query's words that no hit contains (with no hits, that no document
  or extra candidate contains), in query order, each once.

Run them with :func:`search_backend_conformance`, one test per rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hermes_core.search._backend import ADMISSION_MODES, SearchBackend, SearchHit, ToolDocument

MakeBackend = Callable[[], SearchBackend]
"""Returns a new, empty backend (each rule starts from one)."""


def _document(name: str, description: str, group: str = "conformance") -> ToolDocument:
    return ToolDocument(name, description, group)


CORPUS: tuple[ToolDocument, ...] = (
    _document("create_issue", "Create an issue in a repository.", "github"),
    _document("list_issues", "List the issues of a repository.", "github"),
    _document("send_message", "Send a chat message to a channel.", "slack"),
    _document("read_calendar", "Read the events of a calendar.", "calendar"),
    _document("get_weather", "Get the weather forecast for a city.", "weather"),
)
"""Five tools of four groups, each with words of its own."""


def _names(hits: Sequence[SearchHit]) -> list[str]:
    return [hit.name for hit in hits]


def _built(make: MakeBackend, documents: Sequence[ToolDocument] = CORPUS) -> SearchBackend:
    backend = make()
    backend.build(list(documents))
    return backend


def _search(
    backend: SearchBackend, query: str, limit: int = 5, extra: Sequence[ToolDocument] = ()
) -> list[str]:
    return _names(backend.search(query, limit, "off", list(extra)))


def a_new_backend_is_empty(make: MakeBackend) -> None:
    """A new backend holds no document and finds nothing."""
    backend = make()
    assert len(backend) == 0, f"a new backend has {len(backend)} documents"
    assert _search(backend, "weather") == [], "a new backend found something"


def build_indexes_every_document(make: MakeBackend) -> None:
    """After ``build``, ``len`` is the number of documents and each is found by its words."""
    backend = _built(make)
    assert len(backend) == len(CORPUS), f"len is {len(backend)} after building {len(CORPUS)}"
    found = _search(backend, "weather forecast")
    assert found[:1] == ["get_weather"], f"'weather forecast' found {found}"


def build_replaces_the_whole_index(make: MakeBackend) -> None:
    """A second ``build`` drops every document of the first."""
    backend = _built(make)
    backend.build([_document("translate_text", "Translate text into another language.")])
    assert len(backend) == 1, f"len is {len(backend)} after building one document"
    assert "get_weather" not in _search(backend, "weather forecast"), "an old document stayed"
    assert _search(backend, "translate") == ["translate_text"]


def add_indexes_more_documents_and_keeps_the_others(make: MakeBackend) -> None:
    """``add`` indexes more documents without dropping the ones indexed before."""
    backend = _built(make, CORPUS[:2])
    backend.add(list(CORPUS[2:]))
    assert len(backend) == len(CORPUS), f"len is {len(backend)} after adding to a build"
    assert "create_issue" in _search(backend, "issue"), "a built document was lost by add"
    assert "get_weather" in _search(backend, "weather"), "an added document is not found"


def a_re_added_name_replaces_its_document(make: MakeBackend) -> None:
    """Names are unique: adding a document whose name is indexed replaces the old one."""
    backend = _built(make, [*CORPUS, _document("item_0042", "Create an invoice for a customer.")])
    backend.add([_document("item_0042", "Translate text into another language.")])
    assert len(backend) == len(CORPUS) + 1, f"len is {len(backend)} after re-adding a name"
    assert "item_0042" not in _search(backend, "invoice customer"), "the old document stayed"
    assert _search(backend, "translate") == ["item_0042"], "the new document is not found"


def remove_drops_documents_and_ignores_unknown_names(make: MakeBackend) -> None:
    """``remove`` drops the documents named; names that are not indexed are ignored."""
    backend = _built(make)
    backend.remove(["get_weather", "no_such_tool"])
    assert len(backend) == len(CORPUS) - 1, f"len is {len(backend)} after removing one document"
    assert "get_weather" not in _search(backend, "weather forecast"), "a removed document stayed"
    backend.remove([])
    backend.remove(["no_such_tool"])
    assert len(backend) == len(CORPUS) - 1, "removing unknown names changed the index"


def search_returns_at_most_limit_hits_best_first(make: MakeBackend) -> None:
    """``search`` returns ``limit`` hits when more documents match, scored best first."""
    documents = [
        _document(f"job_{index:02d}", f"Schedule a backup job {index}.") for index in range(8)
    ]
    backend = _built(make, documents)
    for limit in (1, 3, 8):
        hits = backend.search("backup", limit, "off")
        assert len(hits) == limit, f"limit {limit} gave {len(hits)} hits of 8 matching documents"
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True), f"hits are not best first: {scores}"
    assert backend.search("backup", 20, "off")[0].name in {d.name for d in documents}


def every_admission_mode_is_accepted(make: MakeBackend) -> None:
    """``search`` answers for each admission mode, and ``off`` ranks every tool sharing a word."""
    backend = _built(make)
    for admission in ADMISSION_MODES:
        hits = backend.search("create issue", 5, admission)
        assert isinstance(hits, list), f"admission {admission!r} returned {type(hits).__name__}"
        assert all(isinstance(hit, SearchHit) for hit in hits), "a hit is not a SearchHit"
        assert len(hits) <= 5
    assert _search(backend, "create issue")[:1] == ["create_issue"]


def extra_candidates_are_ranked_in_the_same_pass_and_not_kept(make: MakeBackend) -> None:
    """``extra`` documents compete with the indexed ones under one ``limit`` and are forgotten
    after the search."""
    backend = _built(make)
    email = _document("connectors__mail__send_email", "Send an email to a person.", "mail")
    assert _search(backend, "email", extra=[email]) == [email.name], "an extra was not ranked"
    capped = backend.search("send", 1, "off", [email])
    assert len(capped) == 1, f"limit 1 with an extra candidate gave {len(capped)} hits"
    assert len(backend) == len(CORPUS), "an extra candidate was kept in the index"
    assert email.name not in _search(backend, "email"), "an extra candidate was kept"


def ties_keep_the_order_documents_were_added(make: MakeBackend) -> None:
    """Documents that score alike come in the order they were added (built, then added)."""
    same = "Report the status."
    backend = _built(make, [_document(name, same) for name in ("alpha_one", "beta_two")])
    backend.add([_document("gamma_six", same)])
    found = _search(backend, "status report")
    assert found == ["alpha_one", "beta_two", "gamma_six"], f"ties came as {found}"


def unmatched_words_are_the_query_words_no_hit_contains(make: MakeBackend) -> None:
    """``unmatched_words`` names the query's words that none of the hits contains, in query
    order, each once."""
    backend = _built(make)
    query = "weather zebra forecast quokka zebra"
    hits = backend.search(query, 5, "off")
    assert "get_weather" in _names(hits), f"{query!r} found {_names(hits)}"
    unmatched = list(backend.unmatched_words(query, hits))
    assert unmatched == ["zebra", "quokka"], f"unmatched words of {query!r}: {unmatched}"


def with_no_hits_unmatched_words_are_the_words_no_document_contains(make: MakeBackend) -> None:
    """With no hits, ``unmatched_words`` names the words no indexed document and no extra
    candidate contains."""
    backend = _built(make)
    unmatched = list(backend.unmatched_words("quokka weather", []))
    assert unmatched == ["quokka"], f"unmatched words without hits: {unmatched}"
    counter = _document("count_quokkas", "A quokka counter.")
    with_extra = list(backend.unmatched_words("quokka weather", [], [counter]))
    assert with_extra == [], f"a word of an extra candidate was unmatched: {with_extra}"


SEARCH_BACKEND_RULES: tuple[Callable[[MakeBackend], None], ...] = (
    a_new_backend_is_empty,
    build_indexes_every_document,
    build_replaces_the_whole_index,
    add_indexes_more_documents_and_keeps_the_others,
    a_re_added_name_replaces_its_document,
    remove_drops_documents_and_ignores_unknown_names,
    search_returns_at_most_limit_hits_best_first,
    every_admission_mode_is_accepted,
    extra_candidates_are_ranked_in_the_same_pass_and_not_kept,
    ties_keep_the_order_documents_were_added,
    unmatched_words_are_the_query_words_no_hit_contains,
    with_no_hits_unmatched_words_are_the_words_no_document_contains,
)
"""Every rule, in the order a reader meets them in the protocol."""


def search_backend_conformance(make: Callable[[], SearchBackend]) -> list[Any]:
    """One ``pytest.param`` per rule of :data:`SEARCH_BACKEND_RULES` (its id is the rule's
    name): a function of no arguments checking that rule against backends from ``make``, which
    returns a new, empty backend each time it is called::

        @pytest.mark.parametrize(
            "check", search_backend_conformance(lambda: make_search_backend("keyword", ...))
        )
        def test_keyword_backend_follows_the_protocol(check):
            check()
    """
    return [
        pytest.param(functools.partial(rule, make), id=rule.__name__.replace("_", "-"))
        for rule in SEARCH_BACKEND_RULES
    ]

"""The hybrid backend as a host builds it, with the real model: ranking, threshold, connector
candidates, admission, the embedding cache and its settings."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hybrid_fixtures import MISMATCH_QUERY, TOOLS, MakeBackend, names

from hermes_core import PluginError, RegistrationError
from hermes_core.search import ToolDocument


def test_query_sharing_no_word_with_a_tool_finds_it_by_meaning(make_backend: MakeBackend) -> None:
    backend = make_backend()
    backend.build(TOOLS)

    assert backend.lexical.search(MISMATCH_QUERY, 5, "off") == []
    assert names(backend.search(MISMATCH_QUERY, 5, "lenient"))[0] == "send_sms"


@pytest.mark.parametrize(
    "query",
    ["发送短信", "创建日历活动", "zeige die Dateien im Ordner", "crear un evento en el calendario"],
)
def test_a_query_in_another_language_is_answered_as_the_lexical_side_answers_it(
    make_backend: MakeBackend, query: str
) -> None:
    # The model reads English: its similarity to a Chinese or German request says nothing,
    # and its no-match threshold would drop what the lexicon's translation found.
    backend = make_backend()
    backend.build(TOOLS)

    lexical = names(backend.lexical.search(query, 5, "off"))

    assert lexical  # the lexicon's words: send, create, list
    assert names(backend.search(query, 5, "off")) == lexical


@pytest.mark.parametrize("query", ["buzz mom on her mobile Los Angeles", "buzz mom on her mobile"])
def test_an_english_query_naming_a_place_keeps_the_model(
    make_backend: MakeBackend, query: str
) -> None:
    # "los" is a common Spanish word, but the query is English: the model, not the lexical
    # side alone, must answer it.
    backend = make_backend()
    backend.build(TOOLS)

    assert backend.lexical.search(query, 5, "off") == []
    assert names(backend.search(query, 5, "off"))[:1] == ["send_sms"]


def test_query_similar_to_nothing_gets_no_match(make_backend: MakeBackend) -> None:
    backend = make_backend()
    backend.build(TOOLS)

    assert backend.search("qwxz blorf zzyzx", 5, "off") == []


def test_query_no_tool_is_similar_enough_to_gets_no_match_though_bm25_matches_a_word(
    make_backend: MakeBackend,
) -> None:
    query = "weather the storm of divorce"  # "weather" is in get_weather; the meaning is not
    backend = make_backend()
    backend.build(TOOLS)
    without = make_backend(no_match_below=-1, no_match_below_request=-1)
    without.build(TOOLS)

    assert names(backend.lexical.search(query, 5, "off")) == ["get_weather"]
    assert backend.search(query, 5, "off") == []
    assert names(without.search(query, 5, "off")) == ["get_weather"]


def test_a_request_is_held_to_its_own_no_match_threshold(make_backend: MakeBackend) -> None:
    # A request carries argument words (names, places, values) no tool text has, so it is
    # less similar to its tool than a keyword query naming the same action is.
    request = "please send a text message to my mother saying I will be late for dinner tonight"
    keyword = "send a text message"
    backend = make_backend(no_match_below=0.99, no_match_below_request=-1)
    backend.build(TOOLS)

    assert names(backend.search(request, 5, "off"))[0] == "send_sms"
    assert backend.search(keyword, 5, "off") == []


@pytest.mark.parametrize(
    "request_", ["text my mother that I will be late", "what is in the reports folder"]
)
def test_a_short_query_that_reads_as_a_sentence_is_held_to_the_request_threshold(
    make_backend: MakeBackend, request_: str
) -> None:
    # Ten words or fewer, yet a request: its argument words ("mother", "late") are in no tool,
    # so it is as far from its tool as a longer request is. A keyword query ("send a text
    # message": one such word) keeps the keyword threshold.
    backend = make_backend(no_match_below=0.99, no_match_below_request=-1)
    backend.build(TOOLS)

    assert names(backend.search(request_, 5, "off"))
    assert backend.search("send a text message", 5, "off") == []
    assert backend.search("list folder files", 5, "off") == []


def test_a_tool_below_min_similarity_is_dropped_and_the_others_returned(
    make_backend: MakeBackend,
) -> None:
    query = "slack post message"  # send_sms is similar to it, send_email less (0.34 and 0.23)
    backend = make_backend(min_similarity=0.3)
    backend.build(TOOLS)
    without = make_backend(min_similarity=-1)
    without.build(TOOLS)

    assert names(without.search(query, 2, "off")) == ["send_sms", "send_email"]
    assert names(backend.search(query, 2, "off")) == ["send_sms"]


def test_unmatched_names_a_service_no_tool_provides(make_backend: MakeBackend) -> None:
    backend = make_backend()
    backend.build(TOOLS)

    hits = backend.search("slack post message", 5, "off")
    assert "send_sms" in names(hits)  # tools that send messages still come back...
    assert backend.unmatched_words("slack post message", hits) == ["slack"]  # ...flagged


def test_without_the_thresholds_the_most_similar_tools_are_returned(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(no_match_below=-1, min_similarity=-1)
    backend.build(TOOLS)

    assert len(backend.search("qwxz blorf zzyzx", 5, "off")) == 5


def test_exact_tool_name_is_returned_first_whatever_the_threshold(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(no_match_below=0.999, min_similarity=0.999)
    backend.build(TOOLS)

    assert names(backend.search("get_weather", 5, "strict")) == ["get_weather"]


TWO_ASKS = (
    "I am flying to Lisbon next week and I need to pack the right clothes, so I want to know "
    "whether it will rain there. Also, please translate my hotel booking note into Portuguese."
)
"""A request of two sentences: the weather, then a translation."""


def test_tool_is_as_similar_to_a_request_as_to_its_most_similar_sentence(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(no_match_below=-1, min_similarity=-1)
    backend.build(TOOLS)
    second = TWO_ASKS.split(". ")[1]

    def similarity(query: str, tool: str) -> float:
        return next(t.similarity for t in backend.ranked(query, "off") if t.name == tool)

    assert similarity(TWO_ASKS, "translate_text") == pytest.approx(
        similarity(second, "translate_text"), abs=1e-5
    )
    assert similarity(TWO_ASKS, "get_weather") >= similarity(second, "get_weather")


def test_each_ask_of_a_request_of_two_sentences_clears_min_similarity(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend(min_similarity=0.2)
    backend.build(TOOLS)

    assert {"get_weather", "translate_text"} <= set(names(backend.search(TWO_ASKS, 5, "off")))


EMAIL_AND_TRANSLATION = tuple(t for t in TOOLS if t.name in ("send_email", "translate_text"))
"""bm25 finds only send_email for "convert this email into german"; the model prefers
translate_text."""


def test_query_with_a_word_no_tool_holds_is_ranked_more_by_meaning(
    make_backend: MakeBackend,
) -> None:
    query = "convert this email into german"  # "convert" and "german" are in no tool
    request = {"keyword_max_words": 0}  # the rule is a request's; a keyword query weighs 0.5
    backend = make_backend(**request)
    backend.build(EMAIL_AND_TRANSLATION)
    alike = make_backend(dense_weight_unmatched=0.4, **request)  # every request weighed 0.4
    alike.build(EMAIL_AND_TRANSLATION)

    assert backend.unmatched_words(query, []) == ["convert", "german"]
    assert names(backend.lexical.search(query, 5, "off")) == ["send_email"]
    assert names(alike.search(query, 2, "off")) == ["send_email", "translate_text"]
    assert names(backend.search(query, 2, "off")) == ["translate_text", "send_email"]


def test_query_whose_words_all_are_in_tools_keeps_the_dense_weight(
    make_backend: MakeBackend,
) -> None:
    query = "text files"  # both words are in tools; the model prefers another tool than bm25
    unfiltered = {"no_match_below": -1, "min_similarity": -1, "keyword_max_words": 0}
    lexical_only = make_backend(dense_weight=0.0, dense_weight_unmatched=1.0, **unfiltered)
    lexical_only.build(TOOLS)
    dense_only = make_backend(dense_weight=1.0, dense_weight_unmatched=1.0, **unfiltered)
    dense_only.build(TOOLS)

    best_lexical = max(lexical_only.lexical.search(query, 5, "off"), key=lambda hit: hit.score)

    assert lexical_only.unmatched_words(query, []) == []
    assert names(dense_only.search(query, 1, "off")) != [best_lexical.name]
    assert names(lexical_only.search(query, 1, "off")) == [best_lexical.name]


def test_connector_candidates_are_ranked_with_the_indexed_tools(
    make_backend: MakeBackend,
) -> None:
    backend = make_backend()
    backend.build([tool for tool in TOOLS if tool.name != "send_sms"])
    connector = ToolDocument("twilio_send_sms", "Send an SMS text message", "twilio", ("to",))

    hits = names(backend.search(MISMATCH_QUERY, 3, "lenient", [connector]))
    embedded = backend.documents_embedded
    again = names(backend.search(MISMATCH_QUERY, 3, "lenient", [connector]))

    assert hits[0] == "twilio_send_sms"
    assert again == hits
    assert backend.documents_embedded == embedded  # embedded on first sight, then cached
    assert "twilio_send_sms" not in names(backend.search(MISMATCH_QUERY, 3, "lenient"))


def test_admission_is_applied_to_the_lexical_ranking(make_backend: MakeBackend) -> None:
    backend = make_backend()
    backend.build(TOOLS)
    query = "create calendar event zorblat"  # "zorblat" is in no tool

    matched = {}
    for mode in ("strict", "off"):
        lexical = {hit.name: hit.matched_tokens for hit in backend.lexical.search(query, 50, mode)}
        hits = backend.search(query, 3, mode)
        assert hits[0].name == "create_event"
        assert [hit.matched_tokens for hit in hits] == [lexical.get(hit.name, ()) for hit in hits]
        matched[mode] = hits[0].matched_tokens

    assert matched["strict"] != matched["off"]


def test_second_start_embeds_no_tool_already_embedded(make_backend: MakeBackend) -> None:
    first = make_backend()
    first.build(TOOLS)
    ranking = names(first.search(MISMATCH_QUERY, 5, "off"))
    model_calls = first.encoder.texts_embedded

    second = make_backend()
    second.build(TOOLS)

    assert first.documents_embedded == len(TOOLS)
    assert second.documents_embedded == 0
    assert second.encoder.texts_embedded == model_calls  # the model embedded nothing
    assert names(second.search(MISMATCH_QUERY, 5, "off")) == ranking


def test_only_a_changed_tool_is_embedded_again(make_backend: MakeBackend) -> None:
    make_backend().build(TOOLS)
    changed = dataclasses.replace(TOOLS[0], description="Send a short text message to a phone")

    backend = make_backend()
    backend.build([changed, *TOOLS[1:]])
    backend.add([ToolDocument("play_song", "Play a song on the speaker", "music")])

    assert backend.documents_embedded == 2
    assert len(backend) == len(TOOLS) + 1


def test_damaged_embedding_cache_is_ignored_and_rebuilt(
    make_backend: MakeBackend, caplog: pytest.LogCaptureFixture
) -> None:
    make_backend().build(TOOLS)
    (cache_file,) = (Path(make_backend().store.path).parent).glob("embeddings-*.npz")
    cache_file.write_bytes(b"PK\x03\x04 this is not an archive")

    with caplog.at_level(logging.WARNING, logger="hermes_search_hybrid"):
        backend = make_backend()
    backend.build(TOOLS)

    assert "ignoring the damaged embedding cache" in caplog.text
    assert backend.documents_embedded == len(TOOLS)
    with np.load(cache_file) as data:
        # two vectors a tool: its whole text's and its summary's
        assert data["vectors"].shape == (2 * len(TOOLS), backend.encoder.dimension)
    rebuilt = make_backend()
    rebuilt.build(TOOLS)
    assert rebuilt.documents_embedded == 0


def test_removed_tools_are_never_returned(make_backend: MakeBackend) -> None:
    backend = make_backend()
    backend.build(TOOLS)
    backend.remove(["send_sms", "not-indexed"])

    assert "send_sms" not in names(backend.search(MISMATCH_QUERY, 5, "off"))
    assert len(backend) == len(TOOLS) - 1


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"min_similarity": "high"},
            "plugins.entries.hybrid.min_similarity: expected a number between -1 and 1, got 'high'",
        ),
        (
            {"no_match_below": 2},
            "plugins.entries.hybrid.no_match_below: expected a number between -1 and 1, got 2",
        ),
        (
            {"dense_weigth": 0.5},
            "plugins.entries.hybrid.dense_weigth: unknown key, did you mean 'dense_weight'? "
            "(known keys: absent_service_no_match, candidates, dense_weight, "
            "dense_weight_keyword, dense_weight_unmatched, keyword_max_words, lexical_backend, "
            "min_similarity, model_dir, no_match_below, no_match_below_request)",
        ),
        (
            {"keyword_max_words": -1},
            "plugins.entries.hybrid.keyword_max_words: expected a whole number between 0 and "
            "1000, got -1",
        ),
        (
            {"dense_weight_keyword": True},
            "plugins.entries.hybrid.dense_weight_keyword: expected a number between 0 and 1, "
            "got true",
        ),
        (
            # true and false, or the words the configuration reads as them (yes, on...)
            {"absent_service_no_match": "maybe"},
            "plugins.entries.hybrid.absent_service_no_match: expected true or false, got 'maybe'",
        ),
        (
            {"dense_weight_unmatched": 1.5},
            "plugins.entries.hybrid.dense_weight_unmatched: expected a number between 0 and 1, "
            "got 1.5",
        ),
        (
            {"candidates": 0},
            "plugins.entries.hybrid.candidates: expected a whole number between 1 and 1000, got 0",
        ),
    ],
)
def test_bad_setting_is_an_error_naming_it(
    make_backend: MakeBackend, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(PluginError) as caught:
        make_backend(**settings)

    assert caught.value.plugin == "hybrid"
    assert message in str(caught.value)


def test_hybrid_as_its_own_lexical_backend_is_an_error(make_backend: MakeBackend) -> None:
    with pytest.raises(RegistrationError, match=r"'hybrid' cannot be built from itself"):
        make_backend(lexical_backend="hybrid")


def test_unknown_lexical_backend_is_an_error_listing_the_valid_names(
    make_backend: MakeBackend,
) -> None:
    with pytest.raises(RegistrationError) as caught:
        make_backend(lexical_backend="bm52")

    assert "unknown search backend 'bm52' (asked for by search backend 'hybrid')" in str(
        caught.value
    )
    assert "valid names: bm25, hybrid" in str(caught.value)

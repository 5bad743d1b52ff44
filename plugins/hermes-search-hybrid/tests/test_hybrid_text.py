"""What the model embeds: a tool's text, and a query with its sentences."""

from __future__ import annotations

from hermes_search_hybrid.text import query_texts


def test_keyword_query_is_embedded_alone() -> None:
    assert query_texts("  github create issue ") == ["github create issue"]


def test_request_is_embedded_whole_and_sentence_by_sentence() -> None:
    request = "Find hotels in Rome. Also, what will the weather be?\nThanks!"

    assert query_texts(request) == [
        request,
        "Find hotels in Rome.",
        "Also, what will the weather be?",
    ]


def test_semicolons_and_line_breaks_end_a_sentence_and_one_word_ones_are_dropped() -> None:
    assert query_texts("list files; ok\n delete old logs") == [
        "list files; ok\n delete old logs",
        "list files",
        "delete old logs",
    ]

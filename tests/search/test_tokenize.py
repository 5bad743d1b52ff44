"""The tokenizer rules of the spec's Retrieval section."""

from __future__ import annotations

import pytest
from engine import BM25Index
from engine import tokenize as tokenizer

query_tokens, split_words, tokenize = (
    tokenizer.query_tokens,
    tokenizer.split_words,
    tokenizer.tokenize,
)


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("createIssue", ["create", "issue", "createissue"]),
        ("getV2Zones", ["get", "v2", "zones"]),
        ("zones2", ["zones", "2"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
        ("create_issue", ["create", "issue"]),
        ("list-pull.requests:all", ["list", "pull", "requests", "all"]),
        ("s3Bucket", ["s3", "bucket"]),
    ],
)
def test_camel_case_and_digit_split(identifier: str, words: list[str]) -> None:
    assert split_words(identifier) == words


def test_acronym_plurals_lose_their_s() -> None:
    assert split_words("URLs of the IDs and APIs") == ["url", "of", "the", "id", "and", "api"]


def test_mixed_case_product_names_are_kept_whole_as_well_as_split() -> None:
    assert split_words("YouTube") == ["you", "tube", "youtube"]
    assert split_words("IMDb") == ["im", "db", "imdb"]
    assert tokenize("youtube") == ["youtub"]
    assert "youtub" in tokenize("YouTube")


def test_only_ascii_letters_and_digits_make_tokens() -> None:
    assert split_words("état: 42°C, naïve!") == ["tat", "42", "c", "na", "ve"]


def test_tokens_are_lowercased_and_stemmed() -> None:
    assert tokenize("Issues ISSUE issue") == ["issu", "issu", "issu"]
    assert tokenize("Running runs") == ["run", "run"]


def test_query_drops_stopwords() -> None:
    assert query_tokens("Can you show me all of the open issues?") == ["show", "open", "issu"]


def test_query_of_only_stopwords_keeps_them() -> None:
    assert query_tokens("what about it") == ["what", "about", "it"]


def test_action_verbs_of_tool_names_are_kept_in_queries() -> None:
    from hermes_core.search.backend import ToolDocument

    assert query_tokens("get issue") == ["get", "issu"]
    assert query_tokens("find the user") == ["find", "user"]
    index = BM25Index(
        [
            ToolDocument(name, f"{name.replace('_', ' ').capitalize()}.", "github")
            for name in ("list_issues", "get_issue", "create_issue", "update_issue")
        ]
    )
    assert [hit.name for hit in index.search("get issue", 1, "strict")] == ["get_issue"]

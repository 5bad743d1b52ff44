"""The tokenizer rules of the spec's Retrieval section."""

from __future__ import annotations

import pytest

from hermes_core.search.tokenize import query_tokens, split_words, tokenize


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("createIssue", ["create", "issue"]),
        ("getV2Zones", ["get", "v2", "zones"]),
        ("zones2", ["zones", "2"]),
        ("HTTPServer", ["http", "server"]),
        ("create_issue", ["create", "issue"]),
        ("list-pull.requests:all", ["list", "pull", "requests", "all"]),
        ("s3Bucket", ["s3", "bucket"]),
    ],
)
def test_camel_case_and_digit_split(identifier: str, words: list[str]) -> None:
    assert split_words(identifier) == words


def test_only_ascii_letters_and_digits_make_tokens() -> None:
    assert split_words("état: 42°C, naïve!") == ["tat", "42", "c", "na", "ve"]


def test_tokens_are_lowercased_and_stemmed() -> None:
    assert tokenize("Issues ISSUE issue") == ["issu", "issu", "issu"]
    assert tokenize("Running runs") == ["run", "run"]


def test_query_drops_stopwords() -> None:
    assert query_tokens("Can you help me find the open issues?") == ["open", "issu"]


def test_query_of_only_stopwords_keeps_them() -> None:
    assert query_tokens("find") == ["find"]

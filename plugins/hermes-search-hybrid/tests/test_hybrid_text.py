"""What the model embeds: a tool's text, and a query with its sentences."""

from __future__ import annotations

from hermes_search_hybrid.text import (
    embedded_text,
    query_texts,
    reads_as_sentence,
    summary_text,
    word_count,
)

from hermes_core.search import ToolDocument


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


def test_summary_is_the_name_and_the_first_sentence_of_the_description() -> None:
    tool = ToolDocument(
        "github__activity_list-notifications",
        "List notifications for the authenticated user.  Sorted by most recently\n updated. "
        "Paginated: see the Link header.",
        "github",
        ("all", "participating"),
    )

    assert summary_text(tool) == (
        "github activity list notifications: List notifications for the authenticated user."
    )
    assert embedded_text(tool).endswith("see the Link header. (all, participating)")


def test_summary_of_an_mcp_tool_drops_the_prefix_and_one_without_description_is_its_name() -> None:
    described = ToolDocument("mcp__time__get_current_time", "Get the current time", "time")
    bare = ToolDocument("mcp__git__git_status", "", "git", ("repo_path",))

    assert summary_text(described) == "time get current time: Get the current time"
    assert summary_text(bare) == "git git status"


def test_words_of_a_query_are_counted_as_runs_of_letters_and_digits() -> None:
    assert word_count("delete github branch feature-x") == 5
    assert word_count("  ") == 0


def test_a_query_with_two_english_function_words_reads_as_a_sentence() -> None:
    assert reads_as_sentence("what files does PR 57 touch")
    assert reads_as_sentence("ping the team in #deploys that the release is out")
    assert reads_as_sentence("What's in my inbox?")
    assert reads_as_sentence("click the 'Sign in' button")  # a quote is no part of a word
    assert not reads_as_sentence("github create issue")
    assert not reads_as_sentence("book hotel room in lisbon")  # one is a keyword query's
    assert not reads_as_sentence("")

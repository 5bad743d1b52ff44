"""The request reading's shortcut (:func:`~plugins_builtin.bm25.phrasing.read_as_written`): a
request none of whose runs starts a rule is analyzed without reading it, and must be analyzed
as if it had been read, on requests made of every word the rules start at."""

from __future__ import annotations

import pytest
from bm25_modules import STRENGTH, analysis
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins_builtin.bm25 import idioms, phrasing
from plugins_builtin.bm25.tokenize import QUERY_STOPWORDS, stem

RULE_WORDS = sorted(
    {
        *(word for phrase in idioms.PHRASES for word in phrase),
        *(word for opening in idioms.QUESTIONS for word in opening),
        *idioms.MOVE_VERBS,
        *idioms.DERIVED,
        *idioms.UNIT_MEASURES,
        *phrasing.CLAUSE_MARKERS,
        *phrasing.CLAUSE_THAT_BEFORE,
        *phrasing.MEASURES,
        *phrasing.VERB_SENSES,
        *("remind", "me", "to", "about", "that", "until", "next", "friday", "tomorrow", "3pm"),
        *("what", "what's", "what\u2019s", "which", "who", "who's", "whos", "say", "says"),
        *("per", "page", "discussed", "fields", "members", "bring", "keep", "latest", "there"),
    }
)
"""Every word a rule of the request reading starts at or looks for after its start."""
FIRST_WORDS = [*{phrase[0] for phrase in idioms.PHRASES}, "how", "what", "who", "remind", "make"]
FIRST_WORDS += ["push", "open", "file", "saying", "that", "per", "say", "remember", "bring"]
"""The words most rules start at, drawn more often."""
PLAIN_WORDS = ["github", "issues", "labels", "create", "list", "deploy", "getuser", "settings"]
VALUES = ["'buy", "milk'", "\u201cShop\u201d", "'Get Content'", "api", "a@b.com", "www.x.io"]
VALUES += ["http://x.dev/a", "readme.md", "3.5", "o'clock"]


def _decorated(word: str, case: int, before: str, after: str) -> str:
    cased = (word, word.capitalize(), word.upper())[case]
    return before + cased + after


runs_of_requests = st.lists(
    st.builds(
        _decorated,
        st.sampled_from(FIRST_WORDS) | st.sampled_from(RULE_WORDS + PLAIN_WORDS + VALUES),
        st.integers(0, 2),
        st.sampled_from(["", "", "", "?", "(", "'", "\u201c"]),
        st.sampled_from(["", "", "", "?", ",", ".", "!", ")", "'", "\u2019s"]),
    ),
    max_size=6,
)


@pytest.mark.parametrize("strength", STRENGTH)
def test_a_request_read_as_written_is_what_the_reading_gives(strength: int) -> None:
    @settings(max_examples=400 * strength, deadline=None)
    @given(runs=runs_of_requests)
    def check(runs: list[str]) -> None:
        marks = [phrasing.run_marks(run) for run in runs]
        if phrasing.read_as_written(marks, [idioms.bare_word(run) for run in runs]):
            assert list(phrasing.request_words(runs, QUERY_STOPWORDS)) == runs
            assert idioms.question_words(runs) == []

    check()


KNOWN = frozenset({*map(stem, RULE_WORDS[::2] + PLAIN_WORDS), "list", "getus", "buymilk"})


def _analysis(query: str) -> tuple[object, ...]:
    found = analysis.analyze_query(query, KNOWN.__contains__)
    return found.tokens, found.expanded, found.unmatched, found.answers


@pytest.mark.parametrize("strength", STRENGTH)
def test_the_shortcut_analyzes_a_request_as_its_reading_does(
    strength: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    @settings(max_examples=300 * strength, deadline=None)
    @given(runs=runs_of_requests)
    def check(runs: list[str]) -> None:
        query = " ".join(runs)
        analysis._RUNS.clear()
        shortcut = _analysis(query)
        with monkeypatch.context() as patched:  # every run starts a rule: every request read
            patched.setattr(analysis, "run_marks", lambda run: phrasing.READS)
            analysis._RUNS.clear()
            read = _analysis(query)
        analysis._RUNS.clear()
        assert shortcut == read

    check()


@pytest.mark.parametrize(
    ("query", "as_written"),
    [
        ("github create issue", True),
        ("jira getuser get", True),
        ("set labels github", True),
        ("get rid of the labels", False),
        ("how many issues", False),
        ("open a PR", False),
        ("github 'Side project'", False),
        ("github issues saying broken", False),
        ("push the standup", False),
    ],
)
def test_a_keyword_query_is_read_as_written_and_a_request_is_not(
    query: str, as_written: bool
) -> None:
    runs = query.split()
    marks = [phrasing.run_marks(run) for run in runs]
    assert phrasing.read_as_written(marks, [idioms.bare_word(run) for run in runs]) is as_written

"""``session_search`` finds a word however the user remembers it: the words of an identifier
(``parse config`` finds ``parseConfig``; ``loadSettings`` finds ``load_settings``) and German's
``ß`` as ``ss`` (``Grösse`` finds ``Größe``), over real transcripts and a real SQLite FTS5 index,
one made by the version before too."""

from __future__ import annotations

import importlib
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.memory.bundled import bundled, conversation, search

WORDS = importlib.import_module(f"{bundled('session_search').__name__}.words")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    conversation(tmp_path, "camel", "the crash is in parseConfig when the file is empty")
    conversation(tmp_path, "acronym", "restart the HTTPServer after the upgrade")
    conversation(tmp_path, "snake", "call load_settings before anything else")
    conversation(tmp_path, "german", "die Größe der Datei ist falsch")
    conversation(tmp_path, "street", "wir treffen uns in der Hauptstraße")
    conversation(tmp_path, "swiss", "die Strasse ist gesperrt")
    conversation(tmp_path, "other", "the staging database listens on port 6543")
    return tmp_path


@pytest.mark.parametrize(
    ("query", "session", "snippet"),
    [
        ("parse config", "camel", "the crash is in [parseConfig] when the file is empty"),
        ("config", "camel", "the crash is in parse[Config] when the file is empty"),
        ("http server", "acronym", "restart the [HTTPServer] after the upgrade"),
    ],
)
def test_the_words_of_a_camel_case_identifier_find_it(
    home: Path, query: str, session: str, snippet: str
) -> None:
    hits = search(home, query)
    assert [hit.session for hit in hits] == [session]
    assert hits[0].snippet == snippet


@pytest.mark.parametrize(
    ("query", "session"),
    [
        ("parseConfig", "camel"),
        ("parse_config", "camel"),
        ("load settings", "snake"),
        ("load_settings", "snake"),
        ("loadSettings", "snake"),
    ],
)
def test_an_identifier_is_found_as_written_and_in_the_other_case_style(
    home: Path, query: str, session: str
) -> None:
    assert [hit.session for hit in search(home, query)] == [session]


@pytest.mark.parametrize(
    ("query", "sessions"),
    [
        ("Grösse", ["german"]),
        ("grosse", ["german"]),
        ("Größe", ["german"]),
        ("hauptstrasse", ["street"]),
        ("Hauptstraße", ["street"]),
        ("Straße", ["swiss"]),
        ("strasse", ["swiss"]),
    ],
)
def test_sharp_s_and_ss_find_each_other(home: Path, query: str, sessions: list[str]) -> None:
    assert [hit.session for hit in search(home, query)] == sessions


def test_the_snippet_marks_the_word_as_the_message_spells_it(home: Path) -> None:
    assert [hit.snippet for hit in search(home, "Grösse")] == ["die [Größe] der Datei ist falsch"]
    assert [hit.snippet for hit in search(home, "Straße")] == ["die [Strasse] ist gesperrt"]


def test_an_index_made_before_words_were_split_is_made_again_and_finds_them(
    tmp_path: Path,
) -> None:
    conversation(tmp_path, "camel", "the crash is in parseConfig")
    path = tmp_path / "sessions" / "camel.jsonl"
    # The version before's index (user_version 2): the identifier one token, no ß folded.
    with sqlite3.connect(tmp_path / "session_search.db") as connection:
        connection.executescript(
            "CREATE TABLE files (session TEXT PRIMARY KEY, offset INTEGER NOT NULL, "
            "inode INTEGER NOT NULL, started REAL, model TEXT, parent TEXT, "
            "messages INTEGER NOT NULL DEFAULT 0);"
            "CREATE VIRTUAL TABLE messages USING fts5(content, session UNINDEXED, "
            "role UNINDEXED, time UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2');"
            "PRAGMA user_version = 2;"
        )
        connection.execute(
            "INSERT INTO files VALUES ('camel', ?, ?, 1.0, 'fake-1', NULL, 1)",
            (path.stat().st_size, os.stat(path).st_ino),
        )
        connection.execute(
            "INSERT INTO messages VALUES ('the crash is in parseConfig', 'camel', 'user', 1.0)"
        )
    connection.close()
    hits = search(tmp_path, "parse config")
    assert [hit.session for hit in hits] == ["camel"]
    assert hits[0].messages == 1
    assert hits[0].snippet == "the crash is in [parseConfig]"


@given(st.text(alphabet="aZzAbCßÀÖØÞàöÿ×÷ 1_-.", max_size=40))
def test_the_index_cuts_text_at_each_case_seam_and_nowhere_else(text: str) -> None:
    # The index finds the seams by the letter after them (a pattern much faster to search):
    # the text it holds is cut exactly where the seam rule, a lookbehind at every character, says.
    assert WORDS.indexed_text(text) == WORDS._CASE_SEAM.sub(WORDS._APART, text)


def test_a_run_of_capitals_is_cut_before_its_last_one_and_after_a_small_letter() -> None:
    apart = WORDS._APART
    assert WORDS.indexed_text("aHTTPServerÖlß") == f"a{apart}HTTP{apart}Server{apart}Ölß"
    assert WORDS.indexed_text("parseConfig ABC xYZ") == f"parse{apart}Config ABC x{apart}YZ"

"""``session_search`` in scripts written without spaces (Chinese, Japanese, Korean particles,
Thai): a word a user remembers finds its conversation, over real transcripts and a real SQLite
FTS5 index, one made by an earlier version too."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.memory.bundled import conversation, search


@pytest.mark.parametrize(
    ("query", "session", "snippet"),
    [
        ("东京", "zh", "我们的数据库在[东京]服务器上"),
        ("数据库", "zh", "我们的[数据库]在东京服务器上"),
        ("デプロイ", "ja", "本番への[デプロイ]は金曜日に止める"),
        ("데이터베이스", "ko", "[데이터베이스]를 백업했습니다"),
        ("ฐานข้อมูล", "th", "[ฐานข้อมูล]อยู่ที่โตเกียว"),
        ("服务器 deploy", "zh", "我们的数据库在东京[服务器]上"),
    ],
)
def test_a_word_of_an_unspaced_script_finds_its_conversation(
    tmp_path: Path, query: str, session: str, snippet: str
) -> None:
    conversation(tmp_path, "zh", "我们的数据库在东京服务器上")
    conversation(tmp_path, "ja", "本番へのデプロイは金曜日に止める")
    conversation(tmp_path, "ko", "데이터베이스를 백업했습니다")
    conversation(tmp_path, "th", "ฐานข้อมูลอยู่ที่โตเกียว")
    conversation(tmp_path, "en", "the staging database listens on port 6543")
    hits = search(tmp_path, query)
    assert [hit.session for hit in hits][:1] == [session]
    assert hits[0].snippet == snippet


def test_an_index_made_by_the_earlier_version_is_made_again_and_finds_the_word(
    tmp_path: Path,
) -> None:
    conversation(tmp_path, "zh", "我们的数据库在东京服务器上")
    path = tmp_path / "sessions" / "zh.jsonl"
    # The earlier version's index: the whole transcript read, the unspaced text one token.
    with sqlite3.connect(tmp_path / "session_search.db") as connection:
        connection.executescript(
            "CREATE TABLE files (session TEXT PRIMARY KEY, offset INTEGER NOT NULL, "
            "inode INTEGER NOT NULL, started REAL, model TEXT, parent TEXT, "
            "messages INTEGER NOT NULL DEFAULT 0);"
            "CREATE VIRTUAL TABLE messages USING fts5(content, session UNINDEXED, "
            "role UNINDEXED, time UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2');"
        )
        connection.execute(
            "INSERT INTO files VALUES ('zh', ?, ?, 1.0, 'fake-1', NULL, 1)",
            (path.stat().st_size, os.stat(path).st_ino),
        )
        connection.execute(
            "INSERT INTO messages VALUES ('我们的数据库在东京服务器上', 'zh', 'user', 1.0)"
        )
    connection.close()
    hits = search(tmp_path, "东京")
    assert [hit.session for hit in hits] == ["zh"]
    assert hits[0].messages == 1

"""``session_search`` forgives a misspelled word: a word no conversation holds is searched as the
closest word the index holds, and the answer says so; over real transcripts and a real SQLite
FTS5 index."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Config, Environment, Session
from tests.memory.bundled import bundled, conversation
from tests.memory.session_corpus import write_corpus

PLUGIN = bundled("session_search")
INDEX = importlib.import_module(f"{PLUGIN.__name__}.index")


def found(home: Path, query: str) -> Any:
    index = INDEX.SessionIndex(home / "session_search.db", home / "sessions")
    try:
        index.update()
        return index.find(query, 5)
    finally:
        index.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("home")
    return home, write_corpus(home / "sessions", 1000)


@pytest.mark.parametrize(
    ("name", "typed", "meant", "corrected"),
    [
        (
            "pg-upgrade",
            "postgress upgarde",
            "postgres upgrade",
            {"postgress": "postgres", "upgarde": "upgrade"},
        ),
        (
            "k8s-oom",
            "kuberentes memroy",
            "kubernetes memory",
            {"kuberentes": "kubernetes", "memroy": "memory"},
        ),
        ("terraform-state", "terrafrom unlok", "terraform unlock", None),
        ("rust-lifetimes", "borow chekcer tokeniser", "borrow checker tokenizer", None),
    ],
)
def test_a_misspelled_query_finds_what_the_spelled_one_finds_among_1000(
    corpus: tuple[Path, dict[str, str]],
    name: str,
    typed: str,
    meant: str,
    corrected: dict[str, str] | None,
) -> None:
    home, ids = corpus
    forgiven = found(home, typed)
    spelled = found(home, meant)
    assert spelled.corrected == {}
    assert [hit.session for hit in forgiven.hits] == [hit.session for hit in spelled.hits]
    assert forgiven.hits[0].session == ids[name]
    assert set(forgiven.corrected) == set(typed.split())
    if corrected is not None:
        assert forgiven.corrected == corrected


def test_a_word_that_matched_is_never_corrected_and_keeps_its_weight(
    corpus: tuple[Path, dict[str, str]],
) -> None:
    home, ids = corpus
    forgiven = found(home, "postgres upgarde")
    assert forgiven.corrected == {"upgarde": "upgrade"}
    spelled = found(home, "postgres upgrade")
    assert [hit.score for hit in forgiven.hits] == [hit.score for hit in spelled.hits]
    assert forgiven.hits[0].session == ids["pg-upgrade"]


def test_a_stemmed_word_is_corrected_to_a_word_not_to_its_stem(tmp_path: Path) -> None:
    conversation(tmp_path, "auth", "We moved the authentication to OAuth device codes")
    conversation(tmp_path, "deploy", "The deployment of the website waits for the review")
    conversation(tmp_path, "other", "the parser crashes on empty input")
    conversation(tmp_path, "tls", "The certificate expired; the locks live in a DynamoDB table")
    assert found(tmp_path, "authentification").corrected == {"authentification": "authentication"}
    assert [hit.session for hit in found(tmp_path, "authentification").hits] == ["auth"]
    deploy = found(tmp_path, "deploymnet")
    assert deploy.corrected == {"deploymnet": "deployment"}
    assert [hit.session for hit in deploy.hits] == ["deploy"]
    assert deploy.hits[0].snippet == "The [deployment] of the website waits for the review"
    # Searched as the messages write it: not a spelling of the stem (``certif``, ``dynamo``).
    assert found(tmp_path, "certfiicate").corrected == {"certfiicate": "certificate"}
    assert found(tmp_path, "dynamodb").corrected == {"dynamodb": "dynamo"}


def test_the_frequent_word_wins_among_equally_close_ones_and_the_closer_beats_it(
    tmp_path: Path,
) -> None:
    for number in range(3):
        conversation(tmp_path, f"canal{number}", f"the canal lock number {number}")
    conversation(tmp_path, "canon", "the canon camera")
    assert found(tmp_path, "canan").corrected == {"canan": "canal"}
    assert found(tmp_path, "canom").corrected == {"canom": "canon"}
    assert [hit.session for hit in found(tmp_path, "canom").hits] == ["canon"]


@pytest.mark.parametrize(
    ("query", "corrected"),
    [
        ("cahe", {"cahe": "cache"}),  # four letters: one edit
        ("cxhe", {}),  # four letters, two edits: not corrected
        ("redsi", {"redsi": "redis"}),  # five letters: a transposition is one edit
        ("rexqz", {}),  # five letters, three edits
        ("reoix", {}),  # five letters, two edits: one at most up to five (Elasticsearch's AUTO)
        ("rd", {}),  # two letters: never
        ("aws", {}),  # three letters, most often an acronym one edit from a word (was): never
        ("rest", {}),  # spelled res (term re, one edit) but written re: two edits, not corrected
        ("databases" * 4, {}),  # past 30 letters: no word misspelled
        ("数据车", {}),  # an unspaced script: its characters are words, not spellings
        ("datbsae", {"datbsae": "database"}),  # six letters and more: two edits
    ],
)
def test_how_far_a_word_may_be_corrected_depends_on_its_length(
    tmp_path: Path, query: str, corrected: dict[str, str]
) -> None:
    conversation(tmp_path, "redis", "the redis cache of the staging database")
    conversation(tmp_path, "zh", "我们的数据库在东京服务器上")
    conversation(tmp_path, "react", "The React dashboard re-renders as it was told, the app")
    assert found(tmp_path, query).corrected == corrected


def test_the_answer_says_which_word_it_searched_instead(tmp_path: Path) -> None:
    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "pg", "Upgrade our Postgres cluster with pg_upgrade")
    conversation(env.home, "web", "Deploy the website on Friday")
    (tool,) = PLUGIN.hermes_tools(Config(), env)
    asking = Session(cwd=tmp_path)

    result = anyio.run(tool.handler, asking, "postgress cluster zzqxv")
    assert result.text_content.startswith(
        "No conversation holds 'postgress'; searched 'postgres'. "
        "No conversation holds 'zzqxv', nor a word close to it.\n1. session pg ("
    )
    assert result.structured["corrected"] == {"postgress": "postgres"}
    assert [hit["session"] for hit in result.structured["sessions"]] == ["pg"]

    plain = anyio.run(tool.handler, asking, "postgres cluster")
    assert plain.text_content.startswith("1. session pg (")
    assert plain.structured["corrected"] == {}

    nothing = anyio.run(tool.handler, asking, "zzqxv")
    assert nothing.text_content == "No past session matches 'zzqxv'."


def test_a_word_of_a_deleted_conversation_is_never_offered(tmp_path: Path) -> None:
    conversation(tmp_path, "gone", "the kubernetes cluster of the old employer")
    conversation(tmp_path, "kept", "the staging database listens on port 6543")
    assert found(tmp_path, "kuberentes").corrected == {"kuberentes": "kubernetes"}
    (tmp_path / "sessions" / "gone.jsonl").unlink()

    forgiven = found(tmp_path, "kuberentes")

    assert forgiven.corrected == {}
    assert forgiven.hits == []
